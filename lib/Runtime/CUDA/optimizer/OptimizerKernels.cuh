//===- OptimizerKernels.cuh - Optimizer scale bookkeeping ------*- CUDA -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The one-thread kernels around the elementwise passes of sgd.cu (adam.cu
// folds the same steps into its passes), and storeState, which both use.
// They keep every scale on the device and make aliasing safe: the
// ABI lets each out_*_scale be the same buffer as its input scale, so the
// prologue snapshots all input scales into OptimizerScratch before any pass
// runs, the passes read only the snapshot, and the epilogue writes the new
// scales last.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERKERNELS_CUH
#define MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERKERNELS_CUH

#include "../Kernels.h"
#include "../common/DeviceUtils.cuh"
#include "OptimizerMath.h"

namespace msamp::runtime::cuda {
namespace {

/// Up to three scaled state tensors (Adam: param, m, v; SGD: param).
struct ScaleSlots {
  const float *in[3] = {nullptr, nullptr, nullptr};
  float *out[3] = {nullptr, nullptr, nullptr};
  int32_t dtype[3] = {MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32};
};

/// Snapshots the scales (null: an f32 tensor or grad, whose scale is a
/// dummy that must not be read) and resets the amax accumulators.
__global__ void optimizerPrologueKernel(OptimizerScratch *s,
                                        const float *gradScaleInv,
                                        ScaleSlots slots) {
  s->gradScaleInv = gradScaleInv ? *gradScaleInv : 1.0f;
  for (int t = 0; t < 3; ++t) {
    const float old = slots.in[t] ? *slots.in[t] : 1.0f;
    s->oldScale[t] = old;
    // The CPU's decode multiplier for a scaled tensor: 1 / scale, rounded.
    s->loadScaleInv[t] = slots.in[t] ? nd::divRn(1.0f, old) : 1.0f;
    s->newScale[t] = old;
    s->amaxBits[t] = 0u;
  }
}

/// Between the passes: the just-in-time scale of every scaled tensor from
/// the amax of its new values (docs/Numerics.md 5.2).
__global__ void optimizerChooseScalesKernel(OptimizerScratch *s,
                                            ScaleSlots slots) {
  for (int t = 0; t < 3; ++t)
    if (slots.in[t])
      s->newScale[t] =
          chooseScale(s->amaxBits[t], s->oldScale[t], slots.dtype[t]);
}

__global__ void optimizerEpilogueKernel(const OptimizerScratch *s,
                                        ScaleSlots slots) {
  for (int t = 0; t < 3; ++t)
    if (slots.out[t])
      *slots.out[t] = s->newScale[t];
}

/// Stores the new value of a state tensor: re-quantized with its new scale,
/// or the f32 value.
__device__ inline void storeState(void *out, int32_t dtype, int64_t i, float x,
                                  float newScale) {
  if (dtype == MSAMP_RT_F32)
    static_cast<float *>(out)[i] = x;
  else
    storeScaledElement(out, dtype, i, x, newScale);
}

} // namespace
} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_OPTIMIZER_OPTIMIZERKERNELS_CUH
