//===- Backend.h - Backend interface and registry ---------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What a backend (cpu now, cuda later) implements. The interface sees plain
// pointers, element counts and shapes: the memref descriptors of the C ABI
// are unpacked and validated once, in MemRefABI.cpp, so a backend never
// re-checks strides or ranks and the same kernels can be called by a future
// pointer-based C API.
//
// Scalars (scales, amaxes, lr, step) are passed as pointers, not values: for
// a device backend they live in device memory and are consumed there (e.g.
// cuBLASLt's A/B scale pointers), with no host round trip.
//
// Error convention: a method returns MSAMP_RT_OK, or records the reason with
// recordError() (Status.h) and returns its code. Methods must not throw.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_BACKEND_H
#define MSAMP_LIB_RUNTIME_BACKEND_H

#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>
#include <memory>

namespace msamp::runtime {

class Collective;

/// A dense row-major tensor: first element, element type, element count.
struct TensorRef {
  void *data = nullptr;
  int32_t dtype = MSAMP_RT_F32;
  int64_t numel = 0;
};

/// msamp_rt_compute_scale.
struct ComputeScaleParams {
  const float *history = nullptr;
  int64_t length = 0;
  const float *prevScale = nullptr;
  float *out = nullptr;
  numerics::ScaleKind kind = numerics::ScaleKind::Pow2;
  numerics::AmaxAlgo algo = numerics::AmaxAlgo::Max;
  float fpMax = 448.0f;
  int32_t margin = 0;
};

/// msamp_rt_quantize_jit: amax of `in`, the scale of a one-entry history
/// [amax] (numerics::computeScale with prevScale), out = Q(in * scale). With
/// `outT`, also the codes of `out` viewed as [rows, cols], transposed.
struct QuantizeJitParams {
  TensorRef in;
  const float *prevScale = nullptr;
  TensorRef out;
  void *outT = nullptr; ///< null: no transposed layout
  int64_t rows = 0, cols = 0;
  float *outScale = nullptr;
  float *outScaleInv = nullptr;
  numerics::ScaleKind kind = numerics::ScaleKind::Pow2;
  float fpMax = 448.0f;
  int32_t margin = 0;
};

/// msamp_rt_scale_update: the bookkeeping of one scaled cast. amax of `in`
/// (MAX-reduced over the collective with reduceAmax), history rolled into
/// outHistory (may be history), the just-in-time scale computeScale(amax,
/// prevScale), the scale used (that one when justInTime or, with a non-null
/// useJit, when *useJit & 1; else *prevScale), its inverse, and the next
/// scale from the rolled history (outNextScale may be prevScale).
struct ScaleUpdateParams {
  TensorRef in;
  const float *history = nullptr;
  int64_t length = 0;
  const float *prevScale = nullptr;
  const uint8_t *useJit = nullptr; ///< null: no warm-up select
  float *outHistory = nullptr;
  float *outScale = nullptr, *outScaleInv = nullptr, *outNextScale = nullptr;
  numerics::ScaleKind kind = numerics::ScaleKind::Pow2;
  numerics::AmaxAlgo algo = numerics::AmaxAlgo::Max;
  float fpMax = 448.0f;
  int32_t margin = 0;
  bool reduceAmax = false, justInTime = false;
  /// msamp_rt_quantize_scale_update: also `out = Q(in * *outScale)` (and
  /// `outT`, its codes as [cols, rows], when not null), the amax taken in
  /// the cast's own pass where the backend can.
  bool quantize = false;
  TensorRef out;
  void *outT = nullptr;
  int64_t rows = 0, cols = 0;
};

/// msamp_rt_quantize_transpose: out = Q(in * *scale) and outT, the same
/// codes as [cols, rows] where `in` is viewed as [rows, cols].
struct QuantizeTransposeParams {
  TensorRef in;
  const float *scale = nullptr;
  TensorRef out;
  void *outT = nullptr;
  int64_t rows = 0, cols = 0;
};

/// msamp_rt_gemm, with shapes resolved: out[b] (m x n) =
/// alpha * op(a[b]) (m x k) * op(b[b]) (k x n), row-major, where
/// op(a[b]) is stored k x m when transA (likewise n x k for transB).
struct GemmParams {
  const void *a = nullptr;
  const void *b = nullptr;
  void *out = nullptr;
  const float *aScaleInv = nullptr;
  const float *bScaleInv = nullptr;
  float *outAmax = nullptr; ///< null: no amax requested
  int32_t aType = MSAMP_RT_F32, bType = MSAMP_RT_F32, outType = MSAMP_RT_F32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, fastAccum = false;
};

enum class ReduceKind : int32_t { Sum = 0, Max = 1, Mean = 2 };

/// msamp_rt_all_reduce. `in` and `out` may be the same pointer.
struct AllReduceParams {
  const void *in = nullptr;
  void *out = nullptr;
  int64_t numel = 0;
  int32_t dtype = MSAMP_RT_F32;
  ReduceKind kind = ReduceKind::Sum;
  const float *scaleInv = nullptr; ///< FP8 payloads only
  float *outScaleInv = nullptr;    ///< FP8 payloads only
  /// msamp_rt_reduce: the owner rank that receives the result (ZeRO); -1
  /// for an all-reduce. Other ranks' `out` and `outScaleInv` are then
  /// unspecified.
  int32_t root = -1;
};

/// msamp_rt_adam_update. Every tensor has `numel` elements. The scale
/// pointers of f32 tensors (and of an f32 grad) are null. Each output may be
/// the same buffer as its input.
struct AdamParams {
  int64_t numel = 0;
  TensorRef param, grad, m, v;
  TensorRef outParam, outM, outV;
  const float *paramScale = nullptr, *gradScaleInv = nullptr, *mScale = nullptr,
              *vScale = nullptr;
  float *outParamScale = nullptr, *outMScale = nullptr, *outVScale = nullptr;
  const float *lr = nullptr;
  const int64_t *step = nullptr;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.0;
  bool decoupled = false;
  bool mode1 = false; ///< ONNX Runtime AdamW mode 1 (with decoupled)
};

/// msamp_rt_sgd_update. `buf`/`outBuf` are only meaningful with
/// hasMomentumBuffer; each output may be the same buffer as its input.
struct SgdParams {
  int64_t numel = 0;
  TensorRef param, grad, buf;
  TensorRef outParam, outBuf;
  const float *paramScale = nullptr, *gradScaleInv = nullptr;
  float *outParamScale = nullptr;
  const float *lr = nullptr;
  const int64_t *step = nullptr;
  double momentum = 0.0, weightDecay = 0.0;
  bool hasMomentumBuffer = false, nesterov = false;
};

/// One implementation of every kernel of the ABI. Dtype combinations have
/// been checked against the ABI's list by the adapter; a backend that does
/// not support one of them records MSAMP_RT_ERROR_UNSUPPORTED_DTYPE.
class Backend {
public:
  virtual ~Backend();

