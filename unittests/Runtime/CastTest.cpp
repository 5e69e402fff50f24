//===- CastTest.cpp - quantize / dequantize / amax through the C ABI ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The casts must be the numerics core's bit for bit (FP8.h is the single
// definition; the runtime may only call it), so every f16 and bf16 input
// pattern and every FP8 code is pushed through the C ABI and compared with
// numerics::quantize / dequantize. bf16, which the core does not cover yet,
// is checked against an independent nearest-even search.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace msamp_rt_test;
namespace numerics = msamp::numerics;
using numerics::Format;

namespace {

class CastTest : public RuntimeTest {};

const float kScales[] = {1.0f, 0.125f, 32.0f, 3.0f, 1.0f / 3.0f, 0x1p-20f};

struct OutFormat {
  int32_t dtype;
  Format format;
};
const OutFormat kOutFormats[] = {{MSAMP_RT_F8E4M3FN, Format::E4M3},
                                 {MSAMP_RT_F8E5M2, Format::E5M2},
                                 {MSAMP_RT_F16, Format::F16}};

/// Runs msamp_rt_quantize on `in` (raw elements of `inDtype`) and returns
/// the codes, widened to 16 bits.
template <typename In>
std::vector<uint16_t> runQuantize(std::vector<In> in, int32_t inDtype,
                                  float scaleValue, const OutFormat &out) {
  const int64_t n = static_cast<int64_t>(in.size());
  Tensor<In> input({n}, std::move(in));
  auto scale = scalar(scaleValue);
  if (out.dtype == MSAMP_RT_F16) {
    Tensor<uint16_t> output({n});
    _mlir_ciface_msamp_rt_quantize(input, scale, output, inDtype, out.dtype);
    return output.data;
  }
  Tensor<uint8_t> output({n});
  _mlir_ciface_msamp_rt_quantize(input, scale, output, inDtype, out.dtype);
  return std::vector<uint16_t>(output.data.begin(), output.data.end());
}

std::vector<uint16_t> allPatterns16() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    v[i] = static_cast<uint16_t>(i);
  return v;
}

TEST_F(CastTest, QuantizeEveryF16InputMatchesCore) {
  const std::vector<uint16_t> patterns = allPatterns16();
  for (const OutFormat &out : kOutFormats) {
    for (float scale : kScales) {
      std::vector<uint16_t> got =
          runQuantize(patterns, MSAMP_RT_F16, scale, out);
      expectNoError();
      for (uint32_t i = 0; i < 65536; ++i) {
        const uint16_t want = numerics::quantize(
            out.format, numerics::decodeF16(static_cast<uint16_t>(i)), scale);
        ASSERT_EQ(got[i], want)
            << "f16 input 0x" << std::hex << i << " out dtype " << out.dtype
            << " scale " << scale;
      }
    }
  }
}

TEST_F(CastTest, QuantizeF32InputsMatchCore) {
  // Every f16 value as an f32, plus f32-only values: subnormals, values
  // around the FP8 saturation and rounding boundaries, infinities, NaNs.
  std::vector<float> values;
  for (uint32_t i = 0; i < 65536; ++i)
    values.push_back(numerics::decodeF16(static_cast<uint16_t>(i)));
  const float extra[] = {0x1p-149f,
                         -0x1p-130f,
                         std::nextafter(448.0f, 0.0f),
                         464.0f,
                         std::nextafter(464.0f, 1e9f),
                         61440.0f,
                         1e30f,
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN(),
                         -std::numeric_limits<float>::quiet_NaN(),
                         0x1.000002p-7f};
  values.insert(values.end(), std::begin(extra), std::end(extra));
  for (const OutFormat &out : kOutFormats) {
    for (float scale : kScales) {
      std::vector<uint16_t> got = runQuantize(values, MSAMP_RT_F32, scale, out);
      expectNoError();
      for (size_t i = 0; i < values.size(); ++i)
        ASSERT_EQ(got[i], numerics::quantize(out.format, values[i], scale))
            << "f32 input " << values[i] << " out dtype " << out.dtype
            << " scale " << scale;
    }
  }
}

