//===- FP8Test.cpp - Tests for the FP8/FP16 encoders and decoders ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every expectation here is derived without the bit tricks FP8.h uses: code
// values come from std::ldexp on the bit fields, rounding from a brute-force
// nearest-even search in double, and binary16 from the compiler's _Float16
// where it has one. A shared mistake would have to be made twice, differently.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/FP8.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace msamp::numerics;

namespace {

float bitsToFloat(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

uint32_t floatToBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Field layout of a small binary float, for computing values independently.
struct Layout {
  int expBits;
  int manBits;
  int bias;
  bool ieeeSpecials; // all-ones exponent = Inf/NaN (E5M2, F16); else E4M3FN
};

constexpr Layout kE4M3{4, 3, 7, false};
constexpr Layout kE5M2{5, 2, 15, true};
constexpr Layout kF16{5, 10, 15, true};

/// The value of `code` from its sign, exponent and mantissa fields.
double referenceValue(uint32_t code, Layout l) {
  const int totalBits = 1 + l.expBits + l.manBits;
  const bool negative = (code >> (totalBits - 1)) & 1u;
  const uint32_t expField = (code >> l.manBits) & ((1u << l.expBits) - 1u);
  const uint32_t mantissa = code & ((1u << l.manBits) - 1u);
  const uint32_t expAllOnes = (1u << l.expBits) - 1u;
  double value;
  if (l.ieeeSpecials && expField == expAllOnes)
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  else if (!l.ieeeSpecials && expField == expAllOnes &&
           mantissa == (1u << l.manBits) - 1u)
    value = std::numeric_limits<double>::quiet_NaN();
  else if (expField == 0)
    value = std::ldexp(static_cast<double>(mantissa), 1 - l.bias - l.manBits);
  else
    value = std::ldexp(static_cast<double>((1u << l.manBits) | mantissa),
                       static_cast<int>(expField) - l.bias - l.manBits);
  return negative ? -value : value;
}

void expectSameFloat(float actual, double expected, uint32_t code) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "code 0x" << std::hex << code;
    return;
  }
  EXPECT_EQ(actual, static_cast<float>(expected))
      << "code 0x" << std::hex << code;
  EXPECT_EQ(std::signbit(actual), std::signbit(expected))
      << "code 0x" << std::hex << code;
}

/// Saturating round-to-nearest-even by exhaustive search over the finite,
/// non-negative codes of an FP8 format (what the bit manipulation must equal).
uint8_t bruteForceEncode(float x, Layout l, uint8_t maxCode) {
  if (std::isnan(x))
    return 0x7F;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double target = std::fabs(static_cast<double>(x));
  uint8_t best = 0;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (uint32_t code = 0; code <= maxCode; ++code) {
    const double distance = std::fabs(referenceValue(code, l) - target);
    // Codes of one sign are ordered like their values, so "even" is the
    // code's lowest bit.
    if (distance < bestDistance ||
        (distance == bestDistance && (code & 1u) == 0)) {
      best = static_cast<uint8_t>(code);
      bestDistance = distance;
    }
  }
  // Above max the nearest code is max anyway: that is the saturation.
  return static_cast<uint8_t>(sign | best);
}

/// splitmix64, a tiny deterministic generator for sampled inputs.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

