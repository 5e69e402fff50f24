//===- GemmTest.cpp - Scaled FP8 and f32 GEMM through the C ABI -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// docs/Numerics.md 3: out = a_scale_inv * b_scale_inv * op(A) x op(B) with the
// products of decoded FP8 values accumulated in f32. The reference is an
// f64 GEMM on the decoded operands; the accumulation order is the BLAS's, so
// the tolerance is relative to sum |a||b| per element (1e-5, generous for
// K <= 64 with f32 accumulation). MS-AMP's exact case (ones x ones^T) must be
// exact.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace msamp_rt_test;
namespace numerics = msamp::numerics;

namespace {

class GemmTest : public RuntimeTest {};

/// Random finite codes of an FP8 dtype: quantized normals spanning a few
/// binades, so subnormals, zeros and both signs all occur.
std::vector<uint8_t> randomCodes(int32_t dtype, size_t n, Rng &rng) {
  std::vector<uint8_t> codes(n);
  for (uint8_t &c : codes) {
    const float x = static_cast<float>(rng.uniform(-1.0, 1.0) *
                                       std::exp2(rng.uniform(-8.0, 6.0)));
    c = static_cast<uint8_t>(numerics::encode(dtype == MSAMP_RT_F8E4M3FN
                                                  ? numerics::Format::E4M3
                                                  : numerics::Format::E5M2,
                                              x));
  }
  return codes;
}

double decodeAny(const void *data, int32_t dtype, size_t i) {
  if (dtype == MSAMP_RT_F32)
    return static_cast<const float *>(data)[i];
  const uint8_t code = static_cast<const uint8_t *>(data)[i];
  return dtype == MSAMP_RT_F8E4M3FN ? numerics::decodeE4M3(code)
                                    : numerics::decodeE5M2(code);
}

struct GemmCase {
  int64_t batch, m, n, k;
  bool transA, transB;
  int32_t aType, bType;
  float aScaleInv, bScaleInv;
};

/// Runs one case through the ABI and compares every element with the f64
/// reference; returns the f32 result for further checks.
std::vector<float> checkGemm(const GemmCase &c, uint64_t seed) {
  Rng rng(seed);
  const bool batched = c.batch > 1;
  auto shape = [&](int64_t rows, int64_t cols) {
    return batched ? std::vector<int64_t>{c.batch, rows, cols}
                   : std::vector<int64_t>{rows, cols};
  };
  const std::vector<int64_t> aShape =
      c.transA ? shape(c.k, c.m) : shape(c.m, c.k);
  const std::vector<int64_t> bShape =
      c.transB ? shape(c.n, c.k) : shape(c.k, c.n);
  const size_t aCount = c.batch * c.m * c.k, bCount = c.batch * c.k * c.n;

  std::vector<uint8_t> aBytes, bBytes;
  std::vector<float> aF32, bF32;
  const void *aData, *bData;
  if (c.aType == MSAMP_RT_F32) {
    for (size_t i = 0; i < aCount; ++i)
      aF32.push_back(static_cast<float>(rng.uniform(-2.0, 2.0)));
    for (size_t i = 0; i < bCount; ++i)
      bF32.push_back(static_cast<float>(rng.uniform(-2.0, 2.0)));
    aData = aF32.data();
    bData = bF32.data();
  } else {
    aBytes = randomCodes(c.aType, aCount, rng);
    bBytes = randomCodes(c.bType, bCount, rng);
    aData = aBytes.data();
    bData = bBytes.data();
  }
  MemRef a(const_cast<void *>(aData), aShape);
  MemRef b(const_cast<void *>(bData), bShape);
  auto aScale = scalar(c.aScaleInv), bScale = scalar(c.bScaleInv);
  Tensor<float> out(shape(c.m, c.n), std::numeric_limits<float>::quiet_NaN());
  auto amax = scalar(-1.0f);
  const int32_t flags = (c.transA ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                        (c.transB ? MSAMP_RT_GEMM_TRANSPOSE_B : 0) |
                        MSAMP_RT_GEMM_WRITE_AMAX;
  _mlir_ciface_msamp_rt_gemm(a.get(), aScale, b.get(), bScale, out, amax,
                             c.aType, c.bType, MSAMP_RT_F32, flags);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();

  const double scale = static_cast<double>(c.aScaleInv) * c.bScaleInv;
  float expectedAmax = 0.0f;
  for (int64_t p = 0; p < c.batch; ++p) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0.0, magnitude = 0.0;
        for (int64_t l = 0; l < c.k; ++l) {
          const size_t ai =
              p * c.m * c.k + (c.transA ? l * c.m + i : i * c.k + l);
          const size_t bi =
              p * c.k * c.n + (c.transB ? j * c.k + l : l * c.n + j);
          const double x = decodeAny(aData, c.aType, ai);
          const double y = decodeAny(bData, c.bType, bi);
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        const float got = out[p * c.m * c.n + i * c.n + j];
        EXPECT_NEAR(got, scale * sum, 1e-5 * scale * magnitude + 1e-30)
            << "batch " << p << " (" << i << ", " << j << ")";
        expectedAmax = std::max(expectedAmax, std::fabs(got));
      }
    }
  }
  EXPECT_EQ(amax[0], expectedAmax);
  return out.data;
}

TEST_F(GemmTest, E4M3xE4M3AllTransposes) {
  uint64_t seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      checkGemm({1, 13, 9, 33, ta, tb, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN,
                 0.125f, 0.5f},
                seed++);
}

TEST_F(GemmTest, E5M2xE4M3AllTransposes) {
  uint64_t seed = 100;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // dgrad-like (E5M2 first) and wgrad-like operand orders.
      checkGemm({1, 8, 17, 40, ta, tb, MSAMP_RT_F8E5M2, MSAMP_RT_F8E4M3FN,
                 0x1p-10f, 3.0f},
                seed++);
      checkGemm({1, 8, 17, 40, ta, tb, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2,
                 0.37f, 1.0f},
                seed++);
    }
}

