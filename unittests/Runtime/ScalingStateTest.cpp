//===- ScalingStateTest.cpp - compute_scale and amax history via the ABI --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// docs/Numerics.md 2.1/2.2 vectors (MS-AMP tests/common/tensor/test_meta.py,
// Transformer Engine's delayed-scaling kernel) through the C ABI, and the
// aliasing rule of update_amax_history.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

using namespace msamp_rt_test;

namespace {

class ScalingStateTest : public RuntimeTest {};

constexpr int32_t kPow2 = 0, kExact = 1;
constexpr int32_t kMax = 0, kMostRecent = 1;

float computeScale(std::vector<float> history, float prev, int32_t kind,
                   int32_t algo, int32_t format, int32_t margin = 0) {
  const int64_t n = static_cast<int64_t>(history.size());
  Tensor<float> h({n}, std::move(history));
  auto p = scalar(prev), out = scalar(-7.0f);
  _mlir_ciface_msamp_rt_compute_scale(h, p, out, kind, algo, format, margin);
  return out[0];
}

float pow2(float amax, int32_t format = MSAMP_RT_F8E4M3FN, float prev = 1.0f) {
  return computeScale({amax}, prev, kPow2, kMax, format);
}

TEST_F(ScalingStateTest, MsAmpPow2Vectors) {
  EXPECT_EQ(pow2(10.0f), 32.0f);
  EXPECT_EQ(pow2(10000.0f), 1.0f / 32.0f);
  EXPECT_EQ(pow2(0.0f, MSAMP_RT_F8E4M3FN, 0.25f), 0.25f); // amax 0: prev
  EXPECT_EQ(pow2(1.0f), 256.0f);
  EXPECT_EQ(pow2(448.0f), 1.0f);
  EXPECT_EQ(pow2(449.0f), 0.5f);
  EXPECT_EQ(pow2(1.0f, MSAMP_RT_F8E5M2), 32768.0f);
  EXPECT_EQ(pow2(1.0f, MSAMP_RT_F16), 32768.0f);
  // Non-finite amaxes keep the previous scale (msamp deliberately does not
  // copy MS-AMP's 1/prev for +Inf).
  EXPECT_EQ(
      pow2(std::numeric_limits<float>::infinity(), MSAMP_RT_F8E4M3FN, 4.0f),
      4.0f);
  EXPECT_EQ(
      pow2(std::numeric_limits<float>::quiet_NaN(), MSAMP_RT_F8E4M3FN, 4.0f),
      4.0f);
  // margin 1 halves the scale.
  EXPECT_EQ(computeScale({10.0f}, 1.0f, kPow2, kMax, MSAMP_RT_F8E4M3FN, 1),
            16.0f);
  expectNoError();
}

TEST_F(ScalingStateTest, TransformerEngineExactVectors) {
  EXPECT_EQ(computeScale({10.0f}, 1.0f, kExact, kMax, MSAMP_RT_F8E4M3FN),
            448.0f / 10.0f);
  EXPECT_EQ(computeScale({3.0f}, 1.0f, kExact, kMax, MSAMP_RT_F8E5M2, 2),
            57344.0f / 4.0f / 3.0f);
  EXPECT_EQ(computeScale({0.0f}, 5.0f, kExact, kMax, MSAMP_RT_F8E4M3FN), 5.0f);
  EXPECT_EQ(computeScale({0x1p-149f}, 1.0f, kExact, kMax, MSAMP_RT_F8E4M3FN),
            FLT_MAX);
  expectNoError();
}

TEST_F(ScalingStateTest, HistoryReductions) {
  const std::vector<float> history = {2.0f, 100.0f, 7.0f, 0.0f};
  // max: amax 100 -> 2^floor(log2(4.48)) = 4; most_recent: amax 2 -> 128.
  EXPECT_EQ(computeScale(history, 1.0f, kPow2, kMax, MSAMP_RT_F8E4M3FN), 4.0f);
  EXPECT_EQ(computeScale(history, 1.0f, kPow2, kMostRecent, MSAMP_RT_F8E4M3FN),
            128.0f);
  // A NaN anywhere in the window keeps the previous scale under max.
  EXPECT_EQ(computeScale({2.0f, std::numeric_limits<float>::quiet_NaN()}, 0.5f,
                         kPow2, kMax, MSAMP_RT_F8E4M3FN),
            0.5f);
  // An empty history has amax 0: previous scale.
  EXPECT_EQ(
      computeScale(std::vector<float>(), 0.5f, kPow2, kMax, MSAMP_RT_F8E4M3FN),
      0.5f);
  expectNoError();
}

TEST_F(ScalingStateTest, OutputMayAliasPrevScale) {
  Tensor<float> h({1}, 10.0f);
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_compute_scale(h, s, s, kPow2, kMax, MSAMP_RT_F8E4M3FN,
                                      0);
  expectNoError();
  EXPECT_EQ(s[0], 32.0f);
}

TEST_F(ScalingStateTest, UpdateAmaxHistoryRolls) {
  Tensor<float> h({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  Tensor<float> out({4});
  auto amax = scalar(9.0f);
  _mlir_ciface_msamp_rt_update_amax_history(h, amax, out);
  expectNoError();
  EXPECT_EQ(out.data, (std::vector<float>{9.0f, 1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(h.data, (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
}

TEST_F(ScalingStateTest, UpdateAmaxHistoryInPlace) {
  Tensor<float> h({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  auto amax = scalar(9.0f);
  _mlir_ciface_msamp_rt_update_amax_history(h, amax, h);
  expectNoError();
  EXPECT_EQ(h.data, (std::vector<float>{9.0f, 1.0f, 2.0f, 3.0f}));
}

TEST_F(ScalingStateTest, UpdateAmaxHistoryRejectsShiftedOverlap) {
  std::vector<float> storage = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  MemRef h(storage.data(), {4}), out(storage.data(), {4}, /*offset=*/1);
  auto amax = scalar(9.0f);
  _mlir_ciface_msamp_rt_update_amax_history(h.get(), amax, out.get());
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(storage, (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f}));
}

TEST_F(ScalingStateTest, DelayedScalingTimeline) {
  // A window of 3 through update + compute, as a compiled step chains them:
  // the scale at step t comes from the amaxes of steps t-3..t-1.
  Tensor<float> h({3}, 0.0f);
  auto scale = scalar(1.0f);
  const float amaxes[] = {10.0f, 1.0f, 1.0f, 1.0f, 300.0f};
  const float expected[] = {32.0f, 32.0f, 32.0f, 256.0f, 1.0f};
  for (int t = 0; t < 5; ++t) {
    auto amax = scalar(amaxes[t]);
    _mlir_ciface_msamp_rt_update_amax_history(h, amax, h);
    _mlir_ciface_msamp_rt_compute_scale(h, scale, scale, kPow2, kMax,
                                        MSAMP_RT_F8E4M3FN, 0);
    EXPECT_EQ(scale[0], expected[t]) << "step " << t;
  }
  expectNoError();
}

} // namespace
