//===- CudaCheck.h - CUDA/cuBLASLt/NCCL status to errors --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every CUDA runtime, cuBLASLt and NCCL status the plugin sees goes through
// these macros (Transformer Engine's NVTE_CHECK_CUDA / _CUBLAS / _NCCL, but
// returning instead of throwing: the runtime has no exceptions). A failure
// becomes the runtime's sticky error, with the ABI entry point being served,
// the call as written (its argument expressions) and, where the caller
// passes one, a context with the argument values:
//
//   msamp_rt_gemm (cuda): cudaMallocAsync(&ptr, bytes, stream) failed:
//   cudaErrorMemoryAllocation (out of memory) [bytes=17179869184]
//
// Out of memory (cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED)
// becomes MSAMP_RT_ERROR_OUT_OF_MEMORY, a missing device or driver
// BACKEND_UNAVAILABLE, an unsupported cuBLASLt configuration
// UNSUPPORTED_DTYPE, NCCL failures COLLECTIVE, the rest INTERNAL.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_CUDACHECK_H
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_CUDACHECK_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace msamp::runtime::cuda {

/// The ABI entry point the current thread is serving ("msamp_rt_gemm"), for
/// messages; "msamp cuda" outside any call.
const char *currentOp();

/// Sets currentOp() for its lifetime.
class OpScope {
public:
  explicit OpScope(const char *op);
  ~OpScope();
  OpScope(const OpScope &) = delete;
  OpScope &operator=(const OpScope &) = delete;

private:
  const char *previous;
};

/// Record the failure of `call` (its source text) with an optional
/// printf-style context; return the recorded code.
msamp_rt_status cudaFailure(cudaError_t error, const char *call,
                            const char *contextFmt, ...)
    __attribute__((format(printf, 3, 4)));
msamp_rt_status cublasFailure(cublasStatus_t status, const char *call,
                              const char *contextFmt, ...)
    __attribute__((format(printf, 3, 4)));

/// "CUBLAS_STATUS_NOT_SUPPORTED": cuBLASLt has no status-name function of
/// its own (cublasGetStatusName lives in libcublas, which we do not link).
const char *cublasStatusName(cublasStatus_t status);

} // namespace msamp::runtime::cuda

/// Returns the recorded error from the enclosing function (which returns
/// msamp_rt_status) when `call` does not return cudaSuccess.
#define MSAMP_CUDA_TRY(call)                                                   \
  do {                                                                         \
    const cudaError_t msampCudaError_ = (call);                                \
    if (msampCudaError_ != cudaSuccess)                                        \
      return ::msamp::runtime::cuda::cudaFailure(msampCudaError_, #call,       \
                                                 nullptr);                     \
  } while (false)

/// MSAMP_CUDA_TRY with a printf-style context naming argument values.
#define MSAMP_CUDA_TRY_CTX(call, ...)                                          \
  do {                                                                         \
    const cudaError_t msampCudaError_ = (call);                                \
    if (msampCudaError_ != cudaSuccess)                                        \
      return ::msamp::runtime::cuda::cudaFailure(msampCudaError_, #call,       \
                                                 __VA_ARGS__);                 \
  } while (false)

#define MSAMP_CUBLAS_TRY_CTX(call, ...)                                        \
  do {                                                                         \
    const cublasStatus_t msampCublasStatus_ = (call);                          \
    if (msampCublasStatus_ != CUBLAS_STATUS_SUCCESS)                           \
      return ::msamp::runtime::cuda::cublasFailure(msampCublasStatus_, #call,  \
                                                   __VA_ARGS__);               \
  } while (false)

/// Propagates a non-OK msamp_rt_status (already recorded).
#define MSAMP_RT_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    const msamp_rt_status msampStatus_ = (expr);                               \
    if (msampStatus_ != MSAMP_RT_OK)                                           \
      return msampStatus_;                                                     \
  } while (false)

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_CUDACHECK_H
