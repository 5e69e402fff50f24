//===- AdamChunksTest.cpp - The multi-tensor Adam chunk size --------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// adamChunkElements (lib/Runtime/CUDA/optimizer/AdamChunks.h) on an H100's
// figures, without a device: only sizes the kernel accepts, one element per
// thread for a layer's biases and norms, and for any call a predicted time
// near the least any chunking could give. The fixed 4-tile chunk it
// replaced fails the last two (docs/GPU.md, "Adam chunks follow the call").
//
//===----------------------------------------------------------------------===//

#include "optimizer/AdamChunks.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace msamp::runtime::cuda;

constexpr int64_t kThreads = 256, kTile = 256 * 8, kOldChunk = 4 * kTile;
/// An H100's resident grid for the Adam kernel (2 blocks on 132 SMs).
constexpr int64_t kH100 = 264;

int64_t chunkFor(const std::vector<int64_t> &sizes, int64_t resident = kH100) {
  return adamChunkElements(sizes.data(), static_cast<int64_t>(sizes.size()),
                           resident, kThreads, kTile);
}

int64_t costOf(const std::vector<int64_t> &sizes, int64_t chunk,
               int64_t resident = kH100) {
  return adamChunkCost(sizes.data(), static_cast<int64_t>(sizes.size()), chunk,
                       resident, kThreads);
}

/// The least cost any chunking could have: every element spread evenly
/// over every thread of the grid (at least one each), plus one set-up.
double floorOf(const std::vector<int64_t> &sizes, int64_t resident = kH100) {
  double total = 0;
  for (int64_t n : sizes)
    total += static_cast<double>(n);
  return std::max(1.0, total / static_cast<double>(resident * kThreads)) + 1;
}

const int64_t d = 768, f = 3072;

TEST(AdamChunks, EverySizeIsOneTheKernelAccepts) {
  std::mt19937_64 rng(7);
  for (int64_t resident : {1, 7, 132, 264, 528, 1056})
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<int64_t> sizes(1 + rng() % 24);
      for (int64_t &n : sizes)
        n = static_cast<int64_t>(rng() % (int64_t(1) << (rng() % 31)));
      const int64_t chunk = chunkFor(sizes, resident);
      EXPECT_GE(chunk, kThreads);
      EXPECT_EQ(chunk % kThreads, 0);
      if (chunk > kTile)
        EXPECT_EQ(chunk % kTile, 0) << chunk;
      EXPECT_LE(chunk, kAdamMaxChunkTiles * kTile);
    }
}

TEST(AdamChunks, ALayersBiasesAndNormsTakeOneElementPerThread) {
  // A GPT-2-small layer's f32 class under O2 (an outlined step's per-layer
  // call): 39 chunks, 39 blocks at once (the H100 profile's grid), where
  // 4-tile chunks made 8 and a thread of the 3072-element bias's block
  // updated 12 elements.
  const std::vector<int64_t> layer = {d, d, 3 * d, d, d, d, f, d};
  EXPECT_EQ(chunkFor(layer), kThreads);
  int64_t chunks = 0;
  for (int64_t n : layer)
    chunks += adamChunksOf(n, kThreads);
  EXPECT_EQ(chunks, 39);
  EXPECT_EQ(costOf(layer, kThreads), 2);
  EXPECT_EQ(costOf(layer, kOldChunk), 33);
  // An empty tensor costs one round at any size: the cheapest.
  EXPECT_EQ(chunkFor({0}), kThreads);
}

TEST(AdamChunks, CallsOfAnySizeCostNearTheirFloor) {
  const std::vector<int64_t> weights = {d * 3 * d, d * d, d * f, f * d};
  std::vector<int64_t> model = {50257 * d, 1024 * d};
  for (int layer = 0; layer < 12; ++layer)
    model.insert(model.end(), weights.begin(), weights.end());
  // One layer's GEMM weights: 13% over the floor, where the old chunk's
  // last quarter-full round made it 25%.
  EXPECT_LE(costOf(weights, chunkFor(weights)), 1.13 * floorOf(weights));
  EXPECT_GE(costOf(weights, kOldChunk), 1.24 * floorOf(weights));
  // The whole model in one call (an inline step): the old chunk, 4%.
  EXPECT_EQ(chunkFor(model), kOldChunk);
  EXPECT_LE(costOf(model, kOldChunk), 1.05 * floorOf(model));
  // Random tables: within 1.5x of the floor where a thread has one or two
  // elements (the block's granularity), within 1.25x beyond 4 tiles a
  // block; the old chunk up to 29x.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<int64_t> sizes(1 + rng() % 24);
    for (int64_t &n : sizes)
      n = static_cast<int64_t>(
          std::pow(10.0, std::uniform_real_distribution<>(0, 8)(rng)));
    const double floor = floorOf(sizes);
    const int64_t cost = costOf(sizes, chunkFor(sizes));
    EXPECT_LE(cost, costOf(sizes, kOldChunk));
    EXPECT_LE(cost, (floor > 4 * 8 + 1 ? 1.25 : 1.5) * floor)
        << sizes.size() << " tensors, chunk " << chunkFor(sizes);
  }
}

} // namespace
