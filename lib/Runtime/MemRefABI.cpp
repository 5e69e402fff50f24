//===- MemRefABI.cpp - The _mlir_ciface_msamp_rt_* entry points -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The adapters compiled code calls (convert-msamp-to-runtime declares each
// symbol with llvm.emit_c_interface, so every memref argument arrives as a
// pointer to an unranked memref). Each adapter
//   1. checks the dtype codes against the ABI's list for that entry point,
//   2. unpacks and validates every descriptor (null pointers, negative sizes,
//      row-major contiguity, one element for scalars),
//   3. checks the shapes against each other,
//   4. dispatches to the current backend with plain pointers.
// Nothing is dereferenced here except the descriptors, which are host
// memory even for a device backend. A failure records a sticky error and
// returns; nothing here aborts.
//
// The descriptors are read by MemRefView.cpp; the collectives' adapters
// are in CollectiveABI.cpp.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "DType.h"
#include "EntryPointSupport.h"
#include "GpuHost.h"
#include "HostCopies.h"
#include "IndexChecks.h"
#include "MemRefView.h"
#include "Status.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace msamp::runtime;

namespace {

bool isStateType(int32_t dtype) {
  return dtype == MSAMP_RT_F32 || isScaledFormat(dtype);
}

constexpr const char *kStateTypes = "f32, f16, f8E4M3FN or f8E5M2";

/// A tensor of an optimizer: data, and (for a scaled type) its scale input
/// and output. `scaleIn`/`scaleOut` stay null for f32.
struct OptimizerOperand {
  View in, out;
  float *scaleIn = nullptr, *scaleOut = nullptr;
};

/// Unpacks one optimizer state tensor with its scales. The scale memrefs of
/// an f32 tensor are dummies and are not looked at.
msamp_rt_status
unpackState(const char *fn, const char *name, const char *scaleName,
            const char *outName, const char *outScaleName, int32_t dtype,
            msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale,
            msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *outScale,
            OptimizerOperand &operand) {
  if (!isStateType(dtype))
    return unsupportedDType(fn, name, dtype, kStateTypes);
  if (msamp_rt_status s = unpack(fn, name, in, dtype, operand.in))
    return s;
  if (msamp_rt_status s = unpack(fn, outName, out, dtype, operand.out))
    return s;
  if (msamp_rt_status s = sameShape(fn, name, operand.in, outName, operand.out))
    return s;
  if (dtype == MSAMP_RT_F32)
    return MSAMP_RT_OK;
  if (msamp_rt_status s =
          unpackF32Scalar(fn, scaleName, scale, operand.scaleIn))
    return s;
  return unpackF32Scalar(fn, outScaleName, outScale, operand.scaleOut);
}

/// Unpacks the scalars both optimizers take beside their tensors: the inverse
/// scale of a scaled (non-f32) gradient, the learning rate and the step.
msamp_rt_status unpackOptimizerScalars(const char *fn, int32_t gradDType,
                                       msamp_rt_unranked_memref *gradScaleInv,
                                       msamp_rt_unranked_memref *lr,
                                       msamp_rt_unranked_memref *step,
                                       const float *&gradScaleInvData,
                                       const float *&lrData,
                                       const int64_t *&stepData) {
  if (gradDType != MSAMP_RT_F32)
    if (msamp_rt_status s = unpackF32Scalar(fn, "grad_scale_inv", gradScaleInv,
                                            gradScaleInvData))
      return s;
  if (msamp_rt_status s = unpackF32Scalar(fn, "lr", lr, lrData))
    return s;
  void *rawStep = nullptr;
  msamp_rt_status s = unpackScalar(fn, "step", step, MSAMP_RT_I64, rawStep);
  stepData = static_cast<const int64_t *>(rawStep);
  return s;
}

/// Optimizer hyperparameters must be finite (a NaN would silently poison
/// every weight).
msamp_rt_status checkFinite(const char *fn, const char *what, double value) {
  if (std::isfinite(value))
    return MSAMP_RT_OK;
  return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT, "%s: %s is %g", fn, what,
                     value);
}