  /// The registry name ("cpu", "cuda").
  virtual const char *name() const = 0;

  /// out = Q(in * scale); in high precision, out FP8 or f16.
  virtual msamp_rt_status quantize(const TensorRef &in, const float *scale,
                                   const TensorRef &out) = 0;
  /// out = cast(decode(in) * scaleInv).
  virtual msamp_rt_status dequantize(const TensorRef &in, const float *scaleInv,
                                     const TensorRef &out) = 0;
  /// *out = max |in|.
  virtual msamp_rt_status amax(const TensorRef &in, float *out) = 0;
  virtual msamp_rt_status computeScale(const ComputeScaleParams &p) = 0;
  /// out[0] = *amax, out[i] = history[i - 1]; out may equal history.
  virtual msamp_rt_status updateAmaxHistory(const float *history,
                                            int64_t length, const float *amax,
                                            float *out) = 0;
  /// The just-in-time cast of one tensor: amax, scale, quantize (and the
  /// transposed layout) in one call, bit-identical to msamp_rt_amax,
  /// msamp_rt_compute_scale (most_recent) and msamp_rt_quantize in a row.
  virtual msamp_rt_status quantizeJit(const QuantizeJitParams &p) = 0;
  /// msamp_rt_scale_update, bit-identical to msamp_rt_amax,
  /// msamp_rt_all_reduce (max), msamp_rt_update_amax_history, two
  /// msamp_rt_compute_scale and 1 / scale in a row.
  virtual msamp_rt_status scaleUpdate(const ScaleUpdateParams &p,
                                      Collective &collective) = 0;

