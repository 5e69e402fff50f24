//===- NcclCollective.cpp - The Collective interface on NCCL --------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Communicator set-up from the environment (an MPI bootstrap is a later
// issue):
//
//   MSAMP_WORLD_SIZE   number of processes; NCCL is used when it is > 1
//   MSAMP_RANK         this process's rank, 0 .. world size - 1
//   MSAMP_NCCL_ID      a file path on a file system every rank sees. Rank 0
//                      writes the 128-byte ncclUniqueId there (to a
//                      temporary name, then rename(), so readers never see
//                      a partial id); the others poll until it appears.
//                      Use a fresh path per job: a stale file from an
//                      earlier job would be read as this job's id.
//   MSAMP_NCCL_TIMEOUT_S  how long ranks > 0 wait for the file (default 300)
//
// The device is chosen by the backend (MSAMP_CUDA_DEVICE, else
// MSAMP_LOCAL_RANK, else 0; CudaBackend.cpp). After ncclCommInitRank the
// group's minimum compute capability and NCCL version are min-reduced once,
// so every rank takes the same NcclTypeMap decision (native FP8 needs all
// devices at sm_90).
//
// NCCL is not linked: the first multi-rank collective loads libnccl.so.2
// (common/LibrarySearch.h: $CUDA_HOME, /usr/local/cuda, the nvidia-nccl
// wheel, the loader path) and resolves the functions below, so a single-GPU
// process never needs NCCL installed. A missing library fails create() with
// MSAMP_RT_ERROR_COLLECTIVE naming it and the places searched.
//
// Every NCCL status is checked; a failure is MSAMP_RT_ERROR_COLLECTIVE with
// the call, its arguments, ncclGetErrorString and ncclGetLastError.
//
//===----------------------------------------------------------------------===//

#include "NcclCollective.h"

#include "../../DType.h"
#include "../../Status.h"
#include "../Kernels.h"
#include "../common/CudaCheck.h"
#include "../common/LibrarySearch.h"

#include <dlfcn.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

namespace msamp::runtime::cuda {
namespace {

/// The NCCL functions this file calls, resolved from the loaded library.
struct NcclApi {
  decltype(&::ncclGetLastError) GetLastError;
  decltype(&::ncclGetErrorString) GetErrorString;
  decltype(&::ncclGetUniqueId) GetUniqueId;
  decltype(&::ncclCommInitRank) CommInitRank;
  decltype(&::ncclCommDestroy) CommDestroy;
  decltype(&::ncclGetVersion) GetVersion;
  decltype(&::ncclAllReduce) AllReduce;
  decltype(&::ncclBroadcast) Broadcast;
  decltype(&::ncclAllGather) AllGather;
  decltype(&::ncclReduceScatter) ReduceScatter;
};

/// Set once by loadNccl(); every use below follows a successful load.
const NcclApi *gNccl = nullptr;

/// Loads NCCL and resolves NcclApi once per process; records the error
/// (which library, where it looked, or which symbol is missing) otherwise.
msamp_rt_status loadNccl() {
  static std::once_flag once;
  static NcclApi api;
  static std::string error;
  std::call_once(once, [] {
    FoundLibrary lib =
        findCudaLibrary(ncclSoname(), processEnvironment(), RTLD_LOCAL);
    if (!lib.handle) {
      error = lib.error;
      return;
    }
    bool complete = true;
    auto resolve = [&](auto &slot, const char *symbol) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          ::dlsym(lib.handle, symbol));
      if (!slot && complete) {
        complete = false;
        error = std::string("msamp cuda: ") + lib.path + " has no " + symbol +
                " (NCCL too old?)";
      }
    };
    resolve(api.GetLastError, "ncclGetLastError");
    resolve(api.GetErrorString, "ncclGetErrorString");
    resolve(api.GetUniqueId, "ncclGetUniqueId");
    resolve(api.CommInitRank, "ncclCommInitRank");
    resolve(api.CommDestroy, "ncclCommDestroy");
    resolve(api.GetVersion, "ncclGetVersion");
    resolve(api.AllReduce, "ncclAllReduce");
    resolve(api.Broadcast, "ncclBroadcast");
    resolve(api.AllGather, "ncclAllGather");
    resolve(api.ReduceScatter, "ncclReduceScatter");
    if (complete)
      gNccl = &api;
  });
  if (!gNccl)
    return recordError(MSAMP_RT_ERROR_COLLECTIVE, "%s (cuda): %s", currentOp(),
                       error.c_str());
  return MSAMP_RT_OK;
}

