//===- AdamChunks.h - How a multi-tensor Adam launch splits its work ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The multi-tensor Adam kernel (adam.cu) runs a grid the chip holds at once
// and hands out chunks of the table's tensors, blockIdx.x, + gridDim.x, ...;
// a chunk never spans two tensors. Per element the update is long
// arithmetic (software FP8 and f16 rounding, IEEE division and square
// root), so a call takes as long as its busiest block: the rounds of the
// grid it needs times the elements each thread works through per chunk.
// A fixed chunk of 4 tiles was wrong at both ends (H100, docs/GPU.md "Adam
// chunks follow the call"):
//
//  - a layer's biases and norms (~10k elements) ran on 10 blocks, each
//    thread updating up to 16 elements alone while 254 resident blocks
//    idled: 33 + 55 us for the two passes;
//  - a layer's GEMM weights (7.1M elements) were 3.3 rounds of 264 blocks,
//    the last a quarter full.
//
// adamChunkElements picks the size with the least predicted time among
// whole multiples of the block up to a tile (one to eight elements per
// thread; the scalar path) and 2 to 4 tiles (the packed path), charging
// each chunk one element's work per thread for its set-up (finding the
// tensor, its scales). Ties go to the larger chunk.
//
// Host-only arithmetic, shared with the device-free tests.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_ADAMCHUNKS_H
#define MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_ADAMCHUNKS_H

#include <algorithm>
#include <cstdint>

namespace msamp::runtime::cuda {

/// Most tiles in one chunk (the fixed size before the size followed the
/// call).
constexpr int64_t kAdamMaxChunkTiles = 4;

/// Chunks of `chunk` elements that `n` elements take; an empty tensor still
/// takes one (it writes its kept scales).
inline int64_t adamChunksOf(int64_t n, int64_t chunk) {
  return std::max<int64_t>(1, (n + chunk - 1) / chunk);
}

/// The predicted time of a launch over tensors of `sizes` in chunks of
/// `chunk` elements on `resident` blocks of `threads` threads, in units of
/// one element's update by one thread: the grid's rounds times the
/// elements per thread of a chunk plus one for its set-up.
inline int64_t adamChunkCost(const int64_t *sizes, int64_t count, int64_t chunk,
                             int64_t resident, int64_t threads) {
  int64_t chunks = 0;
  for (int64_t k = 0; k < count; ++k)
    chunks += adamChunksOf(sizes[k], chunk);
  resident = std::max<int64_t>(1, resident);
  const int64_t rounds = (chunks + resident - 1) / resident;
  return rounds * ((chunk + threads - 1) / threads + 1);
}

/// Elements per chunk for a launch over tensors of `sizes` on `resident`
/// blocks of `threads` threads whose full tile is `tile` elements (threads
/// times one pack): a multiple of `threads` up to `tile`, or a multiple of
/// `tile` up to kAdamMaxChunkTiles tiles.
inline int64_t adamChunkElements(const int64_t *sizes, int64_t count,
                                 int64_t resident, int64_t threads,
                                 int64_t tile) {
  int64_t best = threads, bestCost = -1;
  auto consider = [&](int64_t chunk) {
    const int64_t cost = adamChunkCost(sizes, count, chunk, resident, threads);
    if (bestCost < 0 || cost <= bestCost) {
      best = chunk;
      bestCost = cost;
    }
  };
  for (int64_t chunk = threads; chunk <= tile; chunk += threads)
    consider(chunk);
  for (int64_t tiles = 2; tiles <= kAdamMaxChunkTiles; ++tiles)
    consider(tiles * tile);
  return best;
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_ADAMCHUNKS_H
