//===- MpiCollectiveTest.cpp - collectives under mpirun -np N ------*- C++
//-*-===//
//
// Run by ctest under `mpirun -np 2` and `-np 4`. Every check goes through the
// ABI compiled code uses (_mlir_ciface_msamp_rt_all_reduce) on the group that
// msamp_rt_distributed_init joins. Each rank checks its own results and the
// group agrees on the verdict with an all-reduce, so one failing rank fails
// every process; rank 0 prints `N passed, N failed`.
//
//===----------------------------------------------------------------------===//

#include "../RuntimeTestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace msamp_rt_test;
namespace nx = msamp::numerics;

namespace {

int passed = 0, failed = 0;

void check(bool ok, const std::string &what) {
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", msamp_rt_rank(), what.c_str());
}

/// Sum of a value over the group (to compare results across ranks).
float groupSum(float v) {
  msamp_rt_allreduce_f32(&v, 1, 0);
  return v;
}
float groupMax(float v) {
  msamp_rt_allreduce_f32(&v, 1, 1);
  return v;
}

/// Every rank holds the same bytes: the max and min over ranks of a checksum
/// agree.
bool identicalAcrossRanks(const std::vector<uint8_t> &bytes) {
  float sum = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    sum += static_cast<float>(bytes[i]) * static_cast<float>(i % 97 + 1);
  return groupMax(sum) == -groupMax(-sum);
}

void allReduce(msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *sinv,
               msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *osinv,
               int32_t dtype, int32_t kind, int32_t hasScale) {
  _mlir_ciface_msamp_rt_all_reduce(in, sinv, out, osinv, dtype, kind, hasScale);
}

} // namespace

