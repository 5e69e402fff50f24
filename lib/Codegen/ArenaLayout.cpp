//===- ArenaLayout.cpp - offsets of buffers in one static arena -----------===//
//
// Part of the msamp project. What and why: MSAMP/Codegen/ArenaLayout.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/ArenaLayout.h"

#include <algorithm>
#include <numeric>
#include <utility>

using namespace mlir::msamp;

static int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

ArenaLayout
mlir::msamp::layoutArena(const std::vector<ArenaInterval> &intervals,
                         int64_t alignment) {
  ArenaLayout layout;
  const size_t n = intervals.size();
  layout.offsets.assign(n, 0);
  auto sizeOf = [&](size_t i) {
    return alignUp(std::max<int64_t>(intervals[i].bytes, 1), alignment);
  };

  // Largest first (then earliest): big buffers claim the low offsets, the
  // small ones fill the gaps between them.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizeOf(a) != sizeOf(b))
      return sizeOf(a) > sizeOf(b);
    return intervals[a].start < intervals[b].start;
  });
  // The placed buffers as [offset, end) ranges in ascending order, with
  // their lifetimes: first fit scans them in that order, skipping those not
  // live with the buffer being placed, and stops at the first gap. (Sorting
  // the live ones per buffer was quadratic with a logarithm, and most of
  // them are live together in a CPU step whose buffers are freed at its
  // end: 0.3 s of a 24-layer compile, issue 19.) Same offsets as that sort.
  struct Placed {
    int64_t begin, end;
    unsigned start, last;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const ArenaInterval &buffer = intervals[i];
    // The lowest offset below which no live range ends past it.
    int64_t offset = 0;
    for (const Placed &other : placed) {
      if (!(other.start <= buffer.end && buffer.start <= other.last))
        continue;
      if (offset + sizeOf(i) <= other.begin)
        break;
      offset = std::max(offset, alignUp(other.end, alignment));
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + sizeOf(i));
    Placed range{offset, offset + sizeOf(i), buffer.start, buffer.end};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), range,
                                   [](const Placed &a, const Placed &b) {
                                     return std::make_pair(a.begin, a.end) <
                                            std::make_pair(b.begin, b.end);
                                   }),
                  range);
  }

  // The lower bound: a sweep of +size at start, -size after end.
  std::vector<std::pair<unsigned, int64_t>> events;
  for (size_t i = 0; i < n; ++i) {
    events.emplace_back(intervals[i].start, sizeOf(i));
    events.emplace_back(intervals[i].end + 1, -sizeOf(i));
  }
  std::sort(events.begin(), events.end()); // frees before allocations at ties
  int64_t live = 0;
  for (const auto &[position, delta] : events) {
    live += delta;
    layout.peakBytes = std::max(layout.peakBytes, live);
  }
  return layout;
}
