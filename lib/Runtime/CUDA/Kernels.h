//===- Kernels.h - Launchers of the CUDA backend's kernels ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Host-side launchers, one group per .cu file (Transformer Engine's
// common/ layout: cast/, transpose/, recipe/, optimizer/, gemm/, comm/).
// Every pointer is a device pointer (the backend has already staged host
// buffers, common/Staging.h) and every launcher enqueues on `stream` and
// returns cudaGetLastError() of the launch; none synchronizes.
//
// Amaxes are accumulated as integer magnitude bits (ElementAccess.h
// magnitudeBits) with atomicMax into a caller-zeroed `unsigned`, and turned
// into the f32 amax, with numerics::amax's canonical NaN, by
// launchFinalizeAmax. That keeps the reduction order-independent, like the
// CPU's.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_KERNELS_H
#define MSAMP_LIB_RUNTIME_CUDA_KERNELS_H

#include "optimizer/OptimizerMath.h"

#include "MSAMP/Numerics/FP8.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace msamp::runtime::cuda {

/// Upper bound on the blocks of a grid-stride kernel (a few waves of the
/// device's SMs); set once by the backend from the device's SM count.
int maxGridBlocks();
void setMaxGridBlocks(int blocks);

//===--- cast/quantize.cu -------------------------------------------------===//

/// out[i] = Q_out(in[i] * *scale) (msamp_rt_quantize), fused with the amax of
/// the input when `amaxBits` is non-null (Transformer Engine's cast computes
/// the amax of what it casts, for the next step's scale). With `onlyIf`, the
/// kernel does nothing unless that device byte's low bit is set (a branch
/// decided on the device: msamp_rt_quantize_scale_update's warm-up recast).
cudaError_t launchQuantize(const void *in, int32_t inType, const float *scale,
                           void *out, int32_t outType, unsigned *amaxBits,
                           int64_t n, cudaStream_t stream,
                           const uint8_t *onlyIf = nullptr);

//===--- cast/quantize_jit.cu ---------------------------------------------===//

/// msamp_rt_quantize_jit's device work (docs/RuntimeABI.md 3.12).
struct QuantizeJitLaunchArgs {
  const void *in = nullptr;
  int32_t inType = MSAMP_RT_F32;
  int64_t n = 0;
  const float *prevScale = nullptr; ///< may alias outScale
  void *out = nullptr;
  int32_t outType = MSAMP_RT_F8E4M3FN;
  void *outT = nullptr; ///< null: no transposed layout
  int64_t rows = 0, cols = 0;
  float *outScale = nullptr, *outScaleInv = nullptr;
  numerics::ScaleKind kind = numerics::ScaleKind::Pow2;
  float fpMax = 448.0f;
  int32_t margin = 0;
  unsigned *amaxBits = nullptr; ///< caller-zeroed accumulator
};

/// amax (launchAmax), then one kernel that takes the scale from the amax
/// on the device and quantizes (two launches); with `outT`, a one-thread
/// scale kernel and launchCastTranspose instead of the second (three).
cudaError_t launchQuantizeJit(const QuantizeJitLaunchArgs &args,
                              cudaStream_t stream);

//===--- cast/dequantize.cu -----------------------------------------------===//

/// out[i] = round_out(decode(in[i]) * *scaleInv) (msamp_rt_dequantize).
cudaError_t launchDequantize(const void *in, int32_t inType,
                             const float *scaleInv, void *out, int32_t outType,
                             int64_t n, cudaStream_t stream);

/// out[i] = round_out(in[i]) between high-precision types (f32, bf16, f16);
/// widening is exact. With `amaxBits`, also the amax of the f32 values.
cudaError_t launchConvert(const void *in, int32_t inType, void *out,
                          int32_t outType, unsigned *amaxBits, int64_t n,
                          cudaStream_t stream);

//===--- recipe/amax.cu ---------------------------------------------------===//

/// atomicMax(*amaxBits, max_i magnitudeBits(in[i])); in is f32, bf16 or f16.
cudaError_t launchAmax(const void *in, int32_t inType, int64_t n,
                       unsigned *amaxBits, cudaStream_t stream);

