//===- EncodeTableTest.cpp - FP8EncodeTable equals the core's encode -*- C++
//-*-===//
//
// The table encoder claims to be exact for every f32 input. Check it against
// the bit-level encoder on every f16 value, on every (upper 16 bits, sticky)
// class with several different lower halves, on the boundaries, and on a
// large random sample of raw bit patterns.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/FP8EncodeTable.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace msamp::numerics;

namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// Codes compare equal, or both decode to NaN.
void expectSameCode(Format format, float x) {
  uint8_t expected = static_cast<uint8_t>(
      format == Format::E4M3 ? encodeE4M3(x) : encodeE5M2(x));
  uint8_t actual = FP8EncodeTable::get(format).encode(x);
  ASSERT_EQ(expected, actual)
      << "input " << x << " (format " << static_cast<int>(format) << ")";
}

class EncodeTableTest : public ::testing::TestWithParam<Format> {};

TEST_P(EncodeTableTest, EveryUpperHalfWithSeveralLowerHalves) {
  // Lower halves that exercise "exactly zero", "just above zero", a middle
  // value and "all ones" for every sign/exponent/upper-mantissa combination.
  const uint32_t lowers[] = {0x0000, 0x0001, 0x8000, 0x7FFF, 0xFFFF};
  for (uint32_t upper = 0; upper < (1u << 16); ++upper)
    for (uint32_t lower : lowers)
      expectSameCode(GetParam(), fromBits((upper << 16) | lower));
}

TEST_P(EncodeTableTest, RandomBitPatterns) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    expectSameCode(GetParam(), fromBits(static_cast<uint32_t>(state >> 32)));
  }
}

TEST_P(EncodeTableTest, BoundariesAndSpecials) {
  float fpMax = maxFinite(GetParam());
  const float values[] = {
      0.0f,
      -0.0f,
      fpMax,
      -fpMax,
      std::nextafter(fpMax, 1e30f),
      fpMax * 1.0625f,
      1e30f,
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(),
      fromBits(0x7F800001u), // signalling NaN, low bits only
      fromBits(0x00000001u), // f32 subnormal
      std::ldexp(1.0f, -9),
      std::ldexp(1.0f, -10),
      std::ldexp(0.75f, -9),
      std::ldexp(1.0f, -16),
      std::ldexp(1.0f, -17)};
  for (float v : values)
    expectSameCode(GetParam(), v);
}

TEST_P(EncodeTableTest, QuantizeMatchesCore) {
  uint64_t state = 12345;
  const FP8EncodeTable &table = FP8EncodeTable::get(GetParam());
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float x = fromBits(static_cast<uint32_t>(state >> 32) & 0xBFFFFFFFu);
    float scale = std::ldexp(1.0f, static_cast<int>(state % 40) - 20);
    ASSERT_EQ(quantize(GetParam(), x, scale), table.quantize(x, scale));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, EncodeTableTest,
                         ::testing::Values(Format::E4M3, Format::E5M2),
                         [](const auto &info) {
                           return info.param == Format::E4M3 ? "E4M3" : "E5M2";
                         });

} // namespace
