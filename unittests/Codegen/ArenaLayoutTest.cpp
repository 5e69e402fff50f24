//===- ArenaLayoutTest.cpp - the static arena's offset assignment ---------===//
//
// Part of the msamp project. The property the GPU step's arena relies on
// (MSAMP/Codegen/ArenaLayout.h): two buffers live at the same time never
// share a byte; also alignment, the arena's size and its lower bound.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/ArenaLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir::msamp;

namespace {

int64_t alignedSize(int64_t bytes) {
  return (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;
}

/// Every property of a layout, checked pairwise.
void expectValid(const std::vector<ArenaInterval> &intervals,
                 const ArenaLayout &layout) {
  ASSERT_EQ(layout.offsets.size(), intervals.size());
  int64_t end = 0;
  for (size_t i = 0; i < intervals.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % 256, 0) << "buffer " << i;
    EXPECT_GE(layout.offsets[i], 0);
    end = std::max(end, layout.offsets[i] + alignedSize(intervals[i].bytes));
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      bool live = intervals[i].start <= intervals[j].end &&
                  intervals[j].start <= intervals[i].end;
      bool share = layout.offsets[i] < layout.offsets[j] + intervals[j].bytes &&
                   layout.offsets[j] < layout.offsets[i] + intervals[i].bytes;
      EXPECT_FALSE(live && share)
          << "buffers " << i << " [" << intervals[i].start << ", "
          << intervals[i].end << "] at " << layout.offsets[i] << " and " << j
          << " [" << intervals[j].start << ", " << intervals[j].end << "] at "
          << layout.offsets[j] << " overlap";
    }
  }
  EXPECT_EQ(layout.bytes, end);
  EXPECT_GE(layout.bytes, layout.peakBytes);
}

TEST(ArenaLayout, DisjointLifetimesShareTheArena) {
  std::vector<ArenaInterval> intervals = {
      {1000, 0, 1}, {3000, 2, 3}, {500, 4, 9}};
  ArenaLayout layout = layoutArena(intervals, 256);
  expectValid(intervals, layout);
  EXPECT_EQ(layout.offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(layout.bytes, 3072);
  EXPECT_EQ(layout.peakBytes, 3072);
}

TEST(ArenaLayout, OverlappingLifetimesGetTheirOwnBytes) {
  // 1 overlaps 0 and 2; 0 and 2 do not overlap, so they may share.
  std::vector<ArenaInterval> intervals = {
      {4096, 0, 5}, {256, 3, 8}, {4096, 6, 9}, {1, 10, 10}, {0, 10, 10}};
  ArenaLayout layout = layoutArena(intervals, 256);
  expectValid(intervals, layout);
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.bytes, 4096 + 256);
  EXPECT_EQ(layout.peakBytes, 4096 + 256);
  // Two live one-byte (and empty) buffers still get distinct addresses.
  EXPECT_NE(layout.offsets[3], layout.offsets[4]);
}

TEST(ArenaLayout, SamePositionIsLive) {
  // A buffer that ends where another starts is live at once with it.
  std::vector<ArenaInterval> intervals = {{512, 0, 4}, {512, 4, 6}};
  ArenaLayout layout = layoutArena(intervals, 256);
  expectValid(intervals, layout);
  EXPECT_NE(layout.offsets[0], layout.offsets[1]);
}

TEST(ArenaLayout, RandomLifetimesNeverOverlap) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + static_cast<int>(rng() % 60);
    std::vector<ArenaInterval> intervals;
    for (int i = 0; i < n; ++i) {
      unsigned start = rng() % 100;
      unsigned length = rng() % 30;
      // Sizes from a byte to a few MB, some repeated (steps reuse shapes).
      int64_t bytes = rng() % 4 == 0 ? 3 << 20 : 1 + rng() % (1 << 16);
      intervals.push_back({bytes, start, start + length});
    }
    ArenaLayout layout = layoutArena(intervals, 256);
    expectValid(intervals, layout);
    if (testing::Test::HasFailure())
      FAIL() << "trial " << trial;
  }
}

TEST(ArenaLayout, Empty) {
  ArenaLayout layout = layoutArena({}, 256);
  EXPECT_TRUE(layout.offsets.empty());
  EXPECT_EQ(layout.bytes, 0);
  EXPECT_EQ(layout.peakBytes, 0);
}

} // namespace