msamp_rt_status checkBeta(const char *fn, const char *what, double beta) {
  if (beta >= 0.0 && beta < 1.0)
    return MSAMP_RT_OK;
  return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                     "%s: %s is %g, expected 0 <= %s < 1", fn, what, beta,
                     what);
}

/// What both Adam entry points check before their tensors: the
/// hyper-parameters, the flags and the gradient's dtype.
msamp_rt_status checkAdamOptions(const char *fn, double beta1, double beta2,
                                 double eps, double weightDecay, int32_t flags,
                                 int32_t gradDType) {
  if (msamp_rt_status s = checkBeta(fn, "beta1", beta1))
    return s;
  if (msamp_rt_status s = checkBeta(fn, "beta2", beta2))
    return s;
  if (msamp_rt_status s = checkFinite(fn, "eps", eps))
    return s;
  if (msamp_rt_status s = checkFinite(fn, "weight_decay", weightDecay))
    return s;
  if (flags & ~(MSAMP_RT_ADAM_DECOUPLED | MSAMP_RT_ADAM_MODE1))
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: unknown flags 0x%x", fn, flags);
  if ((flags & MSAMP_RT_ADAM_MODE1) && !(flags & MSAMP_RT_ADAM_DECOUPLED))
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: MSAMP_RT_ADAM_MODE1 needs "
                       "MSAMP_RT_ADAM_DECOUPLED (flags 0x%x)",
                       fn, flags);
  if (!isStateType(gradDType))
    return unsupportedDType(fn, "grad", gradDType, kStateTypes);
  return MSAMP_RT_OK;
}

} // namespace