msamp_rt_status ncclFailure(ncclResult_t result, ncclComm_t comm,
                            const char *call, const char *contextFmt, ...)
    __attribute__((format(printf, 4, 5)));

msamp_rt_status ncclFailure(ncclResult_t result, ncclComm_t comm,
                            const char *call, const char *contextFmt, ...) {
  char context[512] = "";
  if (contextFmt) {
    char inner[480];
    va_list args;
    va_start(args, contextFmt);
    std::vsnprintf(inner, sizeof(inner), contextFmt, args);
    va_end(args);
    std::snprintf(context, sizeof(context), " [%s]", inner);
  }
  const char *last = gNccl->GetLastError(comm);
  return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                     "%s (cuda): %s failed: %s (%d)%s%s%s", currentOp(), call,
                     gNccl->GetErrorString(result), static_cast<int>(result),
                     context, last && *last ? ": " : "", last ? last : "");
}

#define MSAMP_NCCL_TRY_CTX(comm, call, ...)                                    \
  do {                                                                         \
    const ncclResult_t msampNcclResult_ = (call);                              \
    if (msampNcclResult_ != ncclSuccess)                                       \
      return ncclFailure(msampNcclResult_, comm, #call, __VA_ARGS__);          \
  } while (false)

bool parseInt(const char *text, long &value) {
  if (!text || !*text)
    return false;
  char *end = nullptr;
  errno = 0;
  value = std::strtol(text, &end, 10);
  return errno == 0 && end && *end == '\0';
}

/// Rank 0: write the id atomically (temporary file + rename).
msamp_rt_status publishId(const std::string &path, const ncclUniqueId &id) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE *file = std::fopen(tmp.c_str(), "wb");
  if (!file)
    return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                       "%s (cuda): cannot write the NCCL id to %s: %s",
                       currentOp(), tmp.c_str(), std::strerror(errno));
  const size_t written = std::fwrite(id.internal, 1, sizeof(id.internal), file);
  const bool closed = std::fclose(file) == 0;
  if (written != sizeof(id.internal) || !closed ||
      std::rename(tmp.c_str(), path.c_str()) != 0)
    return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                       "%s (cuda): cannot publish the NCCL id as %s: %s",
                       currentOp(), path.c_str(), std::strerror(errno));
  return MSAMP_RT_OK;
}