TEST_F(CastTest, QuantizeF32BitPatternsToF16MatchesCore) {
  // f16 stores are vectorized (F16C, CpuF16.h) where the CPU has them; this
  // sweeps f32 bit patterns across every exponent, sign and NaN payload, plus
  // every halfway point between two f16 values of one binade (ties to even)
  // and the overflow boundary, at several scales. ctest runs it a second
  // time with MSAMP_RT_DISABLE_F16C=1 (the portable path).
  std::vector<float> values;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093)
    values.push_back(floatOf(static_cast<uint32_t>(bits)));
  for (uint32_t m = 0; m < 1024; ++m) {
    // Halfway between f16 (1 + m/1024) * 2^k and its successor, k = 0
    // (normal) and k = -24 (between subnormals), and just above.
    const float half = (1.0f + (m + 0.5f) / 1024.0f);
    values.push_back(half);
    values.push_back(-std::ldexp(half, -15));
    values.push_back(std::ldexp(static_cast<float>(m) + 0.5f, -24));
    values.push_back(std::nextafter(half, 2.0f));
  }
  const float extra[] = {65504.0f,
                         65519.99f,
                         65520.0f,
                         -65520.0f,
                         floatOf(0x7F800001u),
                         floatOf(0xFFC12345u),
                         floatOf(0x7FBFFFFFu)};
  values.insert(values.end(), std::begin(extra), std::end(extra));
  const OutFormat f16{MSAMP_RT_F16, Format::F16};
  for (float scale : kScales) {
    std::vector<uint16_t> got = runQuantize(values, MSAMP_RT_F32, scale, f16);
    expectNoError();
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(got[i], numerics::quantize(Format::F16, values[i], scale))
          << "f32 bits 0x" << std::hex << bitsOf(values[i]) << " scale "
          << scale;
  }
}

TEST_F(CastTest, QuantizeEveryBF16InputMatchesCore) {
  const std::vector<uint16_t> patterns = allPatterns16();
  for (const OutFormat &out : kOutFormats) {
    for (float scale : {1.0f, 0.125f, 3.0f}) {
      std::vector<uint16_t> got =
          runQuantize(patterns, MSAMP_RT_BF16, scale, out);
      expectNoError();
      for (uint32_t i = 0; i < 65536; ++i) {
        // bf16 is the top half of an f32.
        const float x = floatOf(i << 16);
        ASSERT_EQ(got[i], numerics::quantize(out.format, x, scale))
            << "bf16 input 0x" << std::hex << i;
      }
    }
  }
}

/// Independent f32 -> bf16 round to nearest even: compare the distances to
/// the two neighbouring bf16 values in double.
uint16_t referenceBF16(float x) {
  const uint32_t bits = bitsOf(x);
  if (std::isinf(x) || (bits & 0xFFFFu) == 0)
    return static_cast<uint16_t>(bits >> 16);
  const uint32_t lo = bits & 0xFFFF0000u;
  const uint32_t hi = lo + 0x10000u;
  const double mag = std::fabs(static_cast<double>(x));
  const double loMag = std::fabs(static_cast<double>(floatOf(lo)));
  // Stepping past the largest finite bf16 reaches Inf; for rounding it sits
  // where the next binade would start, 2^128.
  const double hiMag = ((hi >> 23) & 0xFFu) == 0xFFu
                           ? std::ldexp(1.0, 128)
                           : std::fabs(static_cast<double>(floatOf(hi)));
  const double dLo = mag - loMag, dHi = hiMag - mag;
  if (dLo < dHi || (dLo == dHi && ((lo >> 16) & 1u) == 0))
    return static_cast<uint16_t>(lo >> 16);
  return static_cast<uint16_t>(hi >> 16);
}