extern "C" {

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize(UMR *in, UMR *scale,
                                                    UMR *out, int32_t in_dtype,
                                                    int32_t out_dtype) {
  static const char *const fn = "msamp_rt_quantize";
  if (!isHighPrecision(in_dtype))
    return (void)unsupportedDType(fn, "input", in_dtype, "f32, bf16 or f16");
  if (!isScaledFormat(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  View vin, vout;
  float *s = nullptr;
  MSAMP_RT_TRY(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "scale", scale, s));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend,
         backend->quantize(tensor(vin, in_dtype), s, tensor(vout, out_dtype)));
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_dequantize(UMR *in, UMR *scale_inv,
                                                      UMR *out,
                                                      int32_t in_dtype,
                                                      int32_t out_dtype) {
  static const char *const fn = "msamp_rt_dequantize";
  if (!isScaledFormat(in_dtype))
    return (void)unsupportedDType(fn, "input", in_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  if (!isHighPrecision(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype, "f32, bf16 or f16");
  View vin, vout;
  float *s = nullptr;
  MSAMP_RT_TRY(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "scale_inv", scale_inv, s));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(
      fn, backend,
      backend->dequantize(tensor(vin, in_dtype), s, tensor(vout, out_dtype)));
}

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_amax(UMR *in, UMR *out,
                                                int32_t in_dtype) {
  static const char *const fn = "msamp_rt_amax";
  if (!isHighPrecision(in_dtype))
    return (void)unsupportedDType(fn, "input", in_dtype, "f32, bf16 or f16");
  View vin;
  float *result = nullptr;
  MSAMP_RT_TRY(unpack(fn, "input", in, in_dtype, vin));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "output", out, result));
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->amax(tensor(vin, in_dtype), result));
}

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_compute_scale(UMR *history, UMR *prev_scale, UMR *out,
                                    int32_t kind, int32_t algo,
                                    int32_t format_dtype, int32_t margin) {
  static const char *const fn = "msamp_rt_compute_scale";
  if (kind != 0 && kind != 1)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: kind %d is neither 0 (pow2) nor 1 (exact)",
                             fn, kind);
  if (algo != 0 && algo != 1)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: algo %d is neither 0 (max) nor 1 "
                             "(most_recent)",
                             fn, algo);
  if (!isScaledFormat(format_dtype))
    return (void)unsupportedDType(fn, "format", format_dtype,
                                  "f8E4M3FN, f8E5M2 or f16");
  View vhist;
  ComputeScaleParams p;
  MSAMP_RT_TRY(unpack(fn, "history", history, MSAMP_RT_F32, vhist));
  if (vhist.rank != 1)
    return (void)recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                             "%s: history has rank %lld, expected 1", fn,
                             static_cast<long long>(vhist.rank));
  float *prev = nullptr;
  MSAMP_RT_TRY(unpackF32Scalar(fn, "prev_scale", prev_scale, prev));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "output", out, p.out));
  p.history = static_cast<const float *>(vhist.data);
  p.length = vhist.numel;
  p.prevScale = prev;
  p.kind = static_cast<msamp::numerics::ScaleKind>(kind);
  p.algo = static_cast<msamp::numerics::AmaxAlgo>(algo);
  p.fpMax = msamp::numerics::maxFinite(toFormat(format_dtype));
  p.margin = margin;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->computeScale(p));
}

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_update_amax_history(UMR *history, UMR *amax, UMR *out) {
  static const char *const fn = "msamp_rt_update_amax_history";
  View vhist, vout;
  float *newest = nullptr;
  MSAMP_RT_TRY(unpack(fn, "history", history, MSAMP_RT_F32, vhist));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "amax", amax, newest));
  MSAMP_RT_TRY(unpack(fn, "output", out, MSAMP_RT_F32, vout));
  if (vhist.rank != 1)
    return (void)recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                             "%s: history has rank %lld, expected 1", fn,
                             static_cast<long long>(vhist.rank));
  MSAMP_RT_TRY(sameShape(fn, "history", vhist, "output", vout));
  // Same buffer, or disjoint buffers; a shifted overlap would be rolled
  // twice.
  const float *h = static_cast<const float *>(vhist.data);
  const float *o = static_cast<const float *>(vout.data);
  if (h != o && h && o && h < o + vout.numel && o < h + vhist.numel)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: output partially overlaps history", fn);
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend,
         backend->updateAmaxHistory(h, vhist.numel, newest,
                                    static_cast<float *>(vout.data)));
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_gemm(UMR *a, UMR *a_scale_inv, UMR *b, UMR *b_scale_inv,
                           UMR *out, UMR *out_amax, int32_t a_dtype,
                           int32_t b_dtype, int32_t out_dtype, int32_t flags) {
  static const char *const fn = "msamp_rt_gemm";
  // High-precision GEMMs (f32, and bf16/f16 widened exactly) come from
  // linalg contractions the compiler left unquantized; FP8 ones from
  // msamp.gemm. Mixing the two is not a GEMM any recipe produces.
  const bool bothHigh = isHighPrecision(a_dtype) && isHighPrecision(b_dtype);
  const bool bothFP8 = isFP8(a_dtype) && isFP8(b_dtype);
  if (!bothHigh && !bothFP8)
    return (void)recordError(MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                             "%s: operand dtypes %s x %s are not supported; "
                             "expected f32 x f32 (or bf16/f16) or FP8 x FP8",
                             fn, dtypeName(a_dtype), dtypeName(b_dtype));
  if (a_dtype == MSAMP_RT_F8E5M2 && b_dtype == MSAMP_RT_F8E5M2)
    return (void)recordError(MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                             "%s: f8E5M2 x f8E5M2 is not supported (no "
                             "cuBLASLt kernel; MS-AMP never requests it)",
                             fn);
  if (!isHighPrecision(out_dtype))
    return (void)unsupportedDType(fn, "output", out_dtype, "f32, bf16 or f16");
  if (flags & ~0xF)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: unknown flags 0x%x", fn, flags);

  GemmParams p;
  p.aType = a_dtype;
  p.bType = b_dtype;
  p.outType = out_dtype;
  p.transA = flags & MSAMP_RT_GEMM_TRANSPOSE_A;
  p.transB = flags & MSAMP_RT_GEMM_TRANSPOSE_B;
  p.fastAccum = flags & MSAMP_RT_GEMM_FAST_ACCUM;

  View va, vb, vout;
  float *aScaleInv = nullptr, *bScaleInv = nullptr;
  MSAMP_RT_TRY(unpack(fn, "a", a, a_dtype, va));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "a_scale_inv", a_scale_inv, aScaleInv));
  MSAMP_RT_TRY(unpack(fn, "b", b, b_dtype, vb));
  MSAMP_RT_TRY(unpackF32Scalar(fn, "b_scale_inv", b_scale_inv, bScaleInv));
  MSAMP_RT_TRY(unpack(fn, "output", out, out_dtype, vout));
  if (flags & MSAMP_RT_GEMM_WRITE_AMAX)
    MSAMP_RT_TRY(unpackF32Scalar(fn, "out_amax", out_amax, p.outAmax));

  if ((va.rank != 2 && va.rank != 3) || vb.rank != va.rank ||
      vout.rank != va.rank)
    return (void)recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                             "%s: ranks of a, b, output are %lld, %lld, %lld; "
                             "expected all 2 or all 3",
                             fn, static_cast<long long>(va.rank),
                             static_cast<long long>(vb.rank),
                             static_cast<long long>(vout.rank));
  const int64_t lead = va.rank - 2; // index of the first matrix dimension
  if (lead == 1 && (vb.sizes[0] != va.sizes[0] || vout.sizes[0] != va.sizes[0]))
    return (void)recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                             "%s: batch sizes of a, b, output differ (%lld, "
                             "%lld, %lld)",
                             fn, static_cast<long long>(va.sizes[0]),
                             static_cast<long long>(vb.sizes[0]),
                             static_cast<long long>(vout.sizes[0]));
  p.batch = lead == 1 ? va.sizes[0] : 1;
  p.m = va.sizes[lead + (p.transA ? 1 : 0)];
  p.k = va.sizes[lead + (p.transA ? 0 : 1)];
  const int64_t kB = vb.sizes[lead + (p.transB ? 1 : 0)];
  p.n = vb.sizes[lead + (p.transB ? 0 : 1)];
  if (kB != p.k || vout.sizes[lead] != p.m || vout.sizes[lead + 1] != p.n) {
    char bufA[128], bufB[128], bufO[128];
    return (void)recordError(
        MSAMP_RT_ERROR_SHAPE_MISMATCH,
        "%s: shapes a %s%s x b %s%s -> output %s do not compose", fn,
        formatArray(va.sizes, va.rank, bufA, sizeof(bufA)),
        p.transA ? "^T" : "",
        formatArray(vb.sizes, vb.rank, bufB, sizeof(bufB)),
        p.transB ? "^T" : "",
        formatArray(vout.sizes, vout.rank, bufO, sizeof(bufO)));
  }
  p.a = va.data;
  p.b = vb.data;
  p.out = vout.data;
  p.aScaleInv = aScaleInv;
  p.bScaleInv = bScaleInv;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->gemm(p));
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_adam_update(
    UMR *param, UMR *param_scale, UMR *grad, UMR *grad_scale_inv, UMR *m,
    UMR *m_scale, UMR *v, UMR *v_scale, UMR *lr, UMR *step, UMR *out_param,
    UMR *out_param_scale, UMR *out_m, UMR *out_m_scale, UMR *out_v,
    UMR *out_v_scale, int32_t param_dtype, int32_t grad_dtype, int32_t m_dtype,
    int32_t v_dtype, double beta1, double beta2, double eps,
    double weight_decay, int32_t flags) {
  static const char *const fn = "msamp_rt_adam_update";
  MSAMP_RT_TRY(
      checkAdamOptions(fn, beta1, beta2, eps, weight_decay, flags, grad_dtype));

  OptimizerOperand wOp, mOp, vOp;
  MSAMP_RT_TRY(unpackState(fn, "param", "param_scale", "out_param",
                           "out_param_scale", param_dtype, param, param_scale,
                           out_param, out_param_scale, wOp));
  MSAMP_RT_TRY(unpackState(fn, "m", "m_scale", "out_m", "out_m_scale", m_dtype,
                           m, m_scale, out_m, out_m_scale, mOp));
  MSAMP_RT_TRY(unpackState(fn, "v", "v_scale", "out_v", "out_v_scale", v_dtype,
                           v, v_scale, out_v, out_v_scale, vOp));
  View vgrad;
  MSAMP_RT_TRY(unpack(fn, "grad", grad, grad_dtype, vgrad));
  MSAMP_RT_TRY(sameShape(fn, "param", wOp.in, "grad", vgrad));
  MSAMP_RT_TRY(sameShape(fn, "param", wOp.in, "m", mOp.in));
  MSAMP_RT_TRY(sameShape(fn, "param", wOp.in, "v", vOp.in));

  AdamParams p;
  MSAMP_RT_TRY(unpackOptimizerScalars(fn, grad_dtype, grad_scale_inv, lr, step,
                                      p.gradScaleInv, p.lr, p.step));

  p.numel = wOp.in.numel;
  p.param = tensor(wOp.in, param_dtype);
  p.outParam = tensor(wOp.out, param_dtype);
  p.grad = tensor(vgrad, grad_dtype);
  p.m = tensor(mOp.in, m_dtype);
  p.outM = tensor(mOp.out, m_dtype);
  p.v = tensor(vOp.in, v_dtype);
  p.outV = tensor(vOp.out, v_dtype);
  p.paramScale = wOp.scaleIn;
  p.outParamScale = wOp.scaleOut;
  p.mScale = mOp.scaleIn;
  p.outMScale = mOp.scaleOut;
  p.vScale = vOp.scaleIn;
  p.outVScale = vOp.scaleOut;
  p.beta1 = beta1;
  p.beta2 = beta2;
  p.eps = eps;
  p.weightDecay = weight_decay;
  p.decoupled = flags & MSAMP_RT_ADAM_DECOUPLED;
  p.mode1 = flags & MSAMP_RT_ADAM_MODE1;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->adamUpdate(p));
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_adam_update_multi(
    UMR *table, UMR *lr, UMR *step, int32_t param_dtype, int32_t grad_dtype,
    int32_t m_dtype, int32_t v_dtype, double beta1, double beta2, double eps,
    double weight_decay, int32_t flags) {
  static const char *const fn = "msamp_rt_adam_update_multi";
  MSAMP_RT_TRY(
      checkAdamOptions(fn, beta1, beta2, eps, weight_decay, flags, grad_dtype));
  const struct {
    const char *name;
    int32_t dtype;
  } states[] = {{"param", param_dtype}, {"m", m_dtype}, {"v", v_dtype}};
  for (const auto &state : states)
    if (!isStateType(state.dtype))
      return (void)unsupportedDType(fn, state.name, state.dtype, kStateTypes);
  View vtable;
  MSAMP_RT_TRY(unpack(fn, "table", table, MSAMP_RT_I64, vtable));
  if (vtable.rank != 2 || vtable.sizes[1] != MSAMP_RT_ADAM_TABLE_COLUMNS)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: table must be [count, %d] i64, got rank %lld",
                             fn, MSAMP_RT_ADAM_TABLE_COLUMNS,
                             static_cast<long long>(vtable.rank));
  AdamParams shared;
  MSAMP_RT_TRY(unpackOptimizerScalars(fn, MSAMP_RT_F32, nullptr, lr, step,
                                      shared.gradScaleInv, shared.lr,
                                      shared.step));
  shared.beta1 = beta1;
  shared.beta2 = beta2;
  shared.eps = eps;
  shared.weightDecay = weight_decay;
  shared.decoupled = flags & MSAMP_RT_ADAM_DECOUPLED;
  shared.mode1 = flags & MSAMP_RT_ADAM_MODE1;

  const int64_t count = vtable.sizes[0];
  const auto *rows = static_cast<const int64_t *>(vtable.data);
  std::vector<AdamParams> updates(static_cast<size_t>(count), shared);
  for (int64_t r = 0; r < count; ++r) {
    const int64_t *row = rows + r * MSAMP_RT_ADAM_TABLE_COLUMNS;
    AdamParams &p = updates[static_cast<size_t>(r)];
    p.numel = row[0];
    if (p.numel < 0)
      return (void)recordError(
          MSAMP_RT_ERROR_INVALID_ARGUMENT, "%s: table row %lld: numel is %lld",
          fn, static_cast<long long>(r), static_cast<long long>(p.numel));
    // Columns 1-14: msamp_rt_adam_update's memref arguments but lr and
    // step, in its order. A null pointer is an error, except for the data
    // of an empty tensor (as in unpack) and the ignored scale of an f32
    // tensor (or grad).
    struct Column {
      const char *name;
      int32_t dtype;   ///< of the data; -1 for a scale (f32 when used)
      int32_t scaleOf; ///< for a scale: the dtype it belongs to
    };
    const Column columns[] = {{"param", param_dtype, 0},
                              {"param_scale", -1, param_dtype},
                              {"grad", grad_dtype, 0},
                              {"grad_scale_inv", -1, grad_dtype},
                              {"m", m_dtype, 0},
                              {"m_scale", -1, m_dtype},
                              {"v", v_dtype, 0},
                              {"v_scale", -1, v_dtype},
                              {"out_param", param_dtype, 0},
                              {"out_param_scale", -1, param_dtype},
                              {"out_m", m_dtype, 0},
                              {"out_m_scale", -1, m_dtype},
                              {"out_v", v_dtype, 0},
                              {"out_v_scale", -1, v_dtype}};
    void *ptrs[14];
    for (int c = 0; c < 14; ++c) {
      ptrs[c] = reinterpret_cast<void *>(static_cast<intptr_t>(row[c + 1]));
      const bool used =
          columns[c].dtype >= 0 || columns[c].scaleOf != MSAMP_RT_F32;
      const bool emptyData = columns[c].dtype >= 0 && p.numel == 0;
      if (!used)
        ptrs[c] = nullptr;
      else if (!ptrs[c] && !emptyData)
        return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                                 "%s: table row %lld: %s is a null pointer", fn,
                                 static_cast<long long>(r), columns[c].name);
    }
    p.param = TensorRef{ptrs[0], param_dtype, p.numel};
    p.paramScale = static_cast<const float *>(ptrs[1]);
    p.grad = TensorRef{ptrs[2], grad_dtype, p.numel};
    p.gradScaleInv = static_cast<const float *>(ptrs[3]);
    p.m = TensorRef{ptrs[4], m_dtype, p.numel};
    p.mScale = static_cast<const float *>(ptrs[5]);
    p.v = TensorRef{ptrs[6], v_dtype, p.numel};
    p.vScale = static_cast<const float *>(ptrs[7]);
    p.outParam = TensorRef{ptrs[8], param_dtype, p.numel};
    p.outParamScale = static_cast<float *>(ptrs[9]);
    p.outM = TensorRef{ptrs[10], m_dtype, p.numel};
    p.outMScale = static_cast<float *>(ptrs[11]);
    p.outV = TensorRef{ptrs[12], v_dtype, p.numel};
    p.outVScale = static_cast<float *>(ptrs[13]);
  }
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->adamUpdateMulti(updates.data(), count));
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_sgd_update(
    UMR *param, UMR *param_scale, UMR *grad, UMR *grad_scale_inv, UMR *buf,
    UMR *lr, UMR *step, UMR *out_param, UMR *out_param_scale, UMR *out_buf,
    int32_t param_dtype, int32_t grad_dtype, double momentum,
    double weight_decay, int32_t flags) {
  static const char *const fn = "msamp_rt_sgd_update";
  MSAMP_RT_TRY(checkFinite(fn, "momentum", momentum));
  MSAMP_RT_TRY(checkFinite(fn, "weight_decay", weight_decay));
  if (flags & ~(MSAMP_RT_SGD_NESTEROV | MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER))
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: unknown flags 0x%x", fn, flags);
  const bool hasBuffer = flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER;
  const bool nesterov = flags & MSAMP_RT_SGD_NESTEROV;
  if (momentum != 0.0 && !hasBuffer)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: momentum %g needs a momentum buffer (flag "
                             "0x%x)",
                             fn, momentum, MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER);
  if (nesterov && !(hasBuffer && momentum > 0.0))
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: nesterov needs momentum > 0 and a momentum "
                             "buffer",
                             fn);
  if (!isStateType(grad_dtype))
    return (void)unsupportedDType(fn, "grad", grad_dtype, kStateTypes);

  OptimizerOperand wOp;
  MSAMP_RT_TRY(unpackState(fn, "param", "param_scale", "out_param",
                           "out_param_scale", param_dtype, param, param_scale,
                           out_param, out_param_scale, wOp));
  View vgrad;
  MSAMP_RT_TRY(unpack(fn, "grad", grad, grad_dtype, vgrad));
  MSAMP_RT_TRY(sameShape(fn, "param", wOp.in, "grad", vgrad));

  SgdParams p;
  if (hasBuffer) {
    View vbuf, voutBuf;
    MSAMP_RT_TRY(unpack(fn, "momentum_buffer", buf, MSAMP_RT_F32, vbuf));
    MSAMP_RT_TRY(
        unpack(fn, "out_momentum_buffer", out_buf, MSAMP_RT_F32, voutBuf));
    MSAMP_RT_TRY(sameShape(fn, "param", wOp.in, "momentum_buffer", vbuf));
    MSAMP_RT_TRY(
        sameShape(fn, "momentum_buffer", vbuf, "out_momentum_buffer", voutBuf));
    p.buf = tensor(vbuf, MSAMP_RT_F32);
    p.outBuf = tensor(voutBuf, MSAMP_RT_F32);
  }
  MSAMP_RT_TRY(unpackOptimizerScalars(fn, grad_dtype, grad_scale_inv, lr, step,
                                      p.gradScaleInv, p.lr, p.step));

  p.numel = wOp.in.numel;
  p.param = tensor(wOp.in, param_dtype);
  p.outParam = tensor(wOp.out, param_dtype);
  p.grad = tensor(vgrad, grad_dtype);
  p.paramScale = wOp.scaleIn;
  p.outParamScale = wOp.scaleOut;
  p.momentum = momentum;
  p.weightDecay = weight_decay;
  p.hasMomentumBuffer = hasBuffer;
  p.nesterov = nesterov;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  finish(fn, backend, backend->sgdUpdate(p));
}

} // extern "C"