/// Ranks > 0: wait for rank 0's file.
msamp_rt_status readId(const std::string &path, double timeoutSeconds,
                       ncclUniqueId &id) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration<double>(timeoutSeconds > 0 ? timeoutSeconds : 0);
  for (;;) {
    if (FILE *file = std::fopen(path.c_str(), "rb")) {
      const size_t got = std::fread(id.internal, 1, sizeof(id.internal), file);
      std::fclose(file);
      if (got == sizeof(id.internal))
        return MSAMP_RT_OK;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                         "%s (cuda): timed out after %g s waiting for rank 0 "
                         "to write the NCCL id to MSAMP_NCCL_ID=%s",
                         currentOp(), timeoutSeconds, path.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ncclRedOp_t toNcclOp(CollectiveOp op) {
  return op == CollectiveOp::Max ? ncclMax : ncclSum;
}

} // namespace

msamp_rt_status readNcclEnvironment(NcclEnvironment &env) {
  env = NcclEnvironment();
  const char *worldText = std::getenv("MSAMP_WORLD_SIZE");
  if (!worldText || !*worldText)
    return MSAMP_RT_OK;
  long world = 0, rank = 0;
  if (!parseInt(worldText, world) || world < 1 || world > (1 << 20))
    return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                       "msamp cuda: MSAMP_WORLD_SIZE='%s' is not a positive "
                       "integer",
                       worldText);
  if (world == 1)
    return MSAMP_RT_OK;
  const char *rankText = std::getenv("MSAMP_RANK");
  if (!parseInt(rankText, rank) || rank < 0 || rank >= world)
    return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                       "msamp cuda: MSAMP_RANK='%s' must be an integer in [0, "
                       "%ld) when MSAMP_WORLD_SIZE=%ld",
                       rankText ? rankText : "", world, world);
  const char *idPath = std::getenv("MSAMP_NCCL_ID");
  if (!idPath || !*idPath)
    return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                       "msamp cuda: MSAMP_WORLD_SIZE=%ld needs MSAMP_NCCL_ID, "
                       "a file path every rank can see (rank 0 writes the "
                       "NCCL id there)",
                       world);
  if (const char *timeout = std::getenv("MSAMP_NCCL_TIMEOUT_S");
      timeout && *timeout) {
    char *end = nullptr;
    const double seconds = std::strtod(timeout, &end);
    if (!end || *end != '\0' || !(seconds >= 0))
      return recordError(MSAMP_RT_ERROR_COLLECTIVE,
                         "msamp cuda: MSAMP_NCCL_TIMEOUT_S='%s' is not a "
                         "non-negative number",
                         timeout);
    env.timeoutSeconds = seconds;
  }
  env.enabled = true;
  env.worldSize = static_cast<int>(world);
  env.rank = static_cast<int>(rank);
  env.idPath = idPath;
  return MSAMP_RT_OK;
}

std::unique_ptr<NcclCollective>
NcclCollective::create(const DeviceContext &ctx, const NcclEnvironment &env) {
  if (loadNccl() != MSAMP_RT_OK)
    return nullptr;
  std::unique_ptr<NcclCollective> c(new NcclCollective(ctx));
  c->rankIndex = env.rank;
  c->ranks = env.worldSize;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  auto setUp = [&]() -> msamp_rt_status {
    if (env.rank == 0) {
      MSAMP_NCCL_TRY_CTX(nullptr, gNccl->GetUniqueId(&id), "rank 0 of %d",
                         env.worldSize);
      MSAMP_RT_RETURN_IF_ERROR(publishId(env.idPath, id));
    } else {
      MSAMP_RT_RETURN_IF_ERROR(readId(env.idPath, env.timeoutSeconds, id));
    }
    MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
    MSAMP_NCCL_TRY_CTX(
        nullptr, gNccl->CommInitRank(&c->comm, env.worldSize, id, env.rank),
        "rank %d of %d, device %d, id file %s", env.rank, env.worldSize,
        ctx.device, env.idPath.c_str());
    return c->measureCaps();
  };
  if (setUp() != MSAMP_RT_OK)
    return nullptr;
  return c;
}

NcclCollective::~NcclCollective() {
  if (comm)
    gNccl->CommDestroy(comm);
}

msamp_rt_status NcclCollective::measureCaps() {
  int version = 0;
  MSAMP_NCCL_TRY_CTX(comm, gNccl->GetVersion(&version), "%s", "version");
  // min over the group of {compute capability, NCCL version}: every rank
  // then maps FP8 reductions the same way.
  const int local[2] = {ctx.ccMajor * 10 + ctx.ccMinor, version};
  Staging staging(ctx);
  void *buffer = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.scratch(sizeof(local), &buffer));
  MSAMP_CUDA_TRY(cudaMemcpyAsync(buffer, local, sizeof(local),
                                 cudaMemcpyHostToDevice, ctx.stream));
  MSAMP_NCCL_TRY_CTX(
      comm,
      gNccl->AllReduce(buffer, buffer, 2, ncclInt32, ncclMin, comm, ctx.stream),
      "%s", "group capabilities");
  int group[2] = {0, 0};
  MSAMP_RT_RETURN_IF_ERROR(staging.copyToHost(group, buffer, sizeof(group)));
  MSAMP_RT_RETURN_IF_ERROR(staging.finish());
  groupCaps.minComputeCapability = group[0];
  groupCaps.ncclVersion = group[1];
  return MSAMP_RT_OK;
}

