//===- RankCheckTest.cpp - the values ranks compare at start-up -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The start-up check sends each setting as 64 bits and names a difference
// with both values' spellings; the conversions must be exact and the
// spellings what the messages promise.
//
//===----------------------------------------------------------------------===//

#include "RankCheck.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace msamp::run;

namespace {

TEST(RankCheck, HashPrefixIsTheFirst64Bits) {
  EXPECT_EQ(hashPrefix("0123456789abcdef0011"), 0x0123456789abcdefull);
  EXPECT_EQ(hashPrefix("sha256:fedcba9876543210ff"), 0xfedcba9876543210ull);
  EXPECT_EQ(spellHash(0x0123456789abcdefull), "0123456789abcdef...");
}

TEST(RankCheck, DoublesTravelExactly) {
  // bitsOf keeps every bit: 0.1 and its neighbour differ.
  EXPECT_NE(bitsOf(0.1), bitsOf(std::nextafter(0.1, 1.0)));
  EXPECT_EQ(bitsOf(-0.0), 0x8000000000000000ull);
  EXPECT_EQ(spellDouble(bitsOf(3e-4)), "0.0003");
  EXPECT_EQ(spellDouble(bitsOf(0.1)), "0.1");
}

TEST(RankCheck, SpellInt) {
  EXPECT_EQ(spellInt(42), "42");
  // -1 (an option left at its default) survives the trip through uint64_t.
  EXPECT_EQ(spellInt(static_cast<uint64_t>(int64_t{-1})), "-1");
}

TEST(RankCheck, OneRankHasNothingToCompare) {
  EXPECT_EQ(checkSameOnAllRanks({{"level", 2, spellInt}}, "at start-up"), 0);
}

} // namespace