/// *out = amaxFromBits(*amaxBits).
cudaError_t launchFinalizeAmax(const unsigned *amaxBits, float *out,
                               cudaStream_t stream);

//===--- recipe/delayed_scaling.cu ----------------------------------------===//

/// msamp_rt_compute_scale on the device: numerics::reduceAmaxHistory and
/// numerics::computeScale in one thread (L is a few hundred at most; one
/// thread runs the core's own loop, so NaN and tie rules are its rules).
/// `out` may alias `prevScale`.
cudaError_t launchComputeScale(const float *history, int64_t length,
                               const float *prevScale, float *out,
                               numerics::ScaleKind kind,
                               numerics::AmaxAlgo algo, float fpMax,
                               int32_t margin, cudaStream_t stream);

/// msamp_rt_update_amax_history: out[0] = *amax, out[i] = history[i - 1].
/// `history` and `out` must not overlap (the backend copies an in-place
/// history first); *amax is read before anything is written.
cudaError_t launchRollAmaxHistory(const float *history, int64_t length,
                                  const float *amax, float *out,
                                  cudaStream_t stream);

/// The fused delayed-scaling update of one tensor (Transformer Engine's
/// amax_and_scale_update): roll `history` in place with *amax, then
/// *scale = computeScale(reduce(new history), *scale) and *scaleInv =
/// 1 / *scale. For sessions that keep the recipe state on the device; the
/// ABI's two entry points use the two kernels above.
cudaError_t launchDelayedScalingUpdate(float *history, int64_t length,
                                       const float *amax, float *scale,
                                       float *scaleInv,
                                       numerics::ScaleKind kind,
                                       numerics::AmaxAlgo algo, float fpMax,
                                       int32_t margin, cudaStream_t stream);

//===--- recipe/scale_update.cu -------------------------------------------===//

/// msamp_rt_scale_update's bookkeeping after the amax (docs/RuntimeABI.md
/// 3.13): numerics::scaleUpdate in one thread.
struct ScaleUpdateLaunchArgs {
  const unsigned *amaxBits = nullptr; ///< the accumulated amax (launchAmax)
  const float *amax = nullptr; ///< non-null: the all-reduced amax instead
  const float *history = nullptr;
  float *outHistory = nullptr; ///< may be history
  int length = 0;
  const float *prevScale = nullptr; ///< may be outNextScale
  const uint8_t *useJit = nullptr;  ///< null: no warm-up select
  bool justInTime = false;
  float *outScale = nullptr, *outScaleInv = nullptr, *outNextScale = nullptr;
  numerics::ScaleKind kind = numerics::ScaleKind::Pow2;
  numerics::AmaxAlgo algo = numerics::AmaxAlgo::Max;
  float fpMax = 448.0f;
  int32_t margin = 0;
};

/// One single-thread kernel.
cudaError_t launchScaleUpdate(const ScaleUpdateLaunchArgs &args,
                              cudaStream_t stream);

//===--- transpose/cast_transpose.cu --------------------------------------===//

/// Fused cast + transpose of a row-major [rows, cols] high-precision matrix:
/// out = Q(in * *scale) as [rows, cols] (may be null) and outT = its
/// transpose [cols, rows]; one quantization, two layouts, the same scale
/// (MS-AMP's fp8_fused_cast_transpose, docs/Numerics.md 3.1). With `amaxBits`,
/// the amax of the input. `onlyIf` as for launchQuantize.
cudaError_t launchCastTranspose(const void *in, int32_t inType, int64_t rows,
                                int64_t cols, const float *scale, void *out,
                                void *outT, int32_t outType, unsigned *amaxBits,
                                cudaStream_t stream,
                                const uint8_t *onlyIf = nullptr);

/// Copies `batch` row-major [srcRows, srcCols] matrices of `elemBytes`-byte
/// elements (1, 2 or 4) into [dstRows, dstCols] ones, transposed when
/// `transpose`, zero-filling the rest:
///   dst[b][i][j] = transpose ? src[b][j][i] : src[b][i][j]   (in range)
///                = 0                                          (otherwise)
/// The GEMM's canonicalization to cuBLASLt's TN layout with dimensions
/// padded to multiples of 16; FP8 zero bytes are +0.
cudaError_t launchPackMatrix(const void *src, int elemBytes, int64_t batch,
                             int64_t srcRows, int64_t srcCols, bool transpose,
                             void *dst, int64_t dstRows, int64_t dstCols,
                             cudaStream_t stream);

