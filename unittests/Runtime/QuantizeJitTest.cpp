//===- QuantizeJitTest.cpp - msamp_rt_quantize_jit's argument checks ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What the fused just-in-time cast refuses, with a message naming the
// argument (docs/RuntimeABI.md 3.12), and that a refused call writes
// nothing. Its arithmetic is checked against ml_dtypes in
// python/tests/test_quantize_jit.py and against the CUDA backend in
// unittests/CUDA/QuantizeJitTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace msamp_rt_test;

namespace {

class QuantizeJitTest : public RuntimeTest {
protected:
  /// Calls the entry point on a [2, 3] f32 input of amax 3 with the given
  /// out_t shape, dtypes, kind and flags, and returns the recorded error.
  msamp_rt_status call(std::vector<int64_t> outTShape, int32_t inDType,
                       int32_t outDType, int32_t kind, int32_t flags,
                       bool sameScaleBuffers = false) {
    Tensor<float> in({2, 3}, std::vector<float>{1, -3, 2, 0, 0.5f, 1});
    Tensor<uint8_t> out({2, 3}, uint8_t(0xAB));
    Tensor<uint8_t> outT(outTShape, uint8_t(0xAB));
    auto prev = scalar(1.0f), s = scalar(-1.0f), si = scalar(-1.0f);
    _mlir_ciface_msamp_rt_quantize_jit(in, prev, out, outT, s,
                                       sameScaleBuffers ? s : si, inDType,
                                       outDType, kind, 0, flags);
    written = out[0] != 0xAB || s[0] != -1.0f;
    return msamp_rt_get_last_error();
  }

  void expectRefused(msamp_rt_status status, msamp_rt_status code,
                     const std::string &message) {
    EXPECT_EQ(status, code);
    EXPECT_NE(std::string(msamp_rt_get_last_error_message()).find(message),
              std::string::npos)
        << msamp_rt_get_last_error_message();
    EXPECT_FALSE(written);
    msamp_rt_clear_error();
  }

  bool written = false;
};

TEST_F(QuantizeJitTest, ValidCallsWriteTheirOutputs) {
  EXPECT_EQ(call({}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 0, 0), MSAMP_RT_OK);
  EXPECT_TRUE(written);
  EXPECT_EQ(call({3, 2}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 1,
                 MSAMP_RT_QUANTIZE_JIT_TRANSPOSE),
            MSAMP_RT_OK);
  EXPECT_TRUE(written);
}

TEST_F(QuantizeJitTest, RefusesBadArguments) {
  expectRefused(call({3, 2}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 0,
                     MSAMP_RT_QUANTIZE_JIT_TRANSPOSE | 0x8),
                MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "msamp_rt_quantize_jit: unknown flags 0x9");
  expectRefused(call({}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 2, 0),
                MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "kind 2 is neither 0 (pow2) nor 1 (exact)");
  expectRefused(call({}, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, 0, 0),
                MSAMP_RT_ERROR_UNSUPPORTED_DTYPE, "input dtype 3");
  expectRefused(call({}, MSAMP_RT_F32, MSAMP_RT_F32, 0, 0),
                MSAMP_RT_ERROR_UNSUPPORTED_DTYPE, "output dtype 0");
  expectRefused(call({2, 3}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 0,
                     MSAMP_RT_QUANTIZE_JIT_TRANSPOSE),
                MSAMP_RT_ERROR_SHAPE_MISMATCH, "out_t must be [3, 2]");
  expectRefused(call({}, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, 0, 0, true),
                MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "out_scale and out_scale_inv are the same buffer");
}

} // namespace
