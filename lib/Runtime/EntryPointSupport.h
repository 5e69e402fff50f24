//===- EntryPointSupport.h - what every entry-point adapter uses -*- C++
//-*-===//
//
// Shared by the _mlir_ciface_msamp_rt_* adapters of MemRefABI.cpp and
// CollectiveABI.cpp: the dtype refusal, the current backend, the generic
// failure message and the early return of a void adapter (and the
// transposed layout of the quantizing adapters).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_ENTRYPOINTSUPPORT_H
#define MSAMP_LIB_RUNTIME_ENTRYPOINTSUPPORT_H

#include "Backend.h"
#include "DType.h"
#include "MemRefView.h"
#include "Status.h"

#include "MSAMP/Runtime/msamp_runtime.h"

namespace msamp::runtime {

inline msamp_rt_status unsupportedDType(const char *fn, const char *what,
                                        int32_t dtype, const char *allowed) {
  return recordError(MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                     "%s: %s dtype %d (%s) is not supported; expected %s", fn,
                     what, dtype, dtypeName(dtype), allowed);
}

/// The current backend, or null with the error recorded.
inline Backend *backendFor(const char *fn) {
  Backend *backend = currentBackend();
  if (!backend)
    recordError(MSAMP_RT_ERROR_NO_BACKEND, "%s: no backend is selected", fn);
  return backend;
}

/// Records a generic message for a backend failure that recorded nothing
/// itself (the first recorded error wins, so a specific one is kept).
inline void finish(const char *fn, const Backend *backend,
                   msamp_rt_status status) {
  if (status != MSAMP_RT_OK)
    recordError(status, "%s: backend '%s' failed", fn, backend->name());
}

inline TensorRef tensor(const View &view, int32_t dtype) {
  return TensorRef{view.data, dtype, view.numel};
}

/// The transposed layout of msamp_rt_quantize_jit and
/// msamp_rt_quantize_transpose: `outT` must be rank 2, [cols, rows] of `in`
/// viewed as [rows, cols] (cols its last dimension), of `dtype`; sets
/// `rows`, `cols` and `data` (QuantizeTransposeABI.cpp).
msamp_rt_status unpackTransposed(const char *fn, msamp_rt_unranked_memref *outT,
                                 int32_t dtype, const View &in, int64_t &rows,
                                 int64_t &cols, void *&data);

} // namespace msamp::runtime

/// Returns from the enclosing void adapter when `expr` is not MSAMP_RT_OK
/// (the error is already recorded).
#define MSAMP_RT_TRY(expr)                                                     \
  do {                                                                         \
    if ((expr) != MSAMP_RT_OK)                                                 \
      return;                                                                  \
  } while (false)

using UMR = msamp_rt_unranked_memref;

#endif // MSAMP_LIB_RUNTIME_ENTRYPOINTSUPPORT_H