//===--- gemm/gemm_epilogue.cu --------------------------------------------===//

/// dst[b][i][j] = round_out(src[b][i][j]) for i < rows, j < cols, from an
/// f32 [batch, srcRows, srcCols] GEMM result (the padded one, or the real
/// one); with `amaxBits`, the amax of the f32 values read (the ABI's
/// out_amax is of the f32 result, before rounding).
cudaError_t launchGemmEpilogue(const float *src, int64_t batch, int64_t srcRows,
                               int64_t srcCols, void *dst, int32_t dstType,
                               int64_t rows, int64_t cols, unsigned *amaxBits,
                               cudaStream_t stream);

/// out[0] = a * b (one f32 rounding, the CPU GEMM's alpha), out[1] = 0: the
/// device alpha/beta of a high-precision cuBLASLt GEMM.
cudaError_t launchAlphaBeta(const float *a, const float *b, float *out,
                            cudaStream_t stream);

//===--- optimizer/adam.cu, optimizer/sgd.cu ------------------------------===//

/// A state tensor of an optimizer: f32, or a scaled format with its scale.
struct StateTensorArgs {
  const void *in = nullptr;
  void *out = nullptr;
  int32_t dtype = MSAMP_RT_F32;
  const float *scale = nullptr; ///< scaled formats only
  float *outScale = nullptr;    ///< scaled formats only
};

/// Device scratch the optimizer launchers need: one OptimizerScratch.
struct OptimizerScratch {
  float gradScaleInv;
  float oldScale[3];
  float loadScaleInv[3]; ///< divRn(1, oldScale): the CPU's decode multiplier
  float newScale[3];
  unsigned amaxBits[3];
};

/// One tensor of an Adam update: msamp_rt_adam_update's, or one row of
/// msamp_rt_adam_update_multi's table.
struct AdamTensorArgs {
  int64_t n = 0;
  const void *grad = nullptr;
  const float *gradScaleInv = nullptr; ///< non-f32 grads only
  StateTensorArgs param, m, v;
};

/// What every tensor of one launchAdam shares. lr and step are device
/// pointers: the kernels read them and derive the step's constants
/// themselves (makeAdamConstants), so no value comes back to the host.
struct AdamGroupArgs {
  int32_t gradType = MSAMP_RT_F32, paramType = MSAMP_RT_F32,
          mType = MSAMP_RT_F32, vType = MSAMP_RT_F32;
  const float *lr = nullptr;
  const int64_t *step = nullptr;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.0;
  bool decoupled = false, mode1 = false;

  bool anyScaled() const {
    return paramType != MSAMP_RT_F32 || mType != MSAMP_RT_F32 ||
           vType != MSAMP_RT_F32;
  }
};

/// Device scratch of one tensor of a scaled update: the amaxes of its new
/// values (zeroed by the launcher) and the snapshot of its input scales.
struct AdamTensorScratch {
  unsigned amaxBits[3];
  float oldScale[3];
};

/// Bytes of device scratch launchAdam needs for `count` tensors of `group`
/// (0 when no state is scaled).
size_t adamScratchBytes(const AdamGroupArgs &group, int64_t count);

/// Adam/AdamW on `count` tensors (docs/Numerics.md 5.2). With a scaled
/// param, m or v: the scratch zeroed, pass 1 (amaxes of the new values,
/// nothing stored, input scales snapshotted) and pass 2 (recompute, store
/// with the new just-in-time scales, write them); f32 states: pass 2 only.
/// Each pass is one launch per batch of up to kAdamBatchTensors tensors
/// (the tensor table travels as the kernel's parameter).
cudaError_t launchAdam(const AdamGroupArgs &group,
                       const AdamTensorArgs *tensors, int64_t count,
                       void *scratch, cudaStream_t stream);

/// Tensors per launch of launchAdam: the table fits the 4 KiB of kernel
/// parameters every CUDA version accepts.
constexpr int kAdamBatchTensors = 24;

