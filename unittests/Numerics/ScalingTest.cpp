//===- ScalingTest.cpp - Tests for scale computation and amax history -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Vectors from docs/Numerics.md 2.1/2.2 (MS-AMP
// tests/common/tensor/test_meta.py and Transformer Engine's delayed_scaling
// kernel), plus the edge cases where msamp deliberately differs from MS-AMP
// (Inf amax, overflowing scales).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/Scaling.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace msamp::numerics;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kE4M3Max = maxFinite(Format::E4M3);
constexpr float kE5M2Max = maxFinite(Format::E5M2);
constexpr float kF16Max = maxFinite(Format::F16);

float pow2(int e) { return std::ldexp(1.0f, e); }

/// The MS-AMP formula evaluated with libm's exact ilogb, clamped as msamp
/// documents, as an independent reference for computeScalePow2.
float referencePow2Scale(float amax, float fpMax, int margin) {
  const int e = std::ilogb(fpMax / amax) - margin;
  return pow2(std::min(127, std::max(-126, e)));
}

TEST(ScalingTest, Pow2MatchesNumericsVectors) {
  const float prev = 3.0f; // not a power of two, so "kept" is visible
  EXPECT_EQ(computeScalePow2(0.0f, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScalePow2(10.0f, prev, kE4M3Max, 0), 32.0f);
  EXPECT_EQ(computeScalePow2(10000.0f, prev, kE4M3Max, 0), 1.0f / 32);
  EXPECT_EQ(computeScalePow2(1.0f, prev, kE4M3Max, 0), 256.0f);
  EXPECT_EQ(computeScalePow2(448.0f, prev, kE4M3Max, 0), 1.0f);
  EXPECT_EQ(computeScalePow2(449.0f, prev, kE4M3Max, 0), 0.5f);
  EXPECT_EQ(computeScalePow2(1.0f, prev, kE5M2Max, 0), pow2(15));
  EXPECT_EQ(computeScalePow2(1.0f, prev, kF16Max, 0), pow2(15));
}

TEST(ScalingTest, Pow2MarginDividesByPowersOfTwo) {
  for (float amax : {1.0f, 10.0f, 449.0f, 1e-3f, 1e4f}) {
    const float base = computeScalePow2(amax, 1.0f, kE4M3Max, 0);
    EXPECT_EQ(computeScalePow2(amax, 1.0f, kE4M3Max, 1), base / 2) << amax;
    EXPECT_EQ(computeScalePow2(amax, 1.0f, kE4M3Max, 3), base / 8) << amax;
    EXPECT_EQ(computeScalePow2(amax, 1.0f, kE4M3Max, -1), base * 2) << amax;
  }
}

TEST(ScalingTest, Pow2KeepsPreviousScaleForUnusableAmax) {
  const float prev = 0.125f;
  EXPECT_EQ(computeScalePow2(kNaN, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScalePow2(-kNaN, prev, kE4M3Max, 0), prev);
  // MS-AMP would return 1 / prev = 8 here; msamp keeps prev on purpose.
  EXPECT_EQ(computeScalePow2(kInf, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScalePow2(-0.0f, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScalePow2(-5.0f, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScalePow2(-kInf, prev, kE4M3Max, 0), prev);
}

TEST(ScalingTest, Pow2ClampsToFiniteNormalPowersOfTwo) {
  // 448 / 1e-38 overflows f32: MS-AMP would produce an Inf scale.
  EXPECT_EQ(computeScalePow2(1e-38f, 1.0f, kE4M3Max, 0), pow2(127));
  EXPECT_EQ(computeScalePow2(std::ldexp(1.0f, -149), 1.0f, kE4M3Max, 0),
            pow2(127));
  EXPECT_EQ(computeScalePow2(1e-38f, 1.0f, kE4M3Max, 5), pow2(127));
  // The exponent is exact even where the f32 quotient 448 / 2^-140 would
  // overflow, so a large margin can bring it back into range.
  EXPECT_EQ(computeScalePow2(std::ldexp(1.0f, -140), 1.0f, kE4M3Max, 30),
            pow2(118));
  // A finite quotient can still exceed 2^127 once a negative margin is added.
  EXPECT_EQ(computeScalePow2(1e-35f, 1.0f, kE4M3Max, -20), pow2(127));
  // 448 / 2^-118 = 1.75 * 2^126: the largest unclamped case.
  EXPECT_EQ(computeScalePow2(std::ldexp(1.0f, -118), 1.0f, kE4M3Max, 0),
            pow2(126));
  // Underflow side: the power of two would be below 2^-126.
  EXPECT_EQ(computeScalePow2(FLT_MAX, 1.0f, kE4M3Max, 20), pow2(-126));
  EXPECT_EQ(computeScalePow2(pow2(100), 1.0f, std::ldexp(1.0f, -140), 0),
            pow2(-126)); // quotient underflows to 0
  EXPECT_EQ(computeScalePow2(pow2(100), 1.0f, std::ldexp(1.0f, -140), -200),
            pow2(-40));
  EXPECT_EQ(computeScalePow2(FLT_MAX, 1.0f, kE4M3Max, 0), pow2(-120));
}

TEST(ScalingTest, Pow2RejectsUnusableFpMax) {
  EXPECT_EQ(computeScalePow2(1.0f, 2.0f, 0.0f, 0), 2.0f);
  EXPECT_EQ(computeScalePow2(1.0f, 2.0f, kNaN, 0), 2.0f);
  EXPECT_EQ(computeScalePow2(1.0f, 2.0f, kInf, 0), 2.0f);
}

TEST(ScalingTest, Pow2IsTheLargestPowerOfTwoThatFits) {
  // Exactly at and just above every power-of-two boundary. One ulp above,
  // MS-AMP's f32 log2 (log2f(31.999998) == 5.0) would still give 2^k.
  for (int k = -20; k <= 20; ++k) {
    const float atBoundary = std::ldexp(kE4M3Max, -k);
    EXPECT_EQ(computeScalePow2(atBoundary, 1.0f, kE4M3Max, 0), pow2(k)) << k;
    EXPECT_EQ(
        computeScalePow2(std::nextafter(atBoundary, kInf), 1.0f, kE4M3Max, 0),
        pow2(k - 1))
        << k;
    EXPECT_EQ(
        computeScalePow2(std::nextafter(atBoundary, 0.0f), 1.0f, kE4M3Max, 0),
        pow2(k))
        << k;
  }
  // Random amaxes over a wide range, for all three formats: the result agrees
  // with the ilogb reference, and amax * scale stays within fpMax.
  uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float amax = std::ldexp(1.0f + (state >> 8) * 0x1p-24f,
                                  static_cast<int>(state % 160) - 100);
    for (float fpMax : {kE4M3Max, kE5M2Max, kF16Max}) {
      const float scale = computeScalePow2(amax, 1.0f, fpMax, 0);
      ASSERT_EQ(scale, referencePow2Scale(amax, fpMax, 0)) << amax;
      if (scale < pow2(127)) {
        ASSERT_LE(static_cast<double>(amax) * scale, fpMax) << amax;
      }
    }
  }
}

// computeScalePow2 never divides; this checks the claim in Scaling.h that its
// exponent equals that of the f32 quotient whenever the quotient is normal,
// for arbitrary operands (subnormal ones included), not only FP8 maxima.
TEST(ScalingTest, Pow2ExponentEqualsThatOfTheF32Quotient) {
  uint64_t state = 0x1234567887654321ull;
  auto nextPositive = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t bits = static_cast<uint32_t>(state >> 33); // sign bit clear
    // Two thirds of the draws get significands within a few ulps of 2 or of
    // 1, where a rounded quotient could land on a power of two.
    const uint32_t low = (state >> 20) & 0xFu;
    switch ((state >> 24) % 3) {
    case 0:
      bits = (bits & 0x7F800000u) | 0x7FFFF0u | low;
      break;
    case 1:
      bits = (bits & 0x7F800000u) | low;
      break;
    default:
      break;
    }
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    return x;
  };
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float fpMax = nextPositive(), amax = nextPositive();
    if (!std::isfinite(fpMax) || !std::isfinite(amax) || fpMax == 0.0f ||
        amax == 0.0f)
      continue;
    const float quotient = fpMax / amax;
    if (!std::isnormal(quotient))
      continue;
    ++checked;
    ASSERT_EQ(computeScalePow2(amax, 1.0f, fpMax, 0),
              pow2(std::min(127, std::max(-126, std::ilogb(quotient)))))
        << fpMax << " / " << amax;
  }
  EXPECT_GT(checked, 100000);
}

TEST(ScalingTest, ExactMatchesTransformerEngine) {
  const float prev = 3.0f;
  EXPECT_EQ(computeScaleExact(10.0f, prev, kE4M3Max, 0), 448.0f / 10.0f);
  EXPECT_EQ(computeScaleExact(10.0f, prev, kE4M3Max, 1), 224.0f / 10.0f);
  EXPECT_EQ(computeScaleExact(10.0f, prev, kE4M3Max, -2), 1792.0f / 10.0f);
  EXPECT_EQ(computeScaleExact(3.0f, prev, kE5M2Max, 0), 57344.0f / 3.0f);
  EXPECT_EQ(computeScaleExact(448.0f, prev, kE4M3Max, 0), 1.0f);
  EXPECT_EQ(computeScaleExact(0.0f, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScaleExact(kNaN, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScaleExact(kInf, prev, kE4M3Max, 0), prev);
  EXPECT_EQ(computeScaleExact(-1.0f, prev, kE4M3Max, 0), prev);
  // A scale that overflows f32 is clamped to FLT_MAX, as TE does.
  EXPECT_EQ(computeScaleExact(1e-38f, prev, kE4M3Max, 0), FLT_MAX);
  EXPECT_EQ(computeScaleExact(std::ldexp(1.0f, -149), prev, kE4M3Max, 0),
            FLT_MAX);
}

TEST(ScalingTest, ComputeScaleDispatches) {
  EXPECT_EQ(computeScale(ScaleKind::Pow2, 10.0f, 1.0f, kE4M3Max, 0), 32.0f);
  EXPECT_EQ(computeScale(ScaleKind::Exact, 10.0f, 1.0f, kE4M3Max, 0), 44.8f);
  EXPECT_EQ(computeScale(ScaleKind::Pow2, 0.0f, 7.0f, kE4M3Max, 0), 7.0f);
  EXPECT_EQ(computeScale(ScaleKind::Exact, 0.0f, 7.0f, kE4M3Max, 0), 7.0f);
}

//===----------------------------------------------------------------------===//
// amax history
//===----------------------------------------------------------------------===//

TEST(ScalingTest, HistoryRollLengthOne) {
  const float in[1] = {5.0f};
  float out[1] = {0.0f};
  updateAmaxHistory(in, out, 1, 7.0f);
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(reduceAmaxHistory(out, 1, AmaxAlgo::Max), 7.0f);
  EXPECT_EQ(reduceAmaxHistory(out, 1, AmaxAlgo::MostRecent), 7.0f);
}

TEST(ScalingTest, HistoryRollLengthFour) {
  const float in[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  float out[4] = {};
  updateAmaxHistory(in, out, 4, 9.0f);
  EXPECT_EQ(std::vector<float>(out, out + 4),
            (std::vector<float>{9.0f, 1.0f, 2.0f, 3.0f}));
  // The input is untouched.
  EXPECT_EQ(std::vector<float>(in, in + 4),
            (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
}

TEST(ScalingTest, HistoryRollInPlace) {
  float history[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  updateAmaxHistory(history, history, 4, 9.0f);
  EXPECT_EQ(std::vector<float>(history, history + 4),
            (std::vector<float>{9.0f, 1.0f, 2.0f, 3.0f}));
  updateAmaxHistory(history, history, 4, 8.0f);
  EXPECT_EQ(std::vector<float>(history, history + 4),
            (std::vector<float>{8.0f, 9.0f, 1.0f, 2.0f}));
  updateAmaxHistory(history, history, 0, 1.0f); // no-op
  EXPECT_EQ(history[0], 8.0f);
}

TEST(ScalingTest, ReduceMaxVersusMostRecent) {
  const float history[3] = {1.0f, 5.0f, 3.0f};
  EXPECT_EQ(reduceAmaxHistory(history, 3, AmaxAlgo::Max), 5.0f);
  EXPECT_EQ(reduceAmaxHistory(history, 3, AmaxAlgo::MostRecent), 1.0f);
  EXPECT_EQ(reduceAmaxHistory(history, 1, AmaxAlgo::Max), 1.0f);
  EXPECT_EQ(reduceAmaxHistory(history, 0, AmaxAlgo::Max), 0.0f);
}

TEST(ScalingTest, ReducePropagatesNaNAndInf) {
  for (int pos = 0; pos < 4; ++pos) {
    float history[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    history[pos] = kNaN;
    EXPECT_TRUE(std::isnan(reduceAmaxHistory(history, 4, AmaxAlgo::Max)))
        << pos;
    // ... which makes the scale update keep the previous scale.
    EXPECT_EQ(computeScalePow2(reduceAmaxHistory(history, 4, AmaxAlgo::Max),
                               0.25f, kE4M3Max, 0),
              0.25f);
  }
  const float withNaNLater[3] = {2.0f, kNaN, 1.0f};
  EXPECT_EQ(reduceAmaxHistory(withNaNLater, 3, AmaxAlgo::MostRecent), 2.0f);
  const float withInf[3] = {2.0f, kInf, 1.0f};
  EXPECT_EQ(reduceAmaxHistory(withInf, 3, AmaxAlgo::Max), kInf);
}

TEST(ScalingTest, AmaxOfBuffer) {
  EXPECT_EQ(amax(nullptr, 0), 0.0f);
  const float mixed[] = {-3.0f, 2.0f, 0.5f};
  EXPECT_EQ(amax(mixed, 3), 3.0f);
  const float negZero[] = {-0.0f};
  EXPECT_EQ(amax(negZero, 1), 0.0f);
  EXPECT_FALSE(std::signbit(amax(negZero, 1)));
  const float withNegInf[] = {1.0f, -kInf, 2.0f};
  EXPECT_EQ(amax(withNegInf, 3), kInf);
  const float withNaN[] = {1.0f, kNaN, kInf};
  EXPECT_TRUE(std::isnan(amax(withNaN, 3)));
  const float withNegNaN[] = {-kNaN, 1.0f};
  EXPECT_TRUE(std::isnan(amax(withNegNaN, 2)));
  const float subnormal[] = {-std::ldexp(1.0f, -140), std::ldexp(1.0f, -145)};
  EXPECT_EQ(amax(subnormal, 2), std::ldexp(1.0f, -140));
}

// The MS-AMP delayed update with a window of 16 (FP8Linear input/ograd): at
// each step the step's amax is inserted and the scale is f(max of the last
// 16 amaxes, this step's included) (docs/Numerics.md 2.1).
TEST(ScalingTest, MsAmpWindowOfSixteen) {
  constexpr int kWindow = 16;
  std::vector<float> amaxes;
  for (int t = 0; t < 48; ++t)
    amaxes.push_back(std::ldexp(1.0f + t / 64.0f, (t * 5) % 7 - 3));
  amaxes[5] = 1000.0f; // a spike that must stay in the window for 16 steps
  amaxes[30] = 0.001f; // a dip that must not lower the max
  amaxes[40] = 0.0f;   // an idle step

  float history[kWindow] = {};
  float scale = 1.0f;
  std::vector<float> scales;
  for (int t = 0; t < static_cast<int>(amaxes.size()); ++t) {
    updateAmaxHistory(history, history, kWindow, amaxes[t]);
    scale = computeScalePow2(reduceAmaxHistory(history, kWindow, AmaxAlgo::Max),
                             scale, kE4M3Max, 0);
    const float windowMax = *std::max_element(
        amaxes.begin() + std::max(0, t - kWindow + 1), amaxes.begin() + t + 1);
    EXPECT_EQ(scale, referencePow2Scale(windowMax, kE4M3Max, 0))
        << "step " << t;
    if (t >= 5 && t < 5 + kWindow) {
      EXPECT_EQ(scale, 0.25f) << "spike of 1000 still in the window at " << t;
    }
    scales.push_back(scale);
  }
  EXPECT_GE(scales[5 + kWindow], 32.0f) << "the spike has left the window";
}

} // namespace
