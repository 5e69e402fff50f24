//===- FlatShards.cpp - ZeRO's even flat shards ---------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/FlatShards.h"

#include <algorithm>

using namespace mlir::msamp;

FlatShardLayout
mlir::msamp::computeFlatShardLayout(llvm::ArrayRef<int64_t> sizes,
                                    int64_t world) {
  FlatShardLayout layout;
  layout.world = world;
  for (int64_t size : sizes) {
    layout.offsets.push_back(layout.total);
    layout.total += size;
  }
  const int64_t units = (layout.total + kFlatShardUnit - 1) / kFlatShardUnit;
  const int64_t base = units / world, extra = units % world;
  layout.shard = (base + (extra ? 1 : 0)) * kFlatShardUnit;
  for (int64_t r = 0; r <= world; ++r)
    layout.bounds.push_back(std::min(
        layout.total, kFlatShardUnit * (r * base + std::min(r, extra))));
  return layout;
}

std::pair<int64_t, int64_t> FlatShardLayout::piece(int64_t begin, int64_t size,
                                                   int64_t r) const {
  return {std::max(begin, bounds[r]), std::min(begin + size, bounds[r + 1])};
}