/// Forces launchAdam's chunk size (elements: a multiple of kThreads, and
/// of kThreads * kPackElements when larger); 0 restores the size that
/// follows each batch (optimizer/AdamChunks.h). For the device tests
/// (TestHooks.h), which check the kernel at sizes the device would not pick.
/// False, and nothing changed, for another value.
bool setAdamChunkOverride(int64_t elements);

/// One SGD update. lr and step are device pointers, as for Adam: every
/// block derives the step's constants (makeSgdConstants), so no value
/// comes back to the host and the call can be captured in a CUDA graph.
struct SgdLaunchArgs {
  int64_t n = 0;
  StateTensorArgs param;
  const float *buf = nullptr; ///< with a momentum buffer only
  float *outBuf = nullptr;
  const void *grad = nullptr;
  int32_t gradType = MSAMP_RT_F32;
  const float *gradScaleInv = nullptr;
  const float *lr = nullptr;
  const int64_t *step = nullptr;
  double momentum = 0.0, weightDecay = 0.0;
  bool hasBuffer = false, nesterov = false;
  OptimizerScratch *scratch = nullptr;
};

cudaError_t launchSgd(const SgdLaunchArgs &args, cudaStream_t stream);

//===--- comm/fp8_reduce.cu -----------------------------------------------===//

/// out[i] = the rank-order FP8 reduction of contrib[r * n + i], r = 0 ..
/// world-1 (Collective.h reduceFP8InRankOrder: sum hops are
/// fp8(half(a) + half(b)), max keeps NaN): the all-gather fallback of the
/// NCCL collective, bit-identical to the CPU's definition.
cudaError_t launchReduceFP8RankOrder(const uint8_t *contrib, int world,
                                     int64_t n, numerics::Format format,
                                     bool isMax, uint8_t *out,
                                     cudaStream_t stream);

/// data[i] = data[i] / divisor (one f32 division each; mean = sum / N).
cudaError_t launchDivide(float *data, int64_t n, float divisor,
                         cudaStream_t stream);

/// *out = *scaleInv / divisor (an FP8 mean's post-division of the inverse
/// scale; divisor 1 copies). `out` may alias `scaleInv`.
cudaError_t launchDivideScalar(const float *scaleInv, float divisor, float *out,
                               cudaStream_t stream);

//===--- gpu/state_scan.cu ------------------------------------------------===//

/// One buffer of a state scan: `count` elements of `width` = 1, 2, 4 or 8
/// bytes, and the bits a match must have set.
struct ScanBuffer {
  const void *data = nullptr;
  int64_t count = 0;
  uint64_t mask = 0;
  int32_t width = 0;
};

/// Device scratch launchFindAllOnes needs for `n` buffers (their table).
size_t findAllOnesScratchBytes(int64_t n);

/// For every buffer k, atomicMin(first[k], i) over its elements whose bits
/// have every bit of its mask set: the session's non-finite check (NaN/Inf:
/// all exponent bits) of a GPU step's state, which the host must not read.
/// One launch for all `n` buffers; their table is copied into `scratch`
/// (findAllOnesScratchBytes(n) bytes) on `stream`. The caller sets every
/// first[k] to ~0 first; empty buffers keep it. A width other than 1, 2, 4
/// or 8 returns cudaErrorInvalidValue, launches nothing and sets *bad = k.
cudaError_t launchFindAllOnes(const ScanBuffer *buffers, int64_t n,
                              void *scratch, unsigned long long *first,
                              cudaStream_t stream, int64_t *bad);

//===--- gpu/index_check.cu -----------------------------------------------===//

/// Enqueues on `stream`: record[0..1] reset to all ones, then record[0] =
/// the lowest linear index of the `numel` signed indices (`width` 4 or 8
/// bytes) at `ids` outside [0, upper) and not `ignoreIndex` (when
/// `hasIgnore`), record[1] = its value. Any other width returns
/// cudaErrorInvalidValue and enqueues nothing. No wait.
cudaError_t launchCheckIndex(const void *ids, int64_t numel, int32_t width,
                             int64_t upper, int64_t ignoreIndex,
                             int32_t hasIgnore, unsigned long long *record,
                             cudaStream_t stream);

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_KERNELS_H
