//===- QuantizeTransposeTest.cpp - msamp_rt_quantize_transpose on CUDA ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The scaled cast into both operand layouts on both backends from the same
// inputs: the codes and the transposed codes must agree bit for bit (two NaN
// codes may differ in sign and payload), for every input and output dtype,
// shapes that are no multiple of the kernel's 32 x 32 tile, one row, one
// column, rank 3 (viewed as [rows, cols]), Inf/NaN and a scale that
// saturates, and an empty input. Skips visibly without a GPU; the GPU kit
// runs it.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaQuantizeTranspose : public CudaTest {
protected:
  /// Runs the call on both backends and compares both outputs.
  static void expectSameOnBoth(const Raw &in, int32_t outType, float scale,
                               const std::string &what) {
    const int64_t cols = in.shape.back();
    const int64_t rows = cols ? static_cast<int64_t>(in.numel()) / cols : 0;
    Raw out[2] = {Raw(outType, in.shape), Raw(outType, in.shape)};
    Raw outT[2] = {Raw(outType, {cols, rows}), Raw(outType, {cols, rows})};
    onBoth(
        [&](bool cuda) {
          Raw input(in);
          auto s = msamp_rt_test::scalar(scale);
          _mlir_ciface_msamp_rt_quantize_transpose(
              input, s, out[cuda], outT[cuda], in.dtype, outType);
        },
        what);
    expectSameValues(out[0], out[1], what);
    expectSameValues(outT[0], outT[1], what + " (transposed)");
  }
};

TEST_F(CudaQuantizeTranspose, MatchesCpuOnEveryDTypeAndShape) {
  // Inf, NaN, subnormals and values over many binades; scale 64 pushes the
  // largest past every format's maximum (saturation, Inf for f16).
  const std::vector<float> values = interestingFloats(400000, 29);
  const std::vector<std::vector<int64_t>> shapes = {
      {301, 997}, {32, 64}, {1, 77}, {77, 1}, {3, 33, 65}, {1024, 768}};
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (const std::vector<int64_t> &shape : shapes)
        for (float scale : {1.0f, 64.0f}) {
          std::string what = std::string(rt::dtypeName(inType)) + " -> " +
                             rt::dtypeName(outType) + " [";
          for (int64_t d : shape)
            what += std::to_string(d) + ",";
          what += "] scale " + std::to_string(scale);
          expectSameOnBoth(shaped(inType, values, shape), outType, scale, what);
        }
}

TEST_F(CudaQuantizeTranspose, EmptyInputWritesNothing) {
  expectSameOnBoth(Raw(MSAMP_RT_F32, {0, 16}), MSAMP_RT_F8E4M3FN, 1.0f,
                   "empty");
}

} // namespace
