//===- ScaleUpdateABI.cpp - _mlir_ciface_msamp_rt_scale_update -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The adapter of one scaled cast's bookkeeping in one call
// (docs/RuntimeABI.md 3.13): amax, its MAX all-reduce over the group, the
// history roll, the scale to cast with, its inverse and the next scale, so
// that a device backend keeps every one of them on the device. Like
// MemRefABI.cpp's adapters it checks the codes and every descriptor and hands
// plain pointers to the current backend with the current collective.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Collective.h"
#include "DType.h"
#include "EntryPointSupport.h"
#include "MemRefView.h"
#include "Status.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

using namespace msamp::runtime;

/// Returns `expr`'s status from the enclosing function when it is not OK.
#define MSAMP_RT_TRY_STATUS(expr)                                              \
  do {                                                                         \
    if (msamp_rt_status s_ = (expr))                                           \
      return s_;                                                               \
  } while (false)

namespace {

constexpr int32_t kKnownFlags = MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX |
                                MSAMP_RT_SCALE_UPDATE_SELECT_JIT |
                                MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME;
/// msamp_rt_quantize_scale_update's: the just-in-time scale needs the amax
/// before the cast, which is msamp_rt_quantize_jit's two-pass form.
constexpr int32_t kKnownFusedFlags = MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX |
                                     MSAMP_RT_SCALE_UPDATE_SELECT_JIT |
                                     MSAMP_RT_SCALE_UPDATE_TRANSPOSE;

/// The codes and flags, before any descriptor is read.
msamp_rt_status checkCodes(const char *fn, int32_t in_dtype, int32_t kind,
                           int32_t algo, int32_t format_dtype, int32_t flags,
                           int32_t known = kKnownFlags) {
  if (!isHighPrecision(in_dtype))
    return unsupportedDType(fn, "input", in_dtype, "f32, bf16 or f16");
  if (!isScaledFormat(format_dtype))
    return unsupportedDType(fn, "format", format_dtype,
                            "f8E4M3FN, f8E5M2 or f16");
  if (kind != 0 && kind != 1)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: kind %d is neither 0 (pow2) nor 1 (exact)", fn,
                       kind);
  if (algo != 0 && algo != 1)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: algo %d is neither 0 (max) nor 1 (most_recent)", fn,
                       algo);
  if (flags & ~known)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: unknown flags 0x%x", fn,
                       static_cast<unsigned>(flags));
  return MSAMP_RT_OK;
}

/// History and its rolled output: rank 1, the same length >= 1, the same
/// buffer or disjoint ones.
msamp_rt_status unpackHistories(const char *fn, UMR *history, UMR *outHistory,
                                ScaleUpdateParams &p) {
  View vh, vo;
  if (msamp_rt_status s = unpack(fn, "history", history, MSAMP_RT_F32, vh))
    return s;
  if (msamp_rt_status s =
          unpack(fn, "out_history", outHistory, MSAMP_RT_F32, vo))
    return s;
  if (vh.rank != 1 || vh.numel < 1)
    return recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                       "%s: history must be rank 1 with at least one entry, "
                       "got rank %lld with %lld",
                       fn, static_cast<long long>(vh.rank),
                       static_cast<long long>(vh.numel));
  if (msamp_rt_status s = sameShape(fn, "history", vh, "out_history", vo))
    return s;
  const float *h = static_cast<const float *>(vh.data);
  float *o = static_cast<float *>(vo.data);
  if (h != o && h < o + vo.numel && o < h + vh.numel)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: out_history partially overlaps history", fn);
  p.history = h;
  p.outHistory = o;
  p.length = vh.numel;
  return MSAMP_RT_OK;
}

