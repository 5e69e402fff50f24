//===- FlatShards.h - ZeRO's even flat shards -------------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The layout of O3's even flat shards (issue 20, lib/Transforms/ZeROShard.cpp):
// a group of tensors is flattened and concatenated in order, and the flat
// range is cut into `world` contiguous owned ranges of whole alignment units
// (kFlatShardUnit elements: 16 bytes of FP8, 32 of FP16), the first
// `units mod world` ranks taking one unit more, so that ranks differ by at
// most one unit. The collectives move equal shards of `shard` elements per
// rank (NCCL's reduce-scatter and all-gather need equal counts): rank r's
// owned range sits at r * shard of the communication buffer, padded at its
// end.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_FLATSHARDS_H
#define MSAMP_TRAINSTEP_FLATSHARDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace mlir::msamp {

/// Elements per alignment unit of a flat shard.
constexpr int64_t kFlatShardUnit = 16;

struct FlatShardLayout {
  int64_t world = 1;
  /// Elements of the group (sum of the member sizes).
  int64_t total = 0;
  /// Elements per rank in the communication buffers (>= every owned range).
  int64_t shard = 0;
  /// Owned ranges: rank r owns flat [bounds[r], bounds[r + 1]).
  llvm::SmallVector<int64_t> bounds;
  /// Flat offset of each member.
  llvm::SmallVector<int64_t> offsets;

  /// The part [first, second) of flat range [begin, begin + size) that rank
  /// `r` owns; empty (first >= second) when it owns none of it.
  std::pair<int64_t, int64_t> piece(int64_t begin, int64_t size,
                                    int64_t r) const;
};

/// The layout of members of `sizes` elements over `world` ranks.
FlatShardLayout computeFlatShardLayout(llvm::ArrayRef<int64_t> sizes,
                                       int64_t world);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_FLATSHARDS_H
