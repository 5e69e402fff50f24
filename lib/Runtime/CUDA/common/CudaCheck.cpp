//===- CudaCheck.cpp - CUDA, cuBLASLt and NCCL status to sticky errors ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"

#include "../../Status.h"

#include <cstdarg>
#include <cstdio>

namespace msamp::runtime::cuda {
namespace {

thread_local const char *tlsOp = nullptr;

/// " [context]" from a printf-style format, or "" without one.
void formatContext(char *buf, size_t size, const char *fmt, va_list args) {
  buf[0] = '\0';
  if (!fmt)
    return;
  char inner[512];
  std::vsnprintf(inner, sizeof(inner), fmt, args);
  std::snprintf(buf, size, " [%s]", inner);
}

} // namespace

const char *currentOp() { return tlsOp ? tlsOp : "msamp cuda"; }

OpScope::OpScope(const char *op) : previous(tlsOp) { tlsOp = op; }
OpScope::~OpScope() { tlsOp = previous; }

msamp_rt_status cudaFailure(cudaError_t error, const char *call,
                            const char *contextFmt, ...) {
  char context[600];
  va_list args;
  va_start(args, contextFmt);
  formatContext(context, sizeof(context), contextFmt, args);
  va_end(args);
  // Clear the error unless it is sticky, so a later unrelated call does not
  // report it again (a sticky one poisons the context anyway).
  (void)cudaGetLastError();
  msamp_rt_status code = MSAMP_RT_ERROR_INTERNAL;
  const char *prefix = "";
  if (error == cudaErrorMemoryAllocation) {
    code = MSAMP_RT_ERROR_OUT_OF_MEMORY;
    prefix = "out of device memory: ";
  } else if (error == cudaErrorInsufficientDriver ||
             error == cudaErrorNoDevice) {
    code = MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
    prefix = "no CUDA device: ";
  }
  return recordError(code, "%s (cuda): %s%s failed: %s (%s)%s", currentOp(),
                     prefix, call, cudaGetErrorName(error),
                     cudaGetErrorString(error), context);
}

const char *cublasStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_<unknown>";
}

msamp_rt_status cublasFailure(cublasStatus_t status, const char *call,
                              const char *contextFmt, ...) {
  char context[600];
  va_list args;
  va_start(args, contextFmt);
  formatContext(context, sizeof(context), contextFmt, args);
  va_end(args);
  msamp_rt_status code = MSAMP_RT_ERROR_INTERNAL;
  const char *prefix = "";
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    code = MSAMP_RT_ERROR_OUT_OF_MEMORY;
    prefix = "out of device memory: ";
  } else if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
             status == CUBLAS_STATUS_ARCH_MISMATCH) {
    code = MSAMP_RT_ERROR_UNSUPPORTED_DTYPE;
  }
  return recordError(code, "%s (cuda): %s%s failed: %s (%d)%s", currentOp(),
                     prefix, call, cublasStatusName(status),
                     static_cast<int>(status), context);
}

} // namespace msamp::runtime::cuda