  /// quantize() and its codes transposed, in one pass over the input.
  virtual msamp_rt_status
  quantizeTranspose(const QuantizeTransposeParams &p) = 0;
  virtual msamp_rt_status gemm(const GemmParams &p) = 0;
  /// Reduces through `collective` (the current one, Collective.h).
  virtual msamp_rt_status allReduce(const AllReduceParams &p,
                                    Collective &collective) = 0;
  /// msamp_rt_broadcast: `out` (`bytes` bytes) becomes rank `root`'s `in`
  /// on every rank; `in` may equal `out`.
  virtual msamp_rt_status broadcast(const void *in, void *out, int64_t bytes,
                                    int32_t root, Collective &collective) = 0;
  /// msamp_rt_reduce_scatter: `p.numel` is the shard (output) element
  /// count, `p.in` holds collective.worldSize() shards.
  virtual msamp_rt_status reduceScatter(const AllReduceParams &p,
                                        Collective &collective) = 0;
  /// msamp_rt_all_gather: `out` (worldSize * `bytes` bytes) receives every
  /// rank's `in`, in rank order.
  virtual msamp_rt_status allGather(const void *in, void *out, int64_t bytes,
                                    Collective &collective) = 0;
  virtual msamp_rt_status adamUpdate(const AdamParams &p) = 0;
  /// msamp_rt_adam_update_multi: `count` updates that share dtypes,
  /// hyper-parameters, lr and step (the adapter checked that), each as
  /// adamUpdate would do it. The default runs them one after the other,
  /// which is the CPU backend's definition; the CUDA backend launches them
  /// together.
  virtual msamp_rt_status adamUpdateMulti(const AdamParams *updates,
                                          int64_t count) {
    for (int64_t i = 0; i < count; ++i)
      if (msamp_rt_status s = adamUpdate(updates[i]))
        return s;
    return MSAMP_RT_OK;
  }
  virtual msamp_rt_status sgdUpdate(const SgdParams &p) = 0;
};

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// Creates a backend, or returns null (after recordError with the reason,
/// e.g. "no CUDA device") when it cannot run on this machine.
using BackendFactory = std::unique_ptr<Backend> (*)();

/// Adds `factory` under `name`; returns false (and changes nothing) if the
/// name is taken. Safe to call from static initializers.
bool registerBackend(const char *name, BackendFactory factory);

/// The selected backend. On first use selects $MSAMP_BACKEND, or "cpu" when
/// that is unset or empty; returns null (with the error recorded) when that
/// fails. Instances are created once and live until exit, so a returned
/// pointer stays valid across later selections.
Backend *currentBackend();

/// Makes `name` the current backend; see msamp_rt_set_backend.
msamp_rt_status selectBackend(const char *name);

/// Registers CLASS under NAME at load time, created with
/// std::make_unique<CLASS>(). (The library is shared, so the registering
/// object file is always linked in.)
#define MSAMP_RT_REGISTER_BACKEND(NAME, CLASS)                                 \
  MSAMP_RT_REGISTER_BACKEND_FACTORY(                                           \
      NAME, CLASS, []() -> std::unique_ptr<::msamp::runtime::Backend> {        \
        return std::make_unique<CLASS>();                                      \
      })

/// Registers FACTORY (a BackendFactory) under NAME at load time; for
/// backends that may be unavailable (the factory returns null). ID is any
/// identifier unique in the file.
#define MSAMP_RT_REGISTER_BACKEND_FACTORY(NAME, ID, FACTORY)                   \
  static const bool msampRtRegistered##ID =                                    \
      ::msamp::runtime::registerBackend(NAME, FACTORY)

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_BACKEND_H
