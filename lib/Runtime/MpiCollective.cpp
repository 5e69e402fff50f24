//===- MpiCollective.cpp - data-parallel collectives over MPI -----*- C++
//-*-===//
//
// The CPU backend's multi-process collective (Open MPI from Debian). Every
// reduction gathers the contributions on rank 0, combines them there in rank
// order with the same per-hop arithmetic as every other implementation
// (Collective.h: f32 adds, FP8 sums through half precision with saturation),
// and broadcasts the result. FP8 sums with per-hop rounding are not
// associative, and an MPI user-defined reduction may combine in a different
// order on each rank, so this is what makes every rank end with
// byte-identical gradients (docs/Toolchain.md, "MPI on the CPU").
//
// Open MPI 4.1 has no collective timeouts. A watchdog thread gives every
// collective a deadline ($MSAMP_COLLECTIVE_TIMEOUT_S, default 120 s); when a
// rank dies or hangs, the others stop with a message naming the collective
// and call MPI_Abort instead of waiting forever.
//
//===----------------------------------------------------------------------===//

#include "Collective.h"
#include "Status.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace msamp::runtime {
namespace {

using Clock = std::chrono::steady_clock;

/// Deadline of the collective in flight (0: none), checked by the watchdog.
std::atomic<int64_t> deadlineNs{0};
std::atomic<const char *> inFlight{""};

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

double timeoutSeconds() {
  const char *env = std::getenv("MSAMP_COLLECTIVE_TIMEOUT_S");
  double t = env ? std::atof(env) : 120.0;
  return t > 0 ? t : 120.0;
}

/// Marks a collective in flight for the watchdog for its lifetime.
class Deadline {
public:
  explicit Deadline(const char *what) {
    inFlight.store(what);
    deadlineNs.store(nowNs() + static_cast<int64_t>(timeoutSeconds() * 1e9));
  }
  ~Deadline() { deadlineNs.store(0); }
};

void startWatchdog(int rank) {
  std::thread([rank] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      int64_t deadline = deadlineNs.load();
      if (deadline != 0 && nowNs() > deadline) {
        std::fprintf(stderr,
                     "msamp: rank %d: collective '%s' did not complete within "
                     "%.0f s (another rank failed or hung); aborting the "
                     "job\n",
                     rank, inFlight.load(), timeoutSeconds());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
  }).detach();
}

/// MPI counts are int: move large payloads in chunks.
constexpr int64_t kChunk = int64_t(1) << 26;

class MpiCollective final : public Collective {
public:
  MpiCollective() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  const char *name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int worldSize() const override { return size_; }

  msamp_rt_status allReduceF32(const float *in, float *out, int64_t n,
                               CollectiveOp op) override {
    return reduce(in, out, n, sizeof(float), "all-reduce f32", combineF32(op));
  }

  msamp_rt_status allReduceFP8(const uint8_t *in, uint8_t *out, int64_t n,
                               numerics::Format format,
                               CollectiveOp op) override {
    return reduce(in, out, n, 1, "all-reduce fp8", combineFP8(format, op));
  }

  msamp_rt_status reduceF32(const float *in, float *out, int64_t n,
                            CollectiveOp op, int root) override {
    return reduce(in, out, n, sizeof(float), "reduce f32", combineF32(op),
                  root);
  }

  msamp_rt_status reduceFP8(const uint8_t *in, uint8_t *out, int64_t n,
                            numerics::Format format, CollectiveOp op,
                            int root) override {
    return reduce(in, out, n, 1, "reduce fp8", combineFP8(format, op), root);
  }

  msamp_rt_status broadcast(void *data, int64_t bytes, int root) override {
    if (root < 0 || root >= size_)
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "broadcast: root %d is not a rank of %d", root, size_);
    Deadline deadline("broadcast");
    uint8_t *p = static_cast<uint8_t *>(data);
    for (int64_t begin = 0; begin < bytes; begin += kChunk) {
      int count = static_cast<int>(std::min(kChunk, bytes - begin));
      if (MPI_Bcast(p + begin, count, MPI_BYTE, root, MPI_COMM_WORLD) !=
          MPI_SUCCESS)
        return fail("broadcast", "MPI_Bcast");
    }
    return MSAMP_RT_OK;
  }

  /// Every rank sends shard r of its input to rank r (MPI_Alltoall), and
  /// each rank combines the contributions to its shard in rank order: the
  /// bytes an all-reduce gives at that offset, (N-1)/N of the traffic.
  msamp_rt_status reduceScatterF32(const float *in, float *out, int64_t n,
                                   CollectiveOp op) override {
    return reduceScatter(in, out, n, sizeof(float), "reduce-scatter f32",
                         combineF32(op));
  }

  msamp_rt_status reduceScatterFP8(const uint8_t *in, uint8_t *out, int64_t n,
                                   numerics::Format format,
                                   CollectiveOp op) override {
    return reduceScatter(in, out, n, 1, "reduce-scatter fp8",
                         combineFP8(format, op));
  }