TEST_F(CastTest, DequantizeEveryFP8CodeMatchesCore) {
  std::vector<uint8_t> codes(256);
  for (int i = 0; i < 256; ++i)
    codes[i] = static_cast<uint8_t>(i);
  for (const OutFormat &in : {kOutFormats[0], kOutFormats[1]}) {
    for (float scaleInv : kScales) {
      Tensor<uint8_t> input({16, 16}, codes);
      auto s = scalar(scaleInv);
      Tensor<float> f32({16, 16});
      Tensor<uint16_t> f16({16, 16}), bf16({16, 16});
      _mlir_ciface_msamp_rt_dequantize(input, s, f32, in.dtype, MSAMP_RT_F32);
      _mlir_ciface_msamp_rt_dequantize(input, s, f16, in.dtype, MSAMP_RT_F16);
      _mlir_ciface_msamp_rt_dequantize(input, s, bf16, in.dtype, MSAMP_RT_BF16);
      expectNoError();
      for (int i = 0; i < 256; ++i) {
        const float want = numerics::dequantize(in.format, codes[i], scaleInv);
        ASSERT_EQ(bitsOf(f32[i]), bitsOf(want))
            << "code 0x" << std::hex << i << " dtype " << in.dtype;
        ASSERT_EQ(f16[i], numerics::encodeF16(want)) << "code " << i;
        if (std::isnan(want))
          ASSERT_EQ(bf16[i] & 0x7FC0u, 0x7FC0u) << "code " << i;
        else
          ASSERT_EQ(bf16[i], referenceBF16(want)) << "code " << i;
      }
    }
  }
}

TEST_F(CastTest, DequantizeEveryF16CodeMatchesCore) {
  Tensor<uint16_t> input({65536}, allPatterns16());
  for (float scaleInv : kScales) {
    auto s = scalar(scaleInv);
    Tensor<float> out({65536});
    _mlir_ciface_msamp_rt_dequantize(input, s, out, MSAMP_RT_F16, MSAMP_RT_F32);
    expectNoError();
    for (uint32_t i = 0; i < 65536; ++i) {
      const float want =
          numerics::dequantize(Format::F16, static_cast<uint16_t>(i), scaleInv);
      ASSERT_EQ(bitsOf(out[i]), bitsOf(want)) << "code 0x" << std::hex << i;
    }
  }
}

TEST_F(CastTest, RoundTripOfScaledRandomValues) {
  // MS-AMP test_cast.py: E4M3 round trip within 0.1 for rand(4,4)-like data.
  Rng rng(7);
  std::vector<float> x(64);
  for (float &v : x)
    v = static_cast<float>(rng.uniform(-1.0, 1.0));
  Tensor<float> in({8, 8}, x);
  auto scale = scalar(256.0f), scaleInv = scalar(1.0f / 256.0f);
  Tensor<uint8_t> q({8, 8});
  Tensor<float> back({8, 8});
  _mlir_ciface_msamp_rt_quantize(in, scale, q, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN);
  _mlir_ciface_msamp_rt_dequantize(q, scaleInv, back, MSAMP_RT_F8E4M3FN,
                                   MSAMP_RT_F32);
  expectNoError();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(back[i], x[i], 0.0625 * std::fabs(x[i]) + 1e-6);
}