msamp_rt_status NcclCollective::allReduceF32(const float *in, float *out,
                                             int64_t n, CollectiveOp op) {
  if (n <= 0)
    return MSAMP_RT_OK;
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  const NcclReduceMapping mapping =
      mapNcclAllReduce(MSAMP_RT_F32, static_cast<int32_t>(op), groupCaps);
  if (mapping.strategy != NcclStrategy::Native)
    return recordError(MSAMP_RT_ERROR_INTERNAL,
                       "%s (cuda): f32 all-reduce mapped to %s", currentOp(),
                       ncclStrategyName(mapping.strategy));
  Staging staging(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.input(in, n * sizeof(float), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(staging.output(out, n * sizeof(float), &dOut));
  MSAMP_NCCL_TRY_CTX(comm,
                     gNccl->AllReduce(dIn, dOut, static_cast<size_t>(n),
                                      mapping.type, mapping.op, comm,
                                      ctx.stream),
                     "%lld f32, %s, rank %d of %d", static_cast<long long>(n),
                     op == CollectiveOp::Max ? "max" : "sum", rankIndex, ranks);
  return staging.finish();
}

msamp_rt_status NcclCollective::broadcast(void *data, int64_t bytes, int root) {
  if (bytes <= 0)
    return MSAMP_RT_OK;
  if (root < 0 || root >= ranks)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s (cuda): broadcast root %d is not a rank of %d",
                       currentOp(), root, ranks);
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  Staging staging(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(
      staging.input(data, static_cast<size_t>(bytes), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(
      staging.output(data, static_cast<size_t>(bytes), &dOut));
  MSAMP_NCCL_TRY_CTX(comm,
                     gNccl->Broadcast(dIn, dOut, static_cast<size_t>(bytes),
                                      ncclUint8, root, comm, ctx.stream),
                     "%lld bytes from rank %d, rank %d of %d",
                     static_cast<long long>(bytes), root, rankIndex, ranks);
  return staging.finish();
}

msamp_rt_status NcclCollective::allReduceFP8(const uint8_t *in, uint8_t *out,
                                             int64_t n, numerics::Format format,
                                             CollectiveOp op) {
  if (n <= 0)
    return MSAMP_RT_OK;
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  const int32_t dtype = format == numerics::Format::E4M3   ? MSAMP_RT_F8E4M3FN
                        : format == numerics::Format::E5M2 ? MSAMP_RT_F8E5M2
                                                           : -1;
  const NcclReduceMapping mapping =
      mapNcclAllReduce(dtype, static_cast<int32_t>(op), groupCaps);
  Staging staging(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.input(in, static_cast<size_t>(n), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(staging.output(out, static_cast<size_t>(n), &dOut));
  switch (mapping.strategy) {
  case NcclStrategy::Native:
    MSAMP_NCCL_TRY_CTX(
        comm,
        gNccl->AllReduce(dIn, dOut, static_cast<size_t>(n), mapping.type,
                         mapping.op, comm, ctx.stream),
        "%lld %s, %s, rank %d of %d", static_cast<long long>(n),
        dtypeName(dtype), op == CollectiveOp::Max ? "max" : "sum", rankIndex,
        ranks);
    break;
  case NcclStrategy::GatherRankOrder: {
    void *gathered = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(
        staging.scratch(static_cast<size_t>(n) * ranks, &gathered));
    MSAMP_NCCL_TRY_CTX(comm,
                       gNccl->AllGather(dIn, gathered, static_cast<size_t>(n),
                                        ncclUint8, comm, ctx.stream),
                       "%lld %s codes, rank %d of %d",
                       static_cast<long long>(n), dtypeName(dtype), rankIndex,
                       ranks);
    MSAMP_CUDA_TRY(launchReduceFP8RankOrder(
        static_cast<const uint8_t *>(gathered), ranks, n, format,
        op == CollectiveOp::Max, static_cast<uint8_t *>(dOut), ctx.stream));
    break;
  }
  default:
    return recordError(MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                       "%s (cuda): NCCL all-reduce of %s: %s", currentOp(),
                       dtypeName(dtype), mapping.reason);
  }
  return staging.finish();
}

/// ZeRO's reduce-scatter (issue 20). Natively ncclReduceScatter on the
/// type the all-reduce table maps (ncclFloat8e4m3/e5m2 where the group
/// supports FP8 sums); otherwise the rank-order all-reduce above and this
/// rank's slice of it, so the shard is always the all-reduce's bytes.
static msamp_rt_status reduceScatterVia(
    NcclCollective &self, const DeviceContext &ctx, ncclComm_t comm,
    const void *in, void *out, int64_t n, int elemSize, int32_t dtype,
    CollectiveOp op, const NcclGroupCaps &caps,
    const std::function<msamp_rt_status(const void *, void *, int64_t)>
        &allReduce) {
  if (n <= 0)
    return MSAMP_RT_OK;
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  const int ranks = self.worldSize();
  const size_t total = static_cast<size_t>(n) * ranks * elemSize;
  const size_t shard = static_cast<size_t>(n) * elemSize;
  const NcclReduceMapping mapping =
      mapNcclAllReduce(dtype, static_cast<int32_t>(op), caps);
  Staging staging(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.input(in, total, &dIn));
  MSAMP_RT_RETURN_IF_ERROR(staging.output(out, shard, &dOut));
  if (mapping.strategy == NcclStrategy::Native) {
    MSAMP_NCCL_TRY_CTX(
        comm,
        gNccl->ReduceScatter(dIn, dOut, static_cast<size_t>(n), mapping.type,
                             mapping.op, comm, ctx.stream),
        "%lld %s per rank, rank %d of %d", static_cast<long long>(n),
        dtypeName(dtype), self.rank(), ranks);
    return staging.finish();
  }
  void *all = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.scratch(total, &all));
  MSAMP_RT_RETURN_IF_ERROR(allReduce(dIn, all, n * ranks));
  MSAMP_CUDA_TRY(cudaMemcpyAsync(
      dOut, static_cast<const uint8_t *>(all) + shard * self.rank(), shard,
      cudaMemcpyDeviceToDevice, ctx.stream));
  return staging.finish();
}

msamp_rt_status NcclCollective::reduceScatterF32(const float *in, float *out,
                                                 int64_t n, CollectiveOp op) {
  return reduceScatterVia(
      *this, ctx, comm, in, out, n, sizeof(float), MSAMP_RT_F32, op, groupCaps,
      [&](const void *src, void *dst, int64_t count) {
        return allReduceF32(static_cast<const float *>(src),
                            static_cast<float *>(dst), count, op);
      });
}

msamp_rt_status NcclCollective::reduceScatterFP8(const uint8_t *in,
                                                 uint8_t *out, int64_t n,
                                                 numerics::Format format,
                                                 CollectiveOp op) {
  const int32_t dtype = format == numerics::Format::E4M3   ? MSAMP_RT_F8E4M3FN
                        : format == numerics::Format::E5M2 ? MSAMP_RT_F8E5M2
                                                           : -1;
  return reduceScatterVia(*this, ctx, comm, in, out, n, 1, dtype, op, groupCaps,
                          [&](const void *src, void *dst, int64_t count) {
                            return allReduceFP8(
                                static_cast<const uint8_t *>(src),
                                static_cast<uint8_t *>(dst), count, format, op);
                          });
}

/// ncclAllGather of raw bytes (no arithmetic: any architecture).
msamp_rt_status NcclCollective::allGather(const void *in, void *out,
                                          int64_t bytes) {
  if (bytes <= 0)
    return MSAMP_RT_OK;
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  Staging staging(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(staging.input(in, static_cast<size_t>(bytes), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(
      staging.output(out, static_cast<size_t>(bytes) * ranks, &dOut));
  MSAMP_NCCL_TRY_CTX(comm,
                     gNccl->AllGather(dIn, dOut, static_cast<size_t>(bytes),
                                      ncclUint8, comm, ctx.stream),
                     "%lld bytes per rank, rank %d of %d",
                     static_cast<long long>(bytes), rankIndex, ranks);
  return staging.finish();
}

} // namespace msamp::runtime::cuda