  msamp_rt_status allGather(const void *in, void *out, int64_t bytes) override {
    Deadline deadline("all-gather");
    const uint8_t *src = static_cast<const uint8_t *>(in);
    uint8_t *dst = static_cast<uint8_t *>(out);
    for (int64_t begin = 0; begin < bytes; begin += kChunk) {
      const int count = static_cast<int>(std::min(kChunk, bytes - begin));
      gathered.resize(static_cast<size_t>(count) * size_);
      if (MPI_Allgather(src + begin, count, MPI_BYTE, gathered.data(), count,
                        MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail("all-gather", "MPI_Allgather");
      for (int r = 0; r < size_; ++r)
        std::copy_n(gathered.data() + static_cast<size_t>(r) * count, count,
                    dst + r * bytes + begin);
    }
    return MSAMP_RT_OK;
  }

private:
  template <typename Combine>
  msamp_rt_status reduceScatter(const void *in, void *out, int64_t n,
                                int elemSize, const char *what,
                                Combine combine) {
    Deadline deadline(what);
    const uint8_t *src = static_cast<const uint8_t *>(in);
    uint8_t *dst = static_cast<uint8_t *>(out);
    const int64_t shardBytes = n * elemSize;
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      const int64_t count = std::min(kChunk, n - begin);
      const int bytes = static_cast<int>(count * elemSize);
      // Block r of the send buffer: this chunk of shard r.
      packed.resize(static_cast<size_t>(bytes) * size_);
      for (int r = 0; r < size_; ++r)
        std::copy_n(src + r * shardBytes + begin * elemSize, bytes,
                    packed.data() + static_cast<size_t>(r) * bytes);
      gathered.resize(static_cast<size_t>(bytes) * size_);
      if (MPI_Alltoall(packed.data(), bytes, MPI_BYTE, gathered.data(), bytes,
                       MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail(what, "MPI_Alltoall");
      std::vector<const uint8_t *> parts(size_);
      for (int r = 0; r < size_; ++r)
        parts[r] = gathered.data() + static_cast<size_t>(r) * bytes;
      combine(parts, count, dst + begin * elemSize);
    }
    return MSAMP_RT_OK;
  }

  /// The rank-order combination of gathered contributions (Collective.h).
  using Combine = std::function<void(const std::vector<const uint8_t *> &,
                                     int64_t, uint8_t *)>;
  Combine combineF32(CollectiveOp op) {
    return [this, op](const std::vector<const uint8_t *> &parts, int64_t count,
                      uint8_t *dst) {
      std::vector<const float *> f(parts.size());
      for (size_t r = 0; r < parts.size(); ++r)
        f[r] = reinterpret_cast<const float *>(parts[r]);
      reduceF32InRankOrder(f.data(), size_, count, op,
                           reinterpret_cast<float *>(dst));
    };
  }
  Combine combineFP8(numerics::Format format, CollectiveOp op) {
    return [this, format, op](const std::vector<const uint8_t *> &parts,
                              int64_t count, uint8_t *dst) {
      reduceFP8InRankOrder(parts.data(), size_, count, format, op, dst);
    };
  }

  /// Gathers every rank's contribution at `root` (rank 0 for an
  /// all-reduce), combines them there in rank order, and, for an all-reduce
  /// (`only` < 0), broadcasts the result; with `only` = r the result stays
  /// on rank r (ZeRO's reduce-to-owner).
  template <typename Combine>
  msamp_rt_status reduce(const void *in, void *out, int64_t n, int elemSize,
                         const char *what, Combine combine, int only = -1) {
    if (only >= size_)
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "%s: root %d is not a rank of %d", what, only, size_);
    const int root = only < 0 ? 0 : only;
    Deadline deadline(what);
    const uint8_t *src = static_cast<const uint8_t *>(in);
    uint8_t *dst = static_cast<uint8_t *>(out);
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      int64_t count = std::min(kChunk, n - begin);
      int bytes = static_cast<int>(count * elemSize);
      // `in` may equal `out`: gather first, then overwrite.
      if (rank_ == root)
        gathered.resize(static_cast<size_t>(bytes) * size_);
      if (MPI_Gather(src + begin * elemSize, bytes, MPI_BYTE,
                     rank_ == root ? gathered.data() : nullptr, bytes, MPI_BYTE,
                     root, MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail(what, "MPI_Gather");
      if (rank_ == root) {
        std::vector<const uint8_t *> parts(size_);
        for (int r = 0; r < size_; ++r)
          parts[r] = gathered.data() + static_cast<size_t>(r) * bytes;
        combine(parts, count, dst + begin * elemSize);
      }
      if (only < 0 && MPI_Bcast(dst + begin * elemSize, bytes, MPI_BYTE, 0,
                                MPI_COMM_WORLD) != MPI_SUCCESS)
        return fail(what, "MPI_Bcast");
    }
    return MSAMP_RT_OK;
  }

  msamp_rt_status fail(const char *what, const char *call) {
    return recordError(MSAMP_RT_ERROR_INTERNAL, "%s: %s failed on rank %d",
                       what, call, rank_);
  }

  int rank_ = 0, size_ = 1;
  std::vector<uint8_t> gathered, packed;
};

bool launchedByMpi() {
  for (const char *var :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var))
      return true;
  return false;
}

} // namespace

msamp_rt_status initMpiCollective() {
  if (!launchedByMpi())
    return MSAMP_RT_OK; // one process: the local collective stays
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // The watchdog may call MPI_Abort from its own thread.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS)
      return recordError(MSAMP_RT_ERROR_INTERNAL, "MPI_Init_thread failed");
  }
  auto collective = std::make_unique<MpiCollective>();
  startWatchdog(collective->rank());
  setCollective(std::move(collective));
  return MSAMP_RT_OK;
}

void finalizeMpiCollective() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    setCollective(nullptr);
    MPI_Finalize();
  }
}

void abortMpi(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, code);
}

} // namespace msamp::runtime
