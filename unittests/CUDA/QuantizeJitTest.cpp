//===- QuantizeJitTest.cpp - msamp_rt_quantize_jit: CUDA against the CPU --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The fused just-in-time cast on both backends from the same inputs: the
// codes, the transposed codes, the scale and the inverse scale must agree
// bit for bit (two NaN codes may differ in sign and payload). The inputs
// span many blocks and grid-stride iterations; the special cases are an
// amax that keeps prev_scale (all zeros, Inf, NaN, empty) and prev_scale
// passed as the out_scale buffer itself.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

/// `values` as a [rows, cols] buffer of `dtype`.
Raw matrix(int32_t dtype, const std::vector<float> &values, int64_t rows,
           int64_t cols) {
  const Raw flat = highPrecisionBuffer(dtype, values);
  Raw m(dtype, {rows, cols});
  m.bytes = flat.bytes;
  return m;
}

class CudaQuantizeJit : public CudaTest {
protected:
  /// Runs the call on both backends and compares every output.
  static void expectSameOnBoth(const Raw &in, int32_t outType, int32_t kind,
                               int32_t margin, bool transpose, float prev,
                               bool prevIsOutScale, const std::string &what);
};

void CudaQuantizeJit::expectSameOnBoth(const Raw &in, int32_t outType,
                                       int32_t kind, int32_t margin,
                                       bool transpose, float prev,
                                       bool prevIsOutScale,
                                       const std::string &what) {
  const int64_t cols = in.shape.back();
  const int64_t rows = cols ? static_cast<int64_t>(in.numel()) / cols : 0;
  Raw out[2] = {Raw(outType, in.shape), Raw(outType, in.shape)};
  Raw outT[2] = {Raw(outType, {cols, rows}), Raw(outType, {cols, rows})};
  float scale[2], scaleInv[2];
  onBoth(
      [&](bool cuda) {
        Raw input(in);
        auto prevScale = msamp_rt_test::scalar(prev);
        auto s = msamp_rt_test::scalar(prevIsOutScale ? prev : -1.0f);
        auto si = msamp_rt_test::scalar(-1.0f);
        auto dummy = msamp_rt_test::scalar(0.0f);
        msamp_rt_unranked_memref *prevRef = prevIsOutScale ? s : prevScale;
        msamp_rt_unranked_memref *outTRef = dummy;
        if (transpose)
          outTRef = outT[cuda];
        _mlir_ciface_msamp_rt_quantize_jit(
            input, prevRef, out[cuda], outTRef, s, si, in.dtype, outType, kind,
            margin, transpose ? MSAMP_RT_QUANTIZE_JIT_TRANSPOSE : 0);
        scale[cuda] = s[0];
        scaleInv[cuda] = si[0];
      },
      what);
  expectSameValues(out[0], out[1], what);
  if (transpose)
    expectSameValues(outT[0], outT[1], what + " (transposed)");
  expectSameFloat(scale[0], scale[1], what + " scale");
  expectSameFloat(scaleInv[0], scaleInv[1], what + " scale_inv");
}

TEST_F(CudaQuantizeJit, MatchesCpuOnEveryDTypeAndScaleRule) {
  // Finite values over many binades: the scale comes from the amax.
  std::vector<float> finite;
  for (float x : interestingFloats(300000, 17))
    if (std::isfinite(x))
      finite.push_back(x);
  finite.resize(301 * 997); // [301, 997]: no dimension a multiple of 32
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16}) {
    const Raw in = matrix(inType, finite, 301, 997);
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (int32_t kind : {0, 1})
        for (int32_t margin : {0, 3})
          for (bool transpose : {false, true})
            expectSameOnBoth(in, outType, kind, margin, transpose, 0.5f, false,
                             std::string(rt::dtypeName(inType)) + " -> " +
                                 rt::dtypeName(outType) + " kind " +
                                 std::to_string(kind) + " margin " +
                                 std::to_string(margin) +
                                 (transpose ? " transposed" : ""));
  }
}

TEST_F(CudaQuantizeJit, KeepsPrevScaleLikeTheCpu) {
  // Inf and NaN in the input (interestingFloats has both), all zeros, tiny
  // (subnormal) values whose scale clamps to 2^127, and an empty tensor.
  const std::vector<float> special = interestingFloats(100000, 3);
  std::vector<float> zeros(4096 * 3, 0.0f);
  std::vector<float> tiny(4096 * 3);
  for (size_t i = 0; i < tiny.size(); ++i)
    tiny[i] = (i % 2 ? 1e-40f : -3e-41f) * static_cast<float>(i % 7);
  struct Case {
    const char *name;
    Raw in;
  };
  const Case cases[] = {
      {"inf and nan", highPrecisionBuffer(MSAMP_RT_F32, special)},
      {"all zero", matrix(MSAMP_RT_F32, zeros, 3, 4096)},
      {"subnormal", matrix(MSAMP_RT_F32, tiny, 4096, 3)},
      {"empty", Raw(MSAMP_RT_F32, {0, 16})}};
  for (const Case &c : cases)
    for (bool transpose : {false, true})
      for (bool alias : {false, true})
        expectSameOnBoth(c.in, MSAMP_RT_F8E4M3FN, 0, 0, transpose, 4.0f, alias,
                         std::string(c.name) +
                             (transpose ? " transposed" : "") +
                             (alias ? " prev_scale = out_scale" : ""));
}

} // namespace
