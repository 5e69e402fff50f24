//===- QuantizeJitABI.cpp - _mlir_ciface_msamp_rt_quantize_jit ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The adapter of the fused just-in-time cast (docs/RuntimeABI.md 3.12): the
// chain msamp.amax -> msamp.compute_scale most_recent -> msamp.quantize of
// one tensor in one call, so that a device backend keeps the amax and the
// scale on the device between its kernels. Like MemRefABI.cpp's adapters it
// checks the dtype codes and every descriptor and hands plain pointers to the
// current backend.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "DType.h"
#include "EntryPointSupport.h"
#include "MemRefView.h"
#include "Status.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

using namespace msamp::runtime;

extern "C" {

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize_jit(
    UMR *in, UMR *prev_scale, UMR *out, UMR *out_t, UMR *out_scale,
    UMR *out_scale_inv, int32_t in_dtype, int32_t out_dtype, int32_t kind,
    int32_t margin, int32_t flags) {
  static const char *const fn = "msamp_rt_quantize_jit";
  if (!isHighPrecision(in_dtype))
    return (void)unsupportedDType(fn, "input", in_dtype, "f32, bf16 or f16");
  if (!isScaledFormat(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  if (kind != 0 && kind != 1)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: kind %d is neither 0 (pow2) nor 1 (exact)",
                             fn, kind);
  if (flags & ~MSAMP_RT_QUANTIZE_JIT_TRANSPOSE)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: unknown flags 0x%x", fn,
                             static_cast<unsigned>(flags));
  View vin, vout;
  QuantizeJitParams p;
  MSAMP_RT_TRY(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "prev_scale", prev_scale, p.prevScale));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  if (flags & MSAMP_RT_QUANTIZE_JIT_TRANSPOSE)
    MSAMP_RT_TRY(
        unpackTransposed(fn, out_t, out_dtype, vin, p.rows, p.cols, p.outT));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "out_scale", out_scale, p.outScale));
  MSAMP_RT_TRY(
      unpackF32Scalar(fn, "out_scale_inv", out_scale_inv, p.outScaleInv));
  if (p.outScale == p.outScaleInv)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: out_scale and out_scale_inv are the same "
                             "buffer",
                             fn);
  p.in = tensor(vin, in_dtype);
  p.out = tensor(vout, out_dtype);
  p.kind = static_cast<msamp::numerics::ScaleKind>(kind);
  p.fpMax = msamp::numerics::maxFinite(toFormat(out_dtype));
  p.margin = margin;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->quantizeJit(p));
}

} // extern "C"
