//===- OptimizerConstantsTest.cpp - Adam's step constants -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// makeAdamConstants derives beta^step with powStep (double-double
// exponentiation by squaring) instead of the platform's pow, so that the
// CUDA kernels can derive the same constants on the device. These tests pin
// that the f32 constants are those of the former formula with libm's pow,
// i.e. that the CPU backend's results did not change, over every step up to
// 60,000 and a sample of larger ones, for the usual betas, learning rates,
// weight decays and both Adam modes.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/Optimizer.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

using namespace msamp::numerics;

namespace {

/// The constants as the CPU backend computed them with libm's pow.
AdamConstants referenceConstants(float lrF32, int64_t step, double beta1,
                                 double beta2, double eps, double weightDecay,
                                 bool decoupled, bool mode1) {
  const double lr = lrF32;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  AdamConstants c;
  c.beta1 = static_cast<float>(beta1);
  c.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
  c.beta2 = static_cast<float>(beta2);
  c.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
  c.eps = static_cast<float>(eps);
  c.stepSize = static_cast<float>(mode1 ? lr * std::sqrt(bc2) / bc1 : lr / bc1);
  c.bc2Sqrt = static_cast<float>(std::sqrt(bc2));
  c.decayFactor = static_cast<float>(1.0 - lr * weightDecay);
  c.weightDecay = static_cast<float>(weightDecay);
  c.lrWeightDecay = static_cast<float>(lr * weightDecay);
  c.hasWeightDecay = weightDecay != 0.0;
  c.decoupled = decoupled;
  c.mode1 = mode1;
  return c;
}

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

/// Every f32 field, bit for bit, and the flags.
::testing::AssertionResult sameConstants(const AdamConstants &a,
                                         const AdamConstants &b) {
  const float fa[] = {a.beta1,         a.oneMinusBeta1, a.beta2,
                      a.oneMinusBeta2, a.eps,           a.stepSize,
                      a.bc2Sqrt,       a.decayFactor,   a.weightDecay,
                      a.lrWeightDecay};
  const float fb[] = {b.beta1,         b.oneMinusBeta1, b.beta2,
                      b.oneMinusBeta2, b.eps,           b.stepSize,
                      b.bc2Sqrt,       b.decayFactor,   b.weightDecay,
                      b.lrWeightDecay};
  for (size_t i = 0; i < sizeof(fa) / sizeof(fa[0]); ++i)
    if (bits(fa[i]) != bits(fb[i]))
      return ::testing::AssertionFailure()
             << "field " << i << ": " << fa[i] << " vs " << fb[i];
  if (a.hasWeightDecay != b.hasWeightDecay || a.decoupled != b.decoupled ||
      a.mode1 != b.mode1)
    return ::testing::AssertionFailure() << "flags differ";
  return ::testing::AssertionSuccess();
}

TEST(OptimizerConstantsTest, PowStepIsExactWhereTheProductIs) {
  EXPECT_EQ(powStep(0.9, 0), 1.0);
  EXPECT_EQ(powStep(0.9, 1), 0.9);
  EXPECT_EQ(powStep(0.5, 10), std::ldexp(1.0, -10));
  EXPECT_EQ(powStep(0.5, 1074), std::ldexp(1.0, -1074));
  EXPECT_EQ(powStep(0.5, 1075), 0.0);
  EXPECT_EQ(powStep(0.0, 1), 0.0);
  EXPECT_EQ(powStep(0.0, 12345), 0.0);
  EXPECT_EQ(powStep(0.75, 2), 0.5625);
  EXPECT_EQ(powStep(0.75, 3), 0.421875);
}

TEST(OptimizerConstantsTest, PowStepIsWithinOneUlpOfLibm) {
  for (double beta : {0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999})
    for (int64_t step = 1; step <= 20000; step += 7) {
      const double ours = powStep(beta, step);
      const double libm = std::pow(beta, static_cast<double>(step));
      if (libm < 1e-300)
        continue; // subnormal range: no f32 constant sees the difference
      ASSERT_LE(std::fabs(ours - libm),
                std::nextafter(libm, 2.0) - libm) // one ulp
          << beta << "^" << step;
    }
}

TEST(OptimizerConstantsTest, F32ConstantsAreThoseOfLibmPow) {
  const double betaPairs[][2] = {{0.9, 0.999},  {0.9, 0.95}, {0.9, 0.98},
                                 {0.95, 0.999}, {0.8, 0.99}, {0.9, 0.9999},
                                 {0.0, 0.999}};
  const float lrs[] = {1e-3f, 6e-4f, 3e-4f, 1e-4f, 2.5e-5f};
  const double decays[] = {0.0, 1e-2, 0.1};
  for (const auto &pair : betaPairs) {
    auto check = [&](int64_t step) {
      const float lr = lrs[step % 5];
      const double wd = decays[step % 3];
      const bool mode1 = step % 2 == 0;
      const AdamConstants ours =
          makeAdamConstants(lr, step, pair[0], pair[1], 1e-8, wd, true, mode1);
      const AdamConstants ref =
          referenceConstants(lr, step, pair[0], pair[1], 1e-8, wd, true, mode1);
      return sameConstants(ours, ref);
    };
    for (int64_t step = 1; step <= 60000; ++step)
      ASSERT_TRUE(check(step))
          << "betas " << pair[0] << ", " << pair[1] << " step " << step;
    const int64_t large[] = {100000,          123457,      1000000,  9999991,
                             (1ll << 31) + 5, (1ll << 40), INT64_MAX};
    for (int64_t step : large)
      ASSERT_TRUE(check(step))
          << "betas " << pair[0] << ", " << pair[1] << " step " << step;
  }
}

} // namespace