TEST_F(GemmTest, BatchedRank3) {
  uint64_t seed = 200;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      checkGemm({3, 5, 6, 64, ta, tb, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, 0.25f,
                 0.0625f},
                seed++);
}

TEST_F(GemmTest, F32GemmAppliesTheScales) {
  uint64_t seed = 300;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      checkGemm({1, 7, 11, 19, ta, tb, MSAMP_RT_F32, MSAMP_RT_F32, 1.0f, 1.0f},
                seed++);
      checkGemm({2, 4, 3, 10, ta, tb, MSAMP_RT_F32, MSAMP_RT_F32, 2.0f, 0.75f},
                seed++);
    }
}

TEST_F(GemmTest, MsAmpOnesIsExact) {
  // tests/operators/test_gemm.py: ones(4,2) . ones(3,2)^T = 2 everywhere.
  Tensor<uint8_t> a({4, 2}, 0x38), b({3, 2}, 0x38); // 1.0 in E4M3
  auto s = scalar(1.0f);
  Tensor<float> out({4, 3}, 0.0f);
  auto amax = scalar(-1.0f);
  _mlir_ciface_msamp_rt_gemm(
      a, s, b, s, out, amax, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F32,
      MSAMP_RT_GEMM_TRANSPOSE_B | MSAMP_RT_GEMM_FAST_ACCUM);
  expectNoError();
  for (float v : out.data)
    EXPECT_EQ(v, 2.0f);
  EXPECT_EQ(amax[0], -1.0f); // not requested: untouched
}

TEST_F(GemmTest, LowPrecisionOutputIsTheRoundedF32Result) {
  Rng rng(400);
  std::vector<uint8_t> aCodes = randomCodes(MSAMP_RT_F8E4M3FN, 6 * 16, rng);
  std::vector<uint8_t> bCodes = randomCodes(MSAMP_RT_F8E4M3FN, 16 * 5, rng);
  Tensor<uint8_t> a({6, 16}, aCodes), b({16, 5}, bCodes);
  auto sa = scalar(0.5f), sb = scalar(8.0f);
  Tensor<float> f32({6, 5});
  Tensor<uint16_t> bf16({6, 5}), f16({6, 5});
  auto amax32 = scalar(0.0f), amax16 = scalar(0.0f), amaxBF = scalar(0.0f);
  _mlir_ciface_msamp_rt_gemm(a, sa, b, sb, f32, amax32, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_F32,
                             MSAMP_RT_GEMM_WRITE_AMAX);
  _mlir_ciface_msamp_rt_gemm(a, sa, b, sb, f16, amax16, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
                             MSAMP_RT_GEMM_WRITE_AMAX);
  _mlir_ciface_msamp_rt_gemm(a, sa, b, sb, bf16, amaxBF, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_BF16,
                             MSAMP_RT_GEMM_WRITE_AMAX);
  expectNoError();
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_EQ(f16[i], numerics::encodeF16(f32[i]));
    EXPECT_EQ(bf16[i], static_cast<uint16_t>((bitsOf(f32[i]) + 0x7FFFu +
                                              ((bitsOf(f32[i]) >> 16) & 1u)) >>
                                             16));
  }
  // The amax is of the unrounded f32 result, whatever the output type.
  EXPECT_EQ(amax16[0], amax32[0]);
  EXPECT_EQ(amaxBF[0], amax32[0]);
}

TEST_F(GemmTest, EmptyReductionGivesZeros) {
  std::vector<uint8_t> none;
  MemRef a(none.data(), {3, 0}), b(none.data(), {0, 2});
  auto s = scalar(1.0f);
  Tensor<float> out({3, 2}, 5.0f);
  auto amax = scalar(-1.0f);
  _mlir_ciface_msamp_rt_gemm(a.get(), s, b.get(), s, out, amax,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F32,
                             MSAMP_RT_GEMM_WRITE_AMAX);
  expectNoError();
  for (float v : out.data)
    EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(amax[0], 0.0f);
}

TEST_F(GemmTest, RejectsE5M2xE5M2AndMixedOperands) {
  Tensor<uint8_t> a({2, 2}, 0x38), b({2, 2}, 0x38);
  Tensor<float> f({2, 2}, 1.0f);
  auto s = scalar(1.0f);
  Tensor<float> out({2, 2}, 7.0f);
  _mlir_ciface_msamp_rt_gemm(a, s, b, s, out, s, MSAMP_RT_F8E5M2,
                             MSAMP_RT_F8E5M2, MSAMP_RT_F32, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_gemm(a, s, f, s, out, s, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F32, MSAMP_RT_F32, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  for (float v : out.data)
    EXPECT_EQ(v, 7.0f);
}

TEST_F(GemmTest, RejectsShapesThatDoNotCompose) {
  Tensor<uint8_t> a({4, 3}, 0x38), b({4, 2}, 0x38);
  auto s = scalar(1.0f);
  Tensor<float> out({4, 2});
  _mlir_ciface_msamp_rt_gemm(a, s, b, s, out, s, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_F32, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(msamp_rt_get_last_error_message()).find("compose"),
            std::string::npos);
  msamp_rt_clear_error();
  // With transpose_a the same operands compose: [4,3]^T x [4,2] -> [3,2].
  Tensor<float> out2({3, 2});
  _mlir_ciface_msamp_rt_gemm(a, s, b, s, out2, s, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_F32,
                             MSAMP_RT_GEMM_TRANSPOSE_A);
  expectNoError();
  for (float v : out2.data)
    EXPECT_EQ(v, 4.0f);
}

} // namespace
