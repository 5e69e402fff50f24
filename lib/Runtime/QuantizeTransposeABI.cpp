//===- QuantizeTransposeABI.cpp - _mlir_ciface_msamp_rt_quantize_transpose ===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The adapter of the scaled cast into both operand layouts
// (docs/RuntimeABI.md 3.14): msamp_rt_quantize's output and the same codes
// transposed, for a GEMM that needs the FP8 operand with its other
// dimension innermost (cuBLASLt's FP8 GEMMs take only the TN layout). Like
// MemRefABI.cpp's adapters it checks the dtype codes and every descriptor
// and hands plain pointers to the current backend. The transposed layout's
// check is shared with msamp_rt_quantize_jit's.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "DType.h"
#include "EntryPointSupport.h"
#include "MemRefView.h"
#include "Status.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

using namespace msamp::runtime;

msamp_rt_status msamp::runtime::unpackTransposed(const char *fn, UMR *outT,
                                                 int32_t dtype, const View &in,
                                                 int64_t &rows, int64_t &cols,
                                                 void *&data) {
  if (in.rank < 1)
    return recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                       "%s: a transposed layout needs an input of rank >= 1, "
                       "got rank 0",
                       fn);
  View vt;
  if (msamp_rt_status s = unpack(fn, "out_t", outT, dtype, vt))
    return s;
  cols = in.sizes[in.rank - 1];
  rows = cols == 0 ? 0 : in.numel / cols;
  if (vt.rank != 2 || vt.sizes[0] != cols || vt.sizes[1] != rows)
    return recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                       "%s: out_t must be [%lld, %lld] (the input as [rows, "
                       "cols], transposed), got rank %lld",
                       fn, static_cast<long long>(cols),
                       static_cast<long long>(rows),
                       static_cast<long long>(vt.rank));
  data = vt.data;
  return MSAMP_RT_OK;
}

extern "C" {

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_quantize_transpose(UMR *in, UMR *scale, UMR *out,
                                         UMR *out_t, int32_t in_dtype,
                                         int32_t out_dtype) {
  static const char *const fn = "msamp_rt_quantize_transpose";
  if (!isHighPrecision(in_dtype))
    return (void)unsupportedDType(fn, "input", in_dtype, "f32, bf16 or f16");
  if (!isScaledFormat(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  View vin, vout;
  QuantizeTransposeParams p;
  MSAMP_RT_TRY(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "scale", scale, p.scale));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  MSAMP_RT_TRY(
      unpackTransposed(fn, out_t, out_dtype, vin, p.rows, p.cols, p.outT));
  if (p.outT == vout.data && vin.numel > 0)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: out and out_t are the same buffer", fn);
  p.in = tensor(vin, in_dtype);
  p.out = tensor(vout, out_dtype);
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->quantizeTranspose(p));
}

} // extern "C"