int main() {
  if (msamp_rt_distributed_init() != MSAMP_RT_OK) {
    std::fprintf(stderr, "distributed init failed: %s\n",
                 msamp_rt_get_last_error_message());
    return 1;
  }
  const int rank = msamp_rt_rank(), world = msamp_rt_world_size();
  check(world > 1, "launched under mpirun with more than one rank");
  msamp_rt_reset_collective_bytes();

  // f32 sum and max over ranks, in place.
  {
    const int64_t n = 1000;
    Tensor<float> x({n});
    for (int64_t i = 0; i < n; ++i)
      x[i] = static_cast<float>((rank + 1) * i);
    Tensor<float> dummy = scalar(1.0f);
    allReduce(x, dummy, x, dummy, MSAMP_RT_F32, 0, 0);
    bool ok = true;
    for (int64_t i = 0; i < n; ++i)
      ok &= x[i] == static_cast<float>(i * world * (world + 1) / 2);
    check(ok, "f32 sum over ranks");
    Tensor<float> y({4}, std::vector<float>{float(rank), -float(rank), 0, 1});
    allReduce(y, dummy, y, dummy, MSAMP_RT_F32, 1, 0);
    check(y[0] == world - 1 && y[1] == 0 && y[3] == 1, "f32 max over ranks");
    Tensor<float> z({2}, std::vector<float>{2.0f, float(rank)});
    allReduce(z, dummy, z, dummy, MSAMP_RT_F32, 2, 0);
    check(z[0] == 2.0f, "f32 mean over ranks");
    Tensor<float> t = scalar(float(rank));
    allReduce(t, dummy, t, dummy, MSAMP_RT_F32, 0, 0);
    check(t[0] == float(world * (world - 1) / 2), "0-d f32 sum over ranks");
  }

  // FP8 sums: each hop is fp8(half(a) + half(b)), in rank order. MS-AMP's
  // two-rank byte vectors (docs/Numerics.md 4.4): 0x4A + 0x50 = 0x55 and
  // 0x58 + 0x5C = 0x62; for more ranks, the rank-order chain of the core.
  {
    const uint8_t a[2] = {0x4A, 0x58}, b[2] = {0x50, 0x5C};
    Tensor<uint8_t> q({4});
    q[0] = rank % 2 ? b[0] : a[0];
    q[1] = rank % 2 ? b[1] : a[1];
    q[2] = 0x7E; // 448 on every rank: the sum saturates, never Inf or NaN
    q[3] = static_cast<uint8_t>(0x30 + rank);
    Tensor<float> sinv = scalar(0.5f), osinv = scalar(0.0f);
    allReduce(q, sinv, q, osinv, MSAMP_RT_F8E4M3FN, 0, 1);
    uint8_t expect[4];
    uint8_t acc0 = a[0], acc1 = a[1], acc3 = 0x30;
    for (int r = 1; r < world; ++r) {
      acc0 = nx::addViaHalf(nx::Format::E4M3, acc0, r % 2 ? b[0] : a[0]);
      acc1 = nx::addViaHalf(nx::Format::E4M3, acc1, r % 2 ? b[1] : a[1]);
      acc3 = nx::addViaHalf(nx::Format::E4M3, acc3,
                            static_cast<uint8_t>(0x30 + r));
    }
    expect[0] = acc0, expect[1] = acc1, expect[2] = 0x7E, expect[3] = acc3;
    if (world == 2)
      check(expect[0] == 0x55 && expect[1] == 0x62,
            "docs/Numerics.md 4.4 vectors 0x4A+0x50=0x55, 0x58+0x5C=0x62");
    check(std::memcmp(q.data.data(), expect, 4) == 0,
          "FP8 sum in rank order with per-hop half arithmetic");
    check(osinv[0] == 0.5f, "FP8 sum keeps the inverse scale");
    check(identicalAcrossRanks(q.data), "FP8 results byte-identical");

    // mean: bytes as for sum, inverse scale divided by the world size.
    Tensor<uint8_t> m({1});
    m[0] = 0x38; // 1.0
    allReduce(m, sinv, m, osinv, MSAMP_RT_F8E4M3FN, 2, 1);
    check(osinv[0] == 0.5f / static_cast<float>(world),
          "FP8 mean divides the inverse scale by the world size");
  }

  // Large random payload: byte-identical everywhere.
  {
    const int64_t n = 1 << 20;
    Tensor<uint8_t> g({n});
    uint32_t s = 12345u + static_cast<uint32_t>(rank);
    for (int64_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      g[i] = static_cast<uint8_t>((s >> 24) & 0x77); // finite E4M3 codes
    }
    Tensor<float> sinv = scalar(1.0f), osinv = scalar(0.0f);
    allReduce(g, sinv, g, osinv, MSAMP_RT_F8E5M2, 0, 1);
    check(identicalAcrossRanks(g.data), "1 MiB FP8 payload identical");
  }

  // The byte counter counts tensor payloads handed to the group by compiled
  // code: not the max reduction (scaling state) nor the 0-d sum.
  int64_t bytes = msamp_rt_collective_bytes();
  check(bytes == 1000 * 4 + 2 * 4 + 4 + 1 + (1 << 20),
        "collective payload bytes counted (" + std::to_string(bytes) + ")");

  // O3's reduce-to-owner: the owner receives exactly what an all-reduce
  // gives (same rank-order combine), the other ranks' outputs are left
  // alone; broadcast hands every rank the owner's bytes.
  for (int root = 0; root < world; ++root) {
    Tensor<uint8_t> q({3}), all({3});
    q[0] = all[0] = static_cast<uint8_t>(0x30 + rank);
    q[1] = all[1] = rank % 2 ? 0x50 : 0x4A;
    q[2] = all[2] = 0x7E;
    Tensor<uint8_t> out({3}, uint8_t(0xAA));
    Tensor<float> sinv = scalar(0.25f), osinv = scalar(-1.0f);
    Tensor<float> asinv = scalar(0.0f);
    _mlir_ciface_msamp_rt_reduce(q, sinv, out, osinv, MSAMP_RT_F8E4M3FN,
                                 /*mean=*/2, 1, root);
    allReduce(all, sinv, all, asinv, MSAMP_RT_F8E4M3FN, 2, 1);
    if (rank == root)
      check(std::memcmp(out.data.data(), all.data.data(), 3) == 0 &&
                osinv[0] == asinv[0],
            "FP8 reduce to rank " + std::to_string(root) +
                " equals the all-reduce");
    else
      check(out[0] == 0xAA && out[2] == 0xAA,
            "FP8 reduce sends nothing back to a non-owner");

    Tensor<float> f({2}, std::vector<float>{float(rank), 1.0f}), fo({2});
    Tensor<float> dummy = scalar(0.0f);
    _mlir_ciface_msamp_rt_reduce(f, dummy, fo, dummy, MSAMP_RT_F32, 0, 0, root);
    if (rank == root)
      check(fo[0] == float(world * (world - 1) / 2) && fo[1] == float(world),
            "f32 reduce-sum to rank " + std::to_string(root));

    Tensor<uint8_t> w({5}, uint8_t(rank)), wo({5});
    _mlir_ciface_msamp_rt_broadcast(w, wo, MSAMP_RT_F8E4M3FN, root);
    bool same = true;
    for (int i = 0; i < 5; ++i)
      same &= wo[i] == static_cast<uint8_t>(root);
    check(same, "broadcast from rank " + std::to_string(root));
    Tensor<float> sc = scalar(float(rank) + 0.5f);
    _mlir_ciface_msamp_rt_broadcast(sc, sc, MSAMP_RT_F32, root);
    check(sc[0] == float(root) + 0.5f, "in-place f32 broadcast");
  }
  // A root outside the group is refused (a step compiled for another
  // world size), not sent to MPI.
  {
    Tensor<float> x({1}), dummy = scalar(0.0f);
    _mlir_ciface_msamp_rt_reduce(x, dummy, x, dummy, MSAMP_RT_F32, 0, 0, world);
    check(msamp_rt_get_last_error() == MSAMP_RT_ERROR_INVALID_ARGUMENT &&
              std::string(msamp_rt_get_last_error_message())
                      .find("compiled for another world size") !=
                  std::string::npos,
          "reduce to a root outside the group is an error");
    msamp_rt_clear_error();
    _mlir_ciface_msamp_rt_broadcast(x, x, MSAMP_RT_F32, -1);
    check(msamp_rt_get_last_error() == MSAMP_RT_ERROR_INVALID_ARGUMENT,
          "broadcast from a negative root is an error");
    msamp_rt_clear_error();
  }

  // ZeRO's flat shards (issue 20): a reduce-scatter hands rank r exactly
  // slice r of what an all-reduce gives every rank (same rank-order FP8
  // hops, same inverse-scale division for mean), and an all-gather puts
  // rank r's bytes at slice r on every rank. Shard sizes: 1 (degenerate),
  // 37 (odd), and one past MPI's chunk of 2^26 elements is not needed to
  // cover the chunk loop, which shares reduce()'s bounds.
  for (int64_t shard : {int64_t(1), int64_t(37), int64_t(4096)}) {
    const int64_t n = shard * world;
    Tensor<uint8_t> g({n}), all({n});
    uint32_t s = 777u + static_cast<uint32_t>(rank) * 31u;
    for (int64_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      g[i] = all[i] = static_cast<uint8_t>((s >> 24) & 0x77);
    }
    Tensor<uint8_t> out({shard}, uint8_t(0xAA));
    Tensor<float> sinv = scalar(0.125f), osinv = scalar(-1.0f),
                  asinv = scalar(-1.0f);
    const int64_t before = msamp_rt_collective_bytes();
    _mlir_ciface_msamp_rt_reduce_scatter(g, sinv, out, osinv, MSAMP_RT_F8E4M3FN,
                                         /*mean=*/2, 1);
    check(msamp_rt_collective_bytes() - before == shard * (world - 1),
          "reduce-scatter counts (N-1) shards of traffic");
    check(msamp_rt_get_last_error() == MSAMP_RT_OK,
          "FP8 reduce-scatter succeeds");
    allReduce(all, sinv, all, asinv, MSAMP_RT_F8E4M3FN, 2, 1);
    check(std::memcmp(out.data.data(), all.data.data() + shard * rank,
                      static_cast<size_t>(shard)) == 0,
          "FP8 reduce-scatter shard of " + std::to_string(shard) +
              " equals the all-reduce's slice");
    check(osinv[0] == asinv[0], "FP8 reduce-scatter mean divides the scale");

    Tensor<float> f({n}), fo({shard}), fall({n});
    for (int64_t i = 0; i < n; ++i)
      f[i] = fall[i] = static_cast<float>(rank + 1) * 0.1f * float(i % 13);
    Tensor<float> dummy = scalar(0.0f);
    _mlir_ciface_msamp_rt_reduce_scatter(f, dummy, fo, dummy, MSAMP_RT_F32, 2,
                                         0);
    allReduce(fall, dummy, fall, dummy, MSAMP_RT_F32, 2, 0);
    check(std::memcmp(fo.data.data(), fall.data.data() + shard * rank,
                      static_cast<size_t>(shard) * sizeof(float)) == 0,
          "f32 reduce-scatter mean equals the all-reduce's slice");

    Tensor<uint8_t> mine({shard}), gathered({n});
    for (int64_t i = 0; i < shard; ++i)
      mine[i] = static_cast<uint8_t>(rank * 16 + i % 16);
    _mlir_ciface_msamp_rt_all_gather(mine, gathered, MSAMP_RT_F8E5M2);
    bool same = true;
    for (int r = 0; r < world; ++r)
      for (int64_t i = 0; i < shard; ++i)
        same &=
            gathered[r * shard + i] == static_cast<uint8_t>(r * 16 + i % 16);
    check(same, "all-gather puts rank r's bytes at slice r");
  }
  // A step compiled for another world size: the sizes do not divide.
  {
    Tensor<float> in({3}), out({1}), dummy = scalar(0.0f);
    _mlir_ciface_msamp_rt_reduce_scatter(in, dummy, out, dummy, MSAMP_RT_F32, 0,
                                         0);
    check(world == 3 ||
              msamp_rt_get_last_error() == MSAMP_RT_ERROR_SHAPE_MISMATCH,
          "reduce-scatter of a buffer that is not N shards is an error");
    msamp_rt_clear_error();
  }

  // msamp_rt_scale_update with the amax all-reduced (docs/RuntimeABI.md
  // 3.13): every rank ends with the same history and scales, those of the
  // separate calls (amax, all_reduce max, history roll, two compute_scale,
  // 1 / scale); rank 1 also tries a NaN amax, which wins the MAX.
  for (bool nan : {false, true}) {
    Tensor<float> x({3}, std::vector<float>{0.5f, -float(rank + 1) * 3.0f,
                                            nan && rank == 1 ? NAN : 1.0f});
    Tensor<float> h({4}, std::vector<float>{7.0f, 1.0f, 0.0f, 2.0f});
    Tensor<float> prev = scalar(2.0f), s = scalar(0.0f), si = scalar(0.0f);
    Tensor<uint8_t> warm = scalar(uint8_t(1));
    Tensor<float> next = scalar(0.0f);
    _mlir_ciface_msamp_rt_scale_update(x, h, prev, warm, h, s, si, next,
                                       MSAMP_RT_F32, 0, 0, MSAMP_RT_F8E4M3FN, 0,
                                       MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX |
                                           MSAMP_RT_SCALE_UPDATE_SELECT_JIT);
    Tensor<float> a = scalar(0.0f), dummy = scalar(1.0f);
    Tensor<float> h2({4}, std::vector<float>{7.0f, 1.0f, 0.0f, 2.0f});
    Tensor<float> jit = scalar(0.0f), next2 = scalar(0.0f);
    _mlir_ciface_msamp_rt_amax(x, a, MSAMP_RT_F32);
    allReduce(a, dummy, a, dummy, MSAMP_RT_F32, 1, 0);
    _mlir_ciface_msamp_rt_update_amax_history(h2, a, h2);
    _mlir_ciface_msamp_rt_compute_scale(h2, prev, jit, 0, 1, MSAMP_RT_F8E4M3FN,
                                        0);
    _mlir_ciface_msamp_rt_compute_scale(h2, jit, next2, 0, 0, MSAMP_RT_F8E4M3FN,
                                        0);
    bool same = std::memcmp(h.data.data(), h2.data.data(), 16) == 0 &&
                bitsOf(s[0]) == bitsOf(jit[0]) &&
                bitsOf(si[0]) == bitsOf(1.0f / jit[0]) &&
                bitsOf(next[0]) == bitsOf(next2[0]);
    check(same && msamp_rt_get_last_error() == MSAMP_RT_OK,
          std::string("scale_update with a reduced amax is the separate "
                      "calls'") +
              (nan ? " (NaN on rank 1)" : ""));
    std::vector<uint8_t> bytes(28);
    std::memcpy(bytes.data(), h.data.data(), 16);
    std::memcpy(bytes.data() + 16, &s[0], 4);
    std::memcpy(bytes.data() + 20, &si[0], 4);
    std::memcpy(bytes.data() + 24, &next[0], 4);
    check(identicalAcrossRanks(bytes),
          "scale_update's history and scales identical on every rank");
  }

  float failures = groupSum(static_cast<float>(failed));
  if (rank == 0)
    std::printf("mpi collectives, %d ranks: %d passed, %d failed\n", world,
                passed, static_cast<int>(failures));
  msamp_rt_distributed_finalize();
  return failures == 0 ? 0 : 1;
}
