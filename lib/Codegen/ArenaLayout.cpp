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
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken; // [offset, end) of live ones
  for (size_t i : order) {
    const ArenaInterval &buffer = intervals[i];
    taken.clear();
    for (size_t j : placed)
      if (intervals[j].start <= buffer.end && buffer.start <= intervals[j].end)
        taken.emplace_back(layout.offsets[j], layout.offsets[j] + sizeOf(j));
    std::sort(taken.begin(), taken.end());
    // The lowest offset below which no live range ends past it.
    int64_t offset = 0;
    for (const auto &[begin, end] : taken) {
      if (offset + sizeOf(i) <= begin)
        break;
      offset = std::max(offset, alignUp(end, alignment));
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, offset + sizeOf(i));
    placed.push_back(i);
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