/// Inputs that stress an FP8 encoder: random bit patterns restricted to the
/// exponents around the format's range, plus small multiples of a fine grid
/// (which hit exact ties).
std::vector<float> sampleInputs(uint64_t seed, int minExp, int maxExp) {
  SplitMix64 rng{seed};
  std::vector<float> inputs;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t r = rng.next();
    const int exp =
        minExp + static_cast<int>((r >> 32) % (maxExp - minExp + 1));
    const uint32_t mantissa = static_cast<uint32_t>(r) & 0x7FFFFFu;
    const uint32_t sign = (r >> 63) ? 0x80000000u : 0u;
    if (i % 2 == 0)
      inputs.push_back(bitsToFloat(
          sign | (static_cast<uint32_t>(exp + 127) << 23) | mantissa));
    else // mantissa with at most 6 significant bits: ties for both formats
      inputs.push_back((sign ? -1.0f : 1.0f) *
                       std::ldexp(static_cast<float>(mantissa >> 17), exp - 5));
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

TEST(FP8Test, MaxFiniteMatchesLargestCode) {
  static_assert(maxFinite(Format::E4M3) == 448.0f, "");
  static_assert(maxFinite(Format::E5M2) == 57344.0f, "");
  static_assert(maxFinite(Format::F16) == 65504.0f, "");
  EXPECT_EQ(decodeE4M3(0x7E), maxFinite(Format::E4M3));
  EXPECT_EQ(decodeE5M2(0x7B), maxFinite(Format::E5M2));
  EXPECT_EQ(decodeF16(0x7BFF), maxFinite(Format::F16));
  EXPECT_TRUE(std::isnan(decodeE4M3(kE4M3CanonicalNaN)));
  EXPECT_TRUE(std::isnan(decodeE5M2(kE5M2CanonicalNaN)));
}

TEST(FP8Test, DecodeE4M3AllCodes) {
  for (uint32_t code = 0; code < 256; ++code)
    expectSameFloat(decodeE4M3(static_cast<uint8_t>(code)),
                    referenceValue(code, kE4M3), code);
  // Spot checks of the layout itself, in case referenceValue shares a bug.
  EXPECT_EQ(decodeE4M3(0x38), 1.0f);
  EXPECT_EQ(decodeE4M3(0x08), 0.015625f); // min normal 2^-6
  EXPECT_EQ(decodeE4M3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(decodeE4M3(0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(decodeE4M3(0xFF)));
  EXPECT_TRUE(std::signbit(decodeE4M3(0x80)));
}

TEST(FP8Test, DecodeE5M2AllCodes) {
  for (uint32_t code = 0; code < 256; ++code)
    expectSameFloat(decodeE5M2(static_cast<uint8_t>(code)),
                    referenceValue(code, kE5M2), code);
  EXPECT_EQ(decodeE5M2(0x3C), 1.0f);
  EXPECT_EQ(decodeE5M2(0x04), std::ldexp(1.0f, -14));
  EXPECT_EQ(decodeE5M2(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(decodeE5M2(0x7C), kInf);
  EXPECT_EQ(decodeE5M2(0xFC), -kInf);
  for (uint8_t code : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF})
    EXPECT_TRUE(std::isnan(decodeE5M2(code))) << int(code);
}

//===----------------------------------------------------------------------===//
// Encoding: round trips and the boundary cases of docs/Numerics.md 1.2
//===----------------------------------------------------------------------===//

TEST(FP8Test, E4M3RoundTripsEveryCode) {
  for (uint32_t code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    if ((c & 0x7F) == 0x7F)
      EXPECT_EQ(encodeE4M3(decodeE4M3(c)), kE4M3CanonicalNaN);
    else
      EXPECT_EQ(encodeE4M3(decodeE4M3(c)), c) << "code " << code;
  }
  EXPECT_EQ(encodeE4M3(0.0f), 0x00);
  EXPECT_EQ(encodeE4M3(-0.0f), 0x80);
}

TEST(FP8Test, E5M2RoundTripsEveryCode) {
  for (uint32_t code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    const uint8_t mag = c & 0x7F;
    if (mag > 0x7C)
      EXPECT_EQ(encodeE5M2(decodeE5M2(c)), kE5M2CanonicalNaN);
    else if (mag == 0x7C) // Inf decodes, then saturates on the way back
      EXPECT_EQ(encodeE5M2(decodeE5M2(c)), (c & 0x80) | 0x7B);
    else
      EXPECT_EQ(encodeE5M2(decodeE5M2(c)), c) << "code " << code;
  }
  EXPECT_EQ(encodeE5M2(0.0f), 0x00);
  EXPECT_EQ(encodeE5M2(-0.0f), 0x80);
}

TEST(FP8Test, E4M3SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(encodeE4M3(448.0f), 0x7E);
  EXPECT_EQ(encodeE4M3(464.0f), 0x7E); // 448 + half ulp: tie, 448 is even
  EXPECT_EQ(encodeE4M3(std::nextafter(464.0f, kInf)), 0x7E); // rounds to 480
  EXPECT_EQ(encodeE4M3(480.0f), 0x7E);
  EXPECT_EQ(encodeE4M3(1e30f), 0x7E);
  EXPECT_EQ(encodeE4M3(FLT_MAX), 0x7E);
  EXPECT_EQ(encodeE4M3(kInf), 0x7E);
  EXPECT_EQ(encodeE4M3(-kInf), 0xFE);
  EXPECT_EQ(encodeE4M3(-464.0f), 0xFE);
  EXPECT_EQ(encodeE4M3(-1e30f), 0xFE);
  // Just below max the ordinary rounding applies: 432 is the midpoint of 416
  // (0x7D, odd) and 448 (0x7E, even).
  EXPECT_EQ(encodeE4M3(432.0f), 0x7E);
  EXPECT_EQ(encodeE4M3(std::nextafter(432.0f, 0.0f)), 0x7D);
}

TEST(FP8Test, E4M3NaNIsCanonical) {
  EXPECT_EQ(encodeE4M3(kNaN), 0x7F);
  EXPECT_EQ(encodeE4M3(-kNaN), 0x7F);
  EXPECT_EQ(encodeE4M3(bitsToFloat(0x7F800001)), 0x7F); // signalling
  EXPECT_EQ(encodeE4M3(bitsToFloat(0xFFFFFFFF)), 0x7F);
}

TEST(FP8Test, E4M3Subnormals) {
  const float minSub = std::ldexp(1.0f, -9);
  EXPECT_EQ(encodeE4M3(minSub), 0x01);
  EXPECT_EQ(encodeE4M3(minSub / 2), 0x00); // tie between 0 and 2^-9: even
  EXPECT_EQ(encodeE4M3(std::nextafter(minSub / 2, 1.0f)), 0x01);
  EXPECT_EQ(encodeE4M3(-minSub / 2), 0x80);
  EXPECT_EQ(encodeE4M3(0.75f * minSub), 0x01);
  EXPECT_EQ(encodeE4M3(0.25f * minSub), 0x00);
  EXPECT_EQ(encodeE4M3(1.5f * minSub), 0x02); // tie 1 (odd) / 2: up
  EXPECT_EQ(encodeE4M3(2.5f * minSub), 0x02); // tie 2 (even) / 3: down
  EXPECT_EQ(encodeE4M3(7.0f * minSub), 0x07); // largest subnormal
  EXPECT_EQ(encodeE4M3(7.5f * minSub), 0x08); // carry into min normal 2^-6
  EXPECT_EQ(encodeE4M3(bitsToFloat(0x00000001)), 0x00); // f32 subnormals
  EXPECT_EQ(encodeE4M3(bitsToFloat(0x807FFFFF)), 0x80);
  EXPECT_EQ(encodeE4M3(FLT_MIN), 0x00);
}

TEST(FP8Test, E4M3CarryIntoNextBinade) {
  // 1.9375 is the midpoint of 1.875 (0x3F, odd) and 2.0 (0x40).
  EXPECT_EQ(encodeE4M3(1.9375f), 0x40);
  EXPECT_EQ(encodeE4M3(std::nextafter(1.9375f, 0.0f)), 0x3F);
  EXPECT_EQ(encodeE4M3(248.0f), 0x78); // midpoint of 240 (0x77) and 256
}

TEST(FP8Test, E4M3MidpointsRoundToEven) {
  for (uint32_t code = 0; code < 0x7E; ++code) {
    const float lo = decodeE4M3(static_cast<uint8_t>(code));
    const float hi = decodeE4M3(static_cast<uint8_t>(code + 1));
    const float mid = (lo + hi) / 2; // exact: at most 5 significant bits
    const uint8_t even = (code & 1u) ? code + 1 : code;
    EXPECT_EQ(encodeE4M3(mid), even) << "between codes " << code;
    EXPECT_EQ(encodeE4M3(-mid), 0x80 | even) << "between codes " << code;
    EXPECT_EQ(encodeE4M3(std::nextafter(mid, 0.0f)), code);
    EXPECT_EQ(encodeE4M3(std::nextafter(mid, kInf)), code + 1);
  }
}

TEST(FP8Test, E5M2SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(encodeE5M2(57344.0f), 0x7B);
  EXPECT_EQ(encodeE5M2(61440.0f), 0x7B); // tie, RNE would pick 65536 = Inf
  EXPECT_EQ(encodeE5M2(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(encodeE5M2(65536.0f), 0x7B);
  EXPECT_EQ(encodeE5M2(1e30f), 0x7B);
  EXPECT_EQ(encodeE5M2(kInf), 0x7B);
  EXPECT_EQ(encodeE5M2(-kInf), 0xFB);
  EXPECT_EQ(encodeE5M2(-61440.0f), 0xFB);
  EXPECT_EQ(encodeE5M2(kNaN), 0x7F);
  EXPECT_EQ(encodeE5M2(-kNaN), 0x7F);
}

TEST(FP8Test, E5M2Subnormals) {
  const float minSub = std::ldexp(1.0f, -16);
  EXPECT_EQ(encodeE5M2(minSub), 0x01);
  EXPECT_EQ(encodeE5M2(minSub / 2), 0x00);
  EXPECT_EQ(encodeE5M2(-minSub / 2), 0x80);
  EXPECT_EQ(encodeE5M2(0.75f * minSub), 0x01);
  EXPECT_EQ(encodeE5M2(1.5f * minSub), 0x02);
  EXPECT_EQ(encodeE5M2(3.0f * minSub), 0x03); // largest subnormal
  EXPECT_EQ(encodeE5M2(3.5f * minSub), 0x04); // carry into min normal 2^-14
}

TEST(FP8Test, E5M2MidpointsRoundToEven) {
  for (uint32_t code = 0; code < 0x7B; ++code) {
    const float lo = decodeE5M2(static_cast<uint8_t>(code));
    const float hi = decodeE5M2(static_cast<uint8_t>(code + 1));
    const float mid = (lo + hi) / 2;
    const uint8_t even = (code & 1u) ? code + 1 : code;
    EXPECT_EQ(encodeE5M2(mid), even) << "between codes " << code;
    EXPECT_EQ(encodeE5M2(-mid), 0x80 | even) << "between codes " << code;
    EXPECT_EQ(encodeE5M2(std::nextafter(mid, 0.0f)), code);
    EXPECT_EQ(encodeE5M2(std::nextafter(mid, kInf)), code + 1);
  }
}

TEST(FP8Test, E4M3MatchesBruteForceNearestEven) {
  for (float x : sampleInputs(1, -13, 10))
    ASSERT_EQ(encodeE4M3(x), bruteForceEncode(x, kE4M3, 0x7E)) << x;
}

TEST(FP8Test, E5M2MatchesBruteForceNearestEven) {
  for (float x : sampleInputs(2, -20, 17))
    ASSERT_EQ(encodeE5M2(x), bruteForceEncode(x, kE5M2, 0x7B)) << x;
}

//===----------------------------------------------------------------------===//
// binary16
//===----------------------------------------------------------------------===//

TEST(FP8Test, DecodeF16AllPatterns) {
  for (uint32_t bits = 0; bits < 65536; ++bits)
    expectSameFloat(decodeF16(static_cast<uint16_t>(bits)),
                    referenceValue(bits, kF16), bits);
}

TEST(FP8Test, F16RoundTripsEveryPattern) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const uint16_t b = static_cast<uint16_t>(bits);
    const float x = decodeF16(b);
    if (std::isnan(x)) // payload kept, quiet bit set
      EXPECT_EQ(encodeF16(x), (b & 0x8000) | 0x7E00) << bits;
    else
      EXPECT_EQ(encodeF16(x), b) << bits;
  }
}

TEST(FP8Test, F16MidpointsRoundToEven) {
  for (uint32_t bits = 0; bits < 0x7BFF; ++bits) {
    const float lo = decodeF16(static_cast<uint16_t>(bits));
    const float hi = decodeF16(static_cast<uint16_t>(bits + 1));
    const float mid = (lo + hi) / 2; // 12 significant bits: exact
    const uint16_t even = (bits & 1u) ? bits + 1 : bits;
    ASSERT_EQ(encodeF16(mid), even) << bits;
    ASSERT_EQ(encodeF16(-mid), 0x8000 | even) << bits;
    ASSERT_EQ(encodeF16(std::nextafter(mid, 0.0f)), bits);
    ASSERT_EQ(encodeF16(std::nextafter(mid, kInf)), bits + 1);
  }
}

TEST(FP8Test, F16OverflowsToInfinity) {
  EXPECT_EQ(encodeF16(65504.0f), 0x7BFF);
  EXPECT_EQ(encodeF16(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(encodeF16(65520.0f), 0x7C00); // tie with 65536: even is Inf
  EXPECT_EQ(encodeF16(1e30f), 0x7C00);
  EXPECT_EQ(encodeF16(kInf), 0x7C00);
  EXPECT_EQ(encodeF16(-kInf), 0xFC00);
  EXPECT_EQ(encodeF16(-70000.0f), 0xFC00);
  EXPECT_EQ(encodeF16(kNaN), 0x7E00);
  EXPECT_EQ(encodeF16(-kNaN), 0xFE00);
}

TEST(FP8Test, F16Subnormals) {
  const float minSub = std::ldexp(1.0f, -24);
  EXPECT_EQ(encodeF16(minSub), 0x0001);
  EXPECT_EQ(encodeF16(minSub / 2), 0x0000);
  EXPECT_EQ(encodeF16(std::nextafter(minSub / 2, 1.0f)), 0x0001);
  EXPECT_EQ(encodeF16(1.5f * minSub), 0x0002);
  EXPECT_EQ(encodeF16(-minSub), 0x8001);
  EXPECT_EQ(encodeF16(std::ldexp(1023.5f, -24)), 0x0400); // carry to normal
  EXPECT_EQ(encodeF16(-0.0f), 0x8000);
  EXPECT_EQ(encodeF16(bitsToFloat(0x00000001)), 0x0000);
}

#if defined(__FLT16_MAX__)
// The compiler's own f32 -> binary16 conversion as an independent oracle.
TEST(FP8Test, F16MatchesCompilerFloat16) {
  SplitMix64 rng{3};
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng.next() >> 32);
    if (i % 2) // concentrate on binary16's exponent range
      bits = (bits & 0x807FFFFFu) |
             (static_cast<uint32_t>(127 - 26 + (bits >> 23) % 44) << 23);
    const float x = bitsToFloat(bits);
    if (std::isnan(x))
      continue;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t expected;
    std::memcpy(&expected, &h, sizeof(expected));
    ASSERT_EQ(encodeF16(x), expected) << std::hex << bits;
  }
}
#endif

//===----------------------------------------------------------------------===//
// Dispatch, scaled casts, and the all-reduce hop
//===----------------------------------------------------------------------===//

TEST(FP8Test, DispatchMatchesPerFormatFunctions) {
  for (float x : {0.0f, -0.0f, 1.0f, -3.3f, 500.0f, 1e-6f, 70000.0f, kInf}) {
    EXPECT_EQ(encode(Format::E4M3, x), encodeE4M3(x));
    EXPECT_EQ(encode(Format::E5M2, x), encodeE5M2(x));
    EXPECT_EQ(encode(Format::F16, x), encodeF16(x));
  }
  for (uint32_t code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    EXPECT_EQ(floatToBits(decode(Format::E4M3, c)), floatToBits(decodeE4M3(c)));
    EXPECT_EQ(floatToBits(decode(Format::E5M2, c)), floatToBits(decodeE5M2(c)));
    // Only the low byte is an FP8 code.
    EXPECT_EQ(floatToBits(decode(Format::E4M3, 0x100 | c)),
              floatToBits(decodeE4M3(c)));
  }
  EXPECT_EQ(decode(Format::F16, 0x3C00), 1.0f);
}

TEST(FP8Test, QuantizeAndDequantizeWithScale) {
  // amax 10 with the MS-AMP scale 32: 10 * 32 = 320 = 1.25 * 2^8.
  EXPECT_EQ(quantize(Format::E4M3, 10.0f, 32.0f), 0x7A);
  EXPECT_EQ(dequantize(Format::E4M3, 0x7A, 1.0f / 32), 10.0f);
  EXPECT_EQ(quantize(Format::E4M3, -10.0f, 32.0f), 0xFA);
  // The scale pushes 20 past max: saturation, not NaN.
  EXPECT_EQ(quantize(Format::E4M3, 20.0f, 32.0f), 0x7E);
  EXPECT_EQ(quantize(Format::E5M2, 1.0f, 32768.0f), 0x78); // 2^15
  EXPECT_EQ(dequantize(Format::E5M2, 0x78, 1.0f / 32768), 1.0f);
  // F16 does not saturate: the scale is what keeps it finite.
  EXPECT_EQ(quantize(Format::F16, 70000.0f, 1.0f), 0x7C00);
  EXPECT_EQ(quantize(Format::F16, 70000.0f, 0.5f), encodeF16(35000.0f));
  EXPECT_EQ(dequantize(Format::F16, encodeF16(35000.0f), 2.0f), 70016.0f);
  EXPECT_TRUE(std::isnan(dequantize(Format::E4M3, 0x7F, 1.0f)));

  // The product is rounded to f32 once, then converted.
  SplitMix64 rng{4};
  for (int i = 0; i < 1000; ++i) {
    const float x =
        bitsToFloat(0x3F800000u | (static_cast<uint32_t>(rng.next()) >> 9));
    const float scale = 1.0f / 3.0f;
    EXPECT_EQ(quantize(Format::E4M3, x, scale), encodeE4M3(x * scale));
    EXPECT_EQ(quantize(Format::E5M2, x, scale), encodeE5M2(x * scale));
  }
}

TEST(FP8Test, AddViaHalfTestVectors) {
  // tests/operators/test_dist.py in MS-AMP (docs/Numerics.md 4.4).
  EXPECT_EQ(addViaHalf(Format::E4M3, 0x4A, 0x50), 0x55); // 5 + 8 = 13
  EXPECT_EQ(addViaHalf(Format::E4M3, 0x58, 0x5C), 0x62); // 16 + 24 = 40
  EXPECT_EQ(addViaHalf(Format::E4M3, 0x7E, 0x7E), 0x7E); // saturates
  EXPECT_EQ(addViaHalf(Format::E4M3, 0xFE, 0xFE), 0xFE);
  EXPECT_EQ(addViaHalf(Format::E4M3, 0x3A, 0xBA), 0x00); // x + -x = +0
  EXPECT_EQ(addViaHalf(Format::E4M3, 0x7F, 0x38), 0x7F); // NaN propagates
  // E5M2: 57344 + 57344 overflows binary16 to Inf, then saturates.
  EXPECT_EQ(addViaHalf(Format::E5M2, 0x7B, 0x7B), 0x7B);
  EXPECT_EQ(addViaHalf(Format::E5M2, 0x7C, 0x01), 0x7B); // Inf input
  EXPECT_EQ(addViaHalf(Format::E5M2, 0x7C, 0xFC), 0x7F); // Inf - Inf
  EXPECT_EQ(addViaHalf(Format::F16, 0x38, 0x38), 0x7F);  // not an FP8 format
}

#if defined(__FLT16_MAX__)
// Exhaustive over all code pairs: the exact sum (in double), rounded once to
// binary16 by the compiler, then saturated to FP8.
TEST(FP8Test, AddViaHalfMatchesSingleRoundingExhaustively) {
  for (Format f : {Format::E4M3, Format::E5M2}) {
    for (uint32_t a = 0; a < 256; ++a) {
      for (uint32_t b = 0; b < 256; ++b) {
        const double exact = static_cast<double>(decode(f, a)) +
                             static_cast<double>(decode(f, b));
        const _Float16 half = static_cast<_Float16>(exact);
        const uint16_t expected =
            encode(f, static_cast<float>(static_cast<double>(half)));
        const uint8_t actual =
            addViaHalf(f, static_cast<uint8_t>(a), static_cast<uint8_t>(b));
        if (std::isnan(exact))
          ASSERT_EQ(actual, 0x7F);
        else
          ASSERT_EQ(actual, expected)
              << "format " << int(f) << " a=" << a << " b=" << b;
      }
    }
  }
}
#endif

} // namespace