/// The arguments both entry points share, into `p` (and the input's view).
msamp_rt_status unpackScaleUpdate(
    const char *fn, UMR *in, UMR *history, UMR *prev_scale, UMR *use_jit,
    UMR *out_history, UMR *out_scale, UMR *out_scale_inv, UMR *out_next_scale,
    int32_t in_dtype, int32_t kind, int32_t algo, int32_t format_dtype,
    int32_t margin, int32_t flags, View &vin, ScaleUpdateParams &p) {
  MSAMP_RT_TRY_STATUS(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY_STATUS(unpackHistories(fn, history, out_history, p));
  MSAMP_RT_TRY_STATUS(
      unpackF32Scalar(fn, "prev_scale", prev_scale, p.prevScale));
  if (flags & MSAMP_RT_SCALE_UPDATE_SELECT_JIT) {
    // An i1 buffer holds one byte per element: any one-byte dtype code
    // gives the byte's address.
    View vj;
    MSAMP_RT_TRY_STATUS(unpack(fn, "use_jit", use_jit, MSAMP_RT_F8E4M3FN, vj));
    if (vj.numel != 1)
      return recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                         "%s: use_jit must hold one element, got %lld", fn,
                         static_cast<long long>(vj.numel));
    p.useJit = static_cast<const uint8_t *>(vj.data);
  }
  MSAMP_RT_TRY_STATUS(unpackF32Scalar(fn, "out_scale", out_scale, p.outScale));
  MSAMP_RT_TRY_STATUS(
      unpackF32Scalar(fn, "out_scale_inv", out_scale_inv, p.outScaleInv));
  MSAMP_RT_TRY_STATUS(
      unpackF32Scalar(fn, "out_next_scale", out_next_scale, p.outNextScale));
  // Only the next scale may share a buffer with an input (prev_scale, the
  // state it replaces); the scale and its inverse are read after the call.
  const float *outs[] = {p.outScale, p.outScaleInv, p.outNextScale};
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (outs[i] == outs[j])
        return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                           "%s: out_scale, out_scale_inv and "
                           "out_next_scale must be three buffers",
                           fn);
  if (p.outScale == p.prevScale || p.outScaleInv == p.prevScale)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: only out_next_scale may be prev_scale's "
                       "buffer",
                       fn);
  p.in = tensor(vin, in_dtype);
  p.kind = static_cast<msamp::numerics::ScaleKind>(kind);
  p.algo = static_cast<msamp::numerics::AmaxAlgo>(algo);
  p.fpMax = msamp::numerics::maxFinite(toFormat(format_dtype));
  p.margin = margin;
  p.reduceAmax = flags & MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX;
  p.justInTime = flags & MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME;
  return MSAMP_RT_OK;
}

} // namespace

extern "C" {

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_scale_update(
    UMR *in, UMR *history, UMR *prev_scale, UMR *use_jit, UMR *out_history,
    UMR *out_scale, UMR *out_scale_inv, UMR *out_next_scale, int32_t in_dtype,
    int32_t kind, int32_t algo, int32_t format_dtype, int32_t margin,
    int32_t flags) {
  static const char *const fn = "msamp_rt_scale_update";
  MSAMP_RT_TRY(checkCodes(fn, in_dtype, kind, algo, format_dtype, flags));
  View vin;
  ScaleUpdateParams p;
  MSAMP_RT_TRY(unpackScaleUpdate(fn, in, history, prev_scale, use_jit,
                                 out_history, out_scale, out_scale_inv,
                                 out_next_scale, in_dtype, kind, algo,
                                 format_dtype, margin, flags, vin, p));
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->scaleUpdate(p, currentCollective()));
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize_scale_update(
    UMR *in, UMR *history, UMR *prev_scale, UMR *use_jit, UMR *out, UMR *out_t,
    UMR *out_history, UMR *out_scale, UMR *out_scale_inv, UMR *out_next_scale,
    int32_t in_dtype, int32_t out_dtype, int32_t kind, int32_t algo,
    int32_t format_dtype, int32_t margin, int32_t flags) {
  static const char *const fn = "msamp_rt_quantize_scale_update";
  MSAMP_RT_TRY(checkCodes(fn, in_dtype, kind, algo, format_dtype, flags,
                          kKnownFusedFlags));
  if (!isScaledFormat(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  View vin, vout;
  ScaleUpdateParams p;
  MSAMP_RT_TRY(unpackScaleUpdate(fn, in, history, prev_scale, use_jit,
                                 out_history, out_scale, out_scale_inv,
                                 out_next_scale, in_dtype, kind, algo,
                                 format_dtype, margin, flags, vin, p));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  if (flags & MSAMP_RT_SCALE_UPDATE_TRANSPOSE) {
    MSAMP_RT_TRY(
        unpackTransposed(fn, out_t, out_dtype, vin, p.rows, p.cols, p.outT));
    if (p.outT == vout.data && vin.numel > 0)
      return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                               "%s: out and out_t are the same buffer", fn);
  }
  p.quantize = true;
  p.out = tensor(vout, out_dtype);
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->scaleUpdate(p, currentCollective()));
}

} // extern "C"
