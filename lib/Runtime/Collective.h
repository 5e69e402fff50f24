//===- Collective.h - Data-parallel collectives -----------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The communication layer the all_reduce kernel goes through. Collectives are
// injected, not owned by a backend (Transformer Engine's comm-overlap code
// takes caller-supplied callbacks for the same reason): the CPU backend can
// run under the local world-size-1 implementation, an MPI one, or an
// in-process multi-rank one for tests, and the CUDA backend under NCCL,
// without either kernel library knowing.
//
// The FP8 dtype travels with every call (never as a global mode, cf. MS-AMP's
// LD_PRELOAD'ed ncclAllReduce). The arithmetic of one reduction hop is
// defined here once, inline, so every implementation and the tests use the
// same functions: docs/Numerics.md 4.4, fp8(half(a) + half(b)) with RNE and
// saturation, via numerics::addViaHalf. Contributions are combined in a fixed
// rank order so that the result, including every intermediate FP8 rounding,
// is a function of the inputs alone.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_COLLECTIVE_H
#define MSAMP_LIB_RUNTIME_COLLECTIVE_H

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace msamp::runtime {

/// The reductions a collective performs; mean is a sum followed by a
/// division that the caller applies (to f32 data, or to an FP8 payload's
/// inverse scale).
enum class CollectiveOp : int32_t { Sum = 0, Max = 1 };

class Collective {
public:
  virtual ~Collective();

  virtual const char *name() const = 0;
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;

  /// out[i] = combineF32(...) of in[i] over all ranks, in rank order. `in`
  /// may equal `out`.
  virtual msamp_rt_status allReduceF32(const float *in, float *out, int64_t n,
                                       CollectiveOp op) = 0;

  /// out[i] = combineFP8(format, op, ...) of in[i] over all ranks, in rank
  /// order. All ranks' payloads share one scale (the caller's contract), so
  /// the codes are combined directly. `in` may equal `out`.
  virtual msamp_rt_status allReduceFP8(const uint8_t *in, uint8_t *out,
                                       int64_t n, numerics::Format format,
                                       CollectiveOp op) = 0;

  /// ZeRO's reduce-to-owner: like allReduceF32 (same rank-order combine, so
  /// `root` gets the bytes an all-reduce would give it), but only rank
  /// `root`'s `out` is defined afterwards. The default all-reduces, which
  /// is correct and moves more bytes; MPI gathers to `root` only.
  virtual msamp_rt_status reduceF32(const float *in, float *out, int64_t n,
                                    CollectiveOp op, int root) {
    (void)root;
    return allReduceF32(in, out, n, op);
  }
  virtual msamp_rt_status reduceFP8(const uint8_t *in, uint8_t *out, int64_t n,
                                    numerics::Format format, CollectiveOp op,
                                    int root) {
    (void)root;
    return allReduceFP8(in, out, n, format, op);
  }

  /// Every rank's `data` (`bytes` bytes) becomes rank `root`'s.
  virtual msamp_rt_status broadcast(void *data, int64_t bytes, int root) = 0;

  /// ZeRO's reduce-scatter (issue 20): `in` holds worldSize() shards of `n`
  /// elements; rank r's `out` (n elements, not aliasing `in`) receives the
  /// rank-order combination of shard r over all ranks, the bytes an
  /// all-reduce of `in` would hold at [r * n, (r + 1) * n). The defaults
  /// all-reduce the whole buffer and keep the slice (correct, N times the
  /// bytes); MPI and NCCL send each rank only its shard.
  virtual msamp_rt_status reduceScatterF32(const float *in, float *out,
                                           int64_t n, CollectiveOp op) {
    std::vector<float> all(in, in + n * worldSize());
    if (msamp_rt_status s = allReduceF32(all.data(), all.data(),
                                         static_cast<int64_t>(all.size()), op))
      return s;
    std::copy_n(all.data() + n * rank(), n, out);
    return MSAMP_RT_OK;
  }
  virtual msamp_rt_status reduceScatterFP8(const uint8_t *in, uint8_t *out,
                                           int64_t n, numerics::Format format,
                                           CollectiveOp op) {
    std::vector<uint8_t> all(in, in + n * worldSize());
    if (msamp_rt_status s =
            allReduceFP8(all.data(), all.data(),
                         static_cast<int64_t>(all.size()), format, op))
      return s;
    std::copy_n(all.data() + n * rank(), n, out);
    return MSAMP_RT_OK;
  }

  /// ZeRO's all-gather: `out` (worldSize() * `bytes` bytes, not aliasing
  /// `in`) receives rank r's `in` at offset r * bytes, on every rank. The
  /// default broadcasts each rank's part in turn.
  virtual msamp_rt_status allGather(const void *in, void *out, int64_t bytes) {
    auto *dst = static_cast<uint8_t *>(out);
    std::copy_n(static_cast<const uint8_t *>(in), bytes, dst + bytes * rank());
    for (int r = 0; r < worldSize(); ++r)
      if (msamp_rt_status s = broadcast(dst + bytes * r, bytes, r))
        return s;
    return MSAMP_RT_OK;
  }
};

/// One hop of an FP8 reduction. Sum: fp8(half(a) + half(b)), saturating
/// (docs/Numerics.md 4.4: 0x4A + 0x50 = 0x55, 0x58 + 0x5C = 0x62 in E4M3). Max:
/// the code with the larger decoded value, a NaN operand wins, ties keep `a`.
inline uint8_t combineFP8(numerics::Format format, CollectiveOp op, uint8_t a,
                          uint8_t b) {
  return op == CollectiveOp::Sum ? numerics::addViaHalf(format, a, b)
                                 : numerics::maxOfCodes(format, a, b);
}

/// One hop of an f32 reduction: an f32 add, or max with NaN propagation.
inline float combineF32(CollectiveOp op, float a, float b) {
  if (op == CollectiveOp::Sum)
    return numerics::detail::addRn(a, b);
  if (numerics::detail::isNaN(a))
    return a;
  if (numerics::detail::isNaN(b))
    return b;
  return b > a ? b : a;
}

/// Reduces `worldSize` contributions (contrib[r] from rank r) in rank order:
/// acc = contrib[0]; acc = combine(acc, contrib[r]) for r = 1, 2, ....
/// `out` may be any one of the contributions. Implementations that gather
/// (MPI, in-process ranks) call this; a single contribution is copied.
inline void reduceFP8InRankOrder(const uint8_t *const *contrib, int worldSize,
                                 int64_t n, numerics::Format format,
                                 CollectiveOp op, uint8_t *out) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t acc = contrib[0][i];
    for (int r = 1; r < worldSize; ++r)
      acc = combineFP8(format, op, acc, contrib[r][i]);
    out[i] = acc;
  }
}