TEST_F(CastTest, DescriptorOffsetIsInElements) {
  // A view starting at element 3 of a buffer: aligned + offset * elemsize.
  std::vector<float> storage = {100.0f, 200.0f, 300.0f, 1.0f, 2.0f, -448.0f};
  MemRef in(storage.data(), {3}, /*offset=*/3);
  std::vector<uint8_t> outStorage(8, 0xAA);
  MemRef out(outStorage.data(), {3}, /*offset=*/5);
  auto scale = scalar(1.0f);
  _mlir_ciface_msamp_rt_quantize(in.get(), scale, out.get(), MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  expectNoError();
  const std::vector<uint8_t> want = {0xAA, 0xAA, 0xAA, 0xAA,
                                     0xAA, 0x38, 0x40, 0xFE};
  EXPECT_EQ(outStorage, want);
}

TEST_F(CastTest, SizeOneDimensionsIgnoreTheirStride) {
  // [4, 1] with an arbitrary stride on the unit dimension (MLIR leaves it
  // free after some reshapes) is still contiguous.
  std::vector<float> data = {1, 2, 3, 4};
  MemRef in(data.data(), {4, 1}, 0, {1, 77});
  std::vector<uint16_t> outData(4);
  MemRef out(outData.data(), {4, 1});
  auto scale = scalar(2.0f);
  _mlir_ciface_msamp_rt_quantize(in.get(), scale, out.get(), MSAMP_RT_F32,
                                 MSAMP_RT_F16);
  expectNoError();
  EXPECT_EQ(outData[3], numerics::encodeF16(8.0f));
}

//===----------------------------------------------------------------------===//
// amax
//===----------------------------------------------------------------------===//

float runAmax(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor<float> in({n}, std::move(values));
  auto out = scalar(-1.0f);
  _mlir_ciface_msamp_rt_amax(in, out, MSAMP_RT_F32);
  return out[0];
}

TEST_F(CastTest, AmaxSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(runAmax({1.0f, -3.5f, 2.0f}), 3.5f);
  EXPECT_EQ(runAmax({}), 0.0f);
  EXPECT_EQ(runAmax({-0.0f}), 0.0f);
  EXPECT_EQ(runAmax({1.0f, -inf, 2.0f}), inf);
  EXPECT_TRUE(std::isnan(runAmax({1.0f, nan, inf})));
  EXPECT_TRUE(std::isnan(runAmax({inf, -nan})));
  EXPECT_EQ(runAmax({0x1p-149f}), 0x1p-149f);
  expectNoError();
}

TEST_F(CastTest, AmaxOfHalfTypes) {
  // f16: -65504 (0xFBFF), 1 (0x3C00); bf16: -2^100 (0xF180), 1 (0x3F80).
  Tensor<uint16_t> f16({2}, {0xFBFF, 0x3C00}), bf16({2}, {0xF180, 0x3F80});
  auto outF16 = scalar(0.0f), outBF16 = scalar(0.0f);
  _mlir_ciface_msamp_rt_amax(f16, outF16, MSAMP_RT_F16);
  _mlir_ciface_msamp_rt_amax(bf16, outBF16, MSAMP_RT_BF16);
  expectNoError();
  EXPECT_EQ(outF16[0], 65504.0f);
  EXPECT_EQ(outBF16[0], 0x1p100f);
  Tensor<uint16_t> nanF16({3}, {0x3C00, 0x7E00, 0x7C00});
  _mlir_ciface_msamp_rt_amax(nanF16, outF16, MSAMP_RT_F16);
  EXPECT_TRUE(std::isnan(outF16[0]));
}

TEST_F(CastTest, LargeTensorsGiveTheSameBitsOnAnyThreadCount) {
  // 2^20 elements: above the split threshold, so 4 threads really run.
  const int64_t n = int64_t(1) << 20;
  Rng rng(11);
  std::vector<float> x(n);
  for (float &v : x)
    v = static_cast<float>(rng.uniform(-1000.0, 1000.0));
  x[n - 5] = -5000.0f; // the amax sits in the last chunk
  Tensor<float> in({n}, x);
  auto scale = scalar(0.0625f);
  Tensor<uint8_t> q1({n}), q4({n});
  auto a1 = scalar(0.0f), a4 = scalar(0.0f);

  msamp_rt_set_num_threads(1);
  _mlir_ciface_msamp_rt_quantize(in, scale, q1, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  _mlir_ciface_msamp_rt_amax(in, a1, MSAMP_RT_F32);
  msamp_rt_set_num_threads(4);
  _mlir_ciface_msamp_rt_quantize(in, scale, q4, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  _mlir_ciface_msamp_rt_amax(in, a4, MSAMP_RT_F32);
  msamp_rt_set_num_threads(0);
  expectNoError();

  EXPECT_EQ(a1[0], 5000.0f);
  EXPECT_EQ(a4[0], 5000.0f);
  EXPECT_EQ(q1.data, q4.data);
  for (int64_t i = 0; i < n; i += 4099)
    ASSERT_EQ(q4[i], numerics::quantize(Format::E4M3, x[i], 0.0625f));
}

} // namespace
