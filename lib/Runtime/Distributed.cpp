//===- Distributed.cpp - the public data-parallel API --------------*- C++
//-*-===//
//
// msamp_rt_distributed_init / _finalize / _abort, the host-side all-reduce
// the session uses (loss averaging, consistency checks across ranks) and the
// collective byte counter. The MPI implementation is compiled in when CMake
// found MPI (MSAMP_RT_HAVE_MPI); without it a process is always rank 0 of 1.
//
//===----------------------------------------------------------------------===//

#include "Collective.h"
#include "Status.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace msamp::runtime {

namespace {
std::atomic<int64_t> collectiveBytes{0};
} // namespace

void countCollectiveBytes(int64_t bytes) { collectiveBytes += bytes; }

#ifndef MSAMP_RT_HAVE_MPI
msamp_rt_status initMpiCollective() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"))
    return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                       "launched by an MPI launcher, but this msamp runtime "
                       "was built without MPI (install libopenmpi-dev and "
                       "rebuild)");
  return MSAMP_RT_OK;
}
void finalizeMpiCollective() {}
void abortMpi(int) {}
#endif

} // namespace msamp::runtime

using namespace msamp::runtime;

extern "C" {

MSAMP_RT_EXPORT msamp_rt_status msamp_rt_distributed_init(void) {
  return initMpiCollective();
}

MSAMP_RT_EXPORT void msamp_rt_distributed_finalize(void) {
  finalizeMpiCollective();
}

MSAMP_RT_EXPORT void msamp_rt_abort(const char *message, int32_t code) {
  std::fprintf(stderr, "%s\n", message ? message : "msamp: aborting");
  std::fflush(stderr);
  abortMpi(code);
  std::exit(code);
}

MSAMP_RT_EXPORT msamp_rt_status msamp_rt_allreduce_f32(float *values, int64_t n,
                                                       int32_t op) {
  if (!values || n < 0 || (op != 0 && op != 1))
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_allreduce_f32: need values, n >= 0 and op "
                       "0 (sum) or 1 (max)");
  return currentCollective().allReduceF32(values, values, n,
                                          static_cast<CollectiveOp>(op));
}

MSAMP_RT_EXPORT int64_t msamp_rt_collective_bytes(void) {
  return collectiveBytes.load();
}

MSAMP_RT_EXPORT void msamp_rt_reset_collective_bytes(void) {
  collectiveBytes = 0;
}

} // extern "C"