namespace msamp::runtime {

msamp_rt_status recordIndexError(const char *fn, const char *what,
                                 const int64_t *sizes, int64_t rank,
                                 int64_t linear, int64_t value, int64_t lower,
                                 int64_t upper, int64_t ignoreIndex,
                                 int32_t hasIgnore) {
  // The element's coordinates, innermost dimension last.
  int64_t coords[kMaxRank];
  for (int64_t d = rank - 1, rest = linear; d >= 0; --d) {
    coords[d] = sizes[d] ? rest % sizes[d] : 0;
    rest = sizes[d] ? rest / sizes[d] : 0;
  }
  char at[256], ignored[96] = "";
  if (hasIgnore)
    std::snprintf(ignored, sizeof(ignored),
                  " (or %lld, the loss's "
                  "ignore_index)",
                  static_cast<long long>(ignoreIndex));
  return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                     "%s: %s: value %lld at %s is outside the valid range "
                     "[%lld, %lld)%s",
                     fn, what, static_cast<long long>(value),
                     formatArray(coords, rank, at, sizeof(at)),
                     static_cast<long long>(lower),
                     static_cast<long long>(upper), ignored);
}

} // namespace msamp::runtime

/// The first element of `view` (i64 or i32) outside [lower, upper) that is
/// not the ignore_index recorded as "FN: WHAT: value V at [coords] is
/// outside the valid range [lower, upper)"; MSAMP_RT_OK when there is none.
static msamp_rt_status checkIndexValues(const char *fn, const char *what,
                                        const View &view, int32_t dtype,
                                        int64_t lower, int64_t upper,
                                        int64_t ignore_index,
                                        int32_t has_ignore) {
  for (int64_t i = 0; i < view.numel; ++i) {
    const int64_t value = dtype == MSAMP_RT_I64
                              ? static_cast<const int64_t *>(view.data)[i]
                              : static_cast<const int32_t *>(view.data)[i];
    if ((value >= lower && value < upper) ||
        (has_ignore && value == ignore_index))
      continue;
    return recordIndexError(fn, what, view.sizes, view.rank, i, value, lower,
                            upper, ignore_index, has_ignore);
  }
  return MSAMP_RT_OK;
}

