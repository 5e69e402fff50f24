//===- PhiloxTest.cpp - Philox4x32-10 and the step's random stream
//---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Known answers of Philox4x32-10 and the statistics of the dropout masks that
// the compiled step draws from include/MSAMP/Numerics/Philox.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace msamp::numerics;

namespace {

// The known-answer table of Philox4x32 with 10 rounds published with
// Random123 (Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy
// as 1, 2, 3", SC'11; the kat_vectors file of the Random123 distribution):
// counter words 0..3, key words 0..1, expected output words 0..3.
struct Kat {
  uint32_t ctr[4], key[2], out[4];
};
const Kat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  for (const Kat &k : kKats) {
    Philox4x32 c = {{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}};
    Philox4x32 r = philox4x32_10(c, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(r.v[i], k.out[i])
          << "word " << i << " of counter " << std::hex << k.ctr[0];
  }
}

TEST(PhiloxTest, RandomBitsAreTheKeyedCounter) {
  // The keying of the header comment: key = seed halves, counter = (index,
  // op, step, rank), output words 0 and 1 with word 0 high.
  uint64_t seed = 0x299f31d0a4093822ull;
  Philox4x32 c = {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
  Philox4x32 r = philox4x32_10(c, 0xa4093822, 0x299f31d0);
  EXPECT_EQ(randomBits(seed, 0x13198a2e, 0x03707344, 0x85a308d3, 0x243f6a88),
            (uint64_t{r.v[0]} << 32) | r.v[1]);
  EXPECT_EQ(randomBits(seed, 0x13198a2e, 0x03707344, 0x85a308d3, 0x243f6a88),
            0xd16cfe0994fdccebull);
}

/// The keep mask of dropout(p) for `n` elements of one (seed, step, rank, op).
std::vector<uint8_t> mask(uint64_t seed, uint64_t step, uint32_t rank,
                          uint32_t op, uint32_t n, double keep) {
  std::vector<uint8_t> m(n);
  for (uint32_t i = 0; i < n; ++i)
    m[i] = randomUniform(seed, step, rank, op, i) < keep;
  return m;
}

TEST(PhiloxTest, KeepRateWithinFourSigma) {
  const uint32_t n = 1u << 21; // > 10^6 draws
  for (double keep : {0.9, 0.5, 0.1}) {
    std::vector<uint8_t> m = mask(7, 3, 0, 1, n, keep);
    double kept = 0;
    for (uint8_t b : m)
      kept += b;
    double sigma = std::sqrt(n * keep * (1 - keep));
    EXPECT_LT(std::fabs(kept - n * keep), 4 * sigma) << "keep " << keep;
  }
}

TEST(PhiloxTest, UniformsCoverTheUnitInterval) {
  // Ten equal bins of 10^6 draws: each within 4 sigma of its expectation.
  const uint32_t n = 1000000;
  std::vector<double> bins(10, 0.0);
  for (uint32_t i = 0; i < n; ++i) {
    double u = randomUniform(1, 0, 0, 0, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    bins[static_cast<int>(u * 10)] += 1;
  }
  double sigma = std::sqrt(n * 0.1 * 0.9);
  for (double b : bins)
    EXPECT_LT(std::fabs(b - n * 0.1), 4 * sigma);
}

/// Pearson correlation of two masks (as 0/1 sequences).
double correlation(const std::vector<uint8_t> &a,
                   const std::vector<uint8_t> &b) {
  double n = a.size(), sa = 0, sb = 0, sab = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sa += a[i];
    sb += b[i];
    sab += a[i] * b[i];
  }
  double ma = sa / n, mb = sb / n;
  double cov = sab / n - ma * mb;
  return cov / std::sqrt(ma * (1 - ma) * mb * (1 - mb));
}

TEST(PhiloxTest, StreamsOfRanksStepsOpsAndSeedsAreUncorrelated) {
  // The correlation of two independent 0/1 sequences of length n is about
  // normal with standard deviation 1/sqrt(n): 4 sigma is 4/sqrt(n).
  const uint32_t n = 1u << 20;
  const double keep = 0.9, bound = 4.0 / std::sqrt(static_cast<double>(n));
  std::vector<uint8_t> base = mask(11, 5, 0, 2, n, keep);
  struct Other {
    const char *what;
    std::vector<uint8_t> m;
  } others[] = {{"rank 1", mask(11, 5, 1, 2, n, keep)},
                {"step 6", mask(11, 6, 0, 2, n, keep)},
                {"op 3", mask(11, 5, 0, 3, n, keep)},
                {"seed 12", mask(12, 5, 0, 2, n, keep)}};
  for (const Other &o : others) {
    EXPECT_NE(o.m, base) << o.what;
    EXPECT_LT(std::fabs(correlation(base, o.m)), bound) << o.what;
  }
  // Neighbouring elements of one stream neither.
  std::vector<uint8_t> shifted(base.begin() + 1, base.end());
  std::vector<uint8_t> head(base.begin(), base.end() - 1);
  EXPECT_LT(std::fabs(correlation(head, shifted)), bound);
}

} // namespace
