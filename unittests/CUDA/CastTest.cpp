//===- CastTest.cpp - quantize, dequantize, amax: CUDA against the CPU ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The same inputs through both backends; the bytes must agree (NaN results
// may differ only in sign and payload, which IEEE leaves open). Inputs are
// large enough to span many blocks and grid-stride iterations.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaCast : public CudaTest {};

TEST_F(CudaCast, QuantizeMatchesCpu) {
  const std::vector<float> values = interestingFloats(300000, 5);
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (float scale : {1.0f, 0.5f, 3.0f, 0x1p-10f, 0x1p20f}) {
        const Raw in = highPrecisionBuffer(inType, values);
        Raw cpu(outType, in.shape), gpu(outType, in.shape);
        auto s = msamp_rt_test::scalar(scale);
        const std::string what = std::string(rt::dtypeName(inType)) + " -> " +
                                 rt::dtypeName(outType) + " scale " +
                                 std::to_string(scale);
        onBoth(
            [&](bool cuda) {
              Raw input(in);
              _mlir_ciface_msamp_rt_quantize(input, s, cuda ? gpu : cpu, inType,
                                             outType);
            },
            what);
        expectSameValues(cpu, gpu, what);
      }
}

TEST_F(CudaCast, DequantizeMatchesCpuOnEveryCode) {
  for (int32_t inType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16}) {
    const size_t codes = inType == MSAMP_RT_F16 ? 65536 : 256;
    const size_t repeat = 40; // several blocks, every code in each
    Raw in(inType, {static_cast<int64_t>(codes * repeat)});
    for (size_t i = 0; i < codes * repeat; ++i) {
      if (inType == MSAMP_RT_F16)
        in.setU16(i, static_cast<uint16_t>(i % codes));
      else
        in.bytes[i] = static_cast<uint8_t>(i % codes);
    }
    for (int32_t outType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
      for (float scaleInv : {1.0f, 0.25f, 3.0f, 1e-30f, 1e30f}) {
        Raw cpu(outType, in.shape), gpu(outType, in.shape);
        auto s = msamp_rt_test::scalar(scaleInv);
        const std::string what = std::string(rt::dtypeName(inType)) + " -> " +
                                 rt::dtypeName(outType);
        onBoth(
            [&](bool cuda) {
              _mlir_ciface_msamp_rt_dequantize(in, s, cuda ? gpu : cpu, inType,
                                               outType);
            },
            what);
        expectSameValues(cpu, gpu, what);
      }
  }
}

TEST_F(CudaCast, AmaxMatchesCpu) {
  Rng rng(9);
  for (int32_t dtype : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (size_t n : {size_t(0), size_t(1), size_t(255), size_t(256),
                     size_t(257), size_t(100003), size_t(3) << 20})
      for (int special = 0; special < 4; ++special) {
        std::vector<float> values(n);
        for (float &x : values)
          x = static_cast<float>(rng.uniform(-100.0, 100.0));
        if (n > 0 && special == 1)
          values[rng.next() % n] = INFINITY;
        if (n > 0 && special == 2)
          values[n - 1] = -NAN;
        if (n > 0 && special == 3)
          values[rng.next() % n] = -1000.0f;
        const Raw in = highPrecisionBuffer(dtype, values);
        float results[2] = {-1.0f, -1.0f};
        onBoth([&](bool cuda) {
          Raw input(in);
          auto out = msamp_rt_test::scalar(-1.0f);
          _mlir_ciface_msamp_rt_amax(input, out, dtype);
          results[cuda] = out[0];
        });
        expectSameFloat(results[0], results[1],
                        std::string(rt::dtypeName(dtype)) +
                            " n=" + std::to_string(n) + " case " +
                            std::to_string(special));
      }
}

} // namespace