inline void reduceF32InRankOrder(const float *const *contrib, int worldSize,
                                 int64_t n, CollectiveOp op, float *out) {
  for (int64_t i = 0; i < n; ++i) {
    float acc = contrib[0][i];
    for (int r = 1; r < worldSize; ++r)
      acc = combineF32(op, acc, contrib[r][i]);
    out[i] = acc;
  }
}

/// The collective kernels use. Until setCollective() is called, the local
/// world-size-1 implementation.
Collective &currentCollective();

/// Installs `collective` (an MPI or NCCL implementation) for all following
/// calls; null restores the local one. Call between steps, not while a
/// kernel is running: the previous collective is destroyed.
void setCollective(std::unique_ptr<Collective> collective);

/// The built-in single-process implementation (rank 0 of 1).
std::unique_ptr<Collective> createLocalCollective();

/// Adds payload bytes handed to the data-parallel group by compiled code (the
/// msamp_rt_collective_bytes counter).
void countCollectiveBytes(int64_t bytes);

/// Under an MPI launcher (mpirun), initializes MPI and installs the MPI
/// collective; otherwise keeps the local one. In builds without MPI both are
/// no-ops (MpiCollective.cpp / Distributed.cpp).
msamp_rt_status initMpiCollective();
void finalizeMpiCollective();
void abortMpi(int code);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_COLLECTIVE_H
