//===- ArenaLayout.h - offsets of buffers in one static arena ---*- C++ -*-===//
//
// Given each buffer's size and lifetime (an inclusive range of positions in
// program order), assigns every buffer an offset in one arena such that two
// buffers whose lifetimes overlap never share a byte. Greedy by size: the
// largest buffers are placed first, each at the lowest aligned offset that
// no already placed, simultaneously live buffer covers. Plain C++ (no MLIR),
// so that unittests/Codegen tests it directly; the buffer plan
// (BufferPlan.h) uses it.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_ARENALAYOUT_H
#define MSAMP_CODEGEN_ARENALAYOUT_H

#include <cstdint>
#include <vector>

namespace mlir::msamp {

/// One buffer to place: live from `start` through `end` (inclusive).
struct ArenaInterval {
  int64_t bytes;
  unsigned start;
  unsigned end;
};

struct ArenaLayout {
  /// The offset of each interval, in the order given; each a multiple of
  /// the alignment.
  std::vector<int64_t> offsets;
  /// The arena's size: the largest offset + size.
  int64_t bytes = 0;
  /// The most bytes (each size rounded up to the alignment) live at one
  /// position: no layout can be smaller.
  int64_t peakBytes = 0;
};

/// `alignment` must be a power of two.
ArenaLayout layoutArena(const std::vector<ArenaInterval> &intervals,
                        int64_t alignment);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_ARENALAYOUT_H
