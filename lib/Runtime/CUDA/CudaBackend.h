//===- CudaBackend.h - Access to the plugin's one backend -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend class itself is private to CudaBackend.cpp; the registry
// reaches it through the plugin entry point. The test hooks (TestHooks.cpp)
// run kernels the ABI does not expose, and need its device, stream and lock.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_CUDABACKEND_H
#define MSAMP_LIB_RUNTIME_CUDA_CUDABACKEND_H

#include "../Status.h"
#include "common/CudaCheck.h"
#include "common/Staging.h"

#include <mutex>

namespace msamp::runtime::cuda {

/// The backend's lock and device context; null until the plugin entry
/// point created the backend (msamp_rt_set_backend("cuda") succeeded).
std::mutex *activeBackendLock();
const DeviceContext *activeBackendContext();

/// Runs `body(ctx)` for the entry point `op` with the backend's device
/// current on this thread, under its lock (the wrappers of GPU-compiled
/// steps and the test hooks); an error when no cuda backend is selected.
template <typename Body>
msamp_rt_status withActiveBackend(const char *op, Body &&body) {
  OpScope scope(op);
  std::mutex *lock = activeBackendLock();
  const DeviceContext *ctx = activeBackendContext();
  if (!lock || !ctx)
    return recordError(MSAMP_RT_ERROR_NO_BACKEND,
                       "%s: select the cuda backend first", op);
  std::lock_guard<std::mutex> guard(*lock);
  MSAMP_RT_RETURN_IF_ERROR(ctx->makeCurrent());
  return body(*ctx);
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_CUDABACKEND_H
