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

#include "common/Staging.h"

#include <mutex>

namespace msamp::runtime::cuda {

/// The backend's lock and device context; null until the plugin entry
/// point created the backend (msamp_rt_set_backend("cuda") succeeded).
std::mutex *activeBackendLock();
const DeviceContext *activeBackendContext();

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_CUDABACKEND_H