extern "C" {

MSAMP_RT_EXPORT msamp_rt_status msamp_rt_check_index(
    const msamp_rt_unranked_memref *ids, int32_t dtype, int64_t lower,
    int64_t upper, int64_t ignore_index, int32_t has_ignore, const char *name) {
  const char *fn = "msamp_train_step";
  char what[160];
  std::snprintf(what, sizeof(what), "input '%s'", name ? name : "?");
  if (dtype != MSAMP_RT_I64 && dtype != MSAMP_RT_I32)
    return unsupportedDType(fn, what, dtype, "i64 or i32");
  View view;
  if (msamp_rt_status status = unpack(fn, what, ids, dtype, view))
    return status;
  // The batch of a GPU step is device memory: read its host copy.
  const size_t bytes =
      static_cast<size_t>(view.numel) *
      (dtype == MSAMP_RT_I64 ? sizeof(int64_t) : sizeof(int32_t));
  view.data = const_cast<void *>(hostCopyOf(view.data, bytes));
  return checkIndexValues(fn, what, view, dtype, lower, upper, ignore_index,
                          has_ignore);
}

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_check_computed_index(UMR *ids, UMR *site, int32_t dtype,
                                           int64_t upper, int64_t ignore_index,
                                           int32_t has_ignore) {
  const char *fn = "msamp_train_step";
  View vsite;
  // `site` holds bytes (i8); unpack needs only the element size, which any
  // one-byte dtype code gives.
  MSAMP_RT_TRY(
      unpack(fn, "the index check's location", site, MSAMP_RT_F8E4M3FN, vsite));
  // The location as compiled in: bytes, no terminating NUL.
  char what[320];
  std::snprintf(what, sizeof(what), "index computed at %.*s",
                static_cast<int>(std::min<int64_t>(vsite.numel, 280)),
                static_cast<const char *>(vsite.data));
  if (dtype != MSAMP_RT_I64 && dtype != MSAMP_RT_I32)
    return (void)unsupportedDType(fn, what, dtype, "i64 or i32");
  View view;
  MSAMP_RT_TRY(unpack(fn, what, ids, dtype, view));
  // In a step in device memory (the session's begin/end): on the stream,
  // read after the step's wait (IndexChecks.h).
  if (deferComputedIndexCheck(fn, what, view, dtype, upper, ignore_index,
                              has_ignore))
    return;
  // Called outside a session on the CUDA backend: the indices may be device
  // memory; read a copy (one wait).
  std::vector<unsigned char> copy;
  const GpuHostTable *gpu = installedGpuHost();
  const char *backend = msamp_rt_get_backend();
  if (gpu && backend && std::strcmp(backend, "cuda") == 0 && view.numel > 0) {
    copy.resize(static_cast<size_t>(view.numel) *
                (dtype == MSAMP_RT_I64 ? 8 : 4));
    void *dst = copy.data();
    const void *src = view.data;
    const size_t bytes = copy.size();
    MSAMP_RT_TRY(gpu->copyBuffers(&dst, &src, &bytes, 1));
    view.data = copy.data();
  }
  checkIndexValues(fn, what, view, dtype, 0, upper, ignore_index, has_ignore);
}

} // extern "C"
