//===- adam.cu - Low-bit and f32 Adam/AdamW -------------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_adam_update on the device: MS-AMP's LBAdamW (docs/Numerics.md 5.2)
// with the CPU backend's semantics and update order. Per element the arithmetic
// is adamElement (OptimizerMath.h), shared with the host tests.
//
// With any scaled (f16/FP8) param, m or v the step takes two passes, like
// MS-AMP's adamw_fp8_stage1/stage2 and the CPU backend:
//   pass 1 computes every new value and only reduces the amaxes of the
//          scaled tensors (integer atomics, order-independent);
//   a one-thread kernel turns each amax into the new power-of-two scale;
//   pass 2 recomputes the same values with the same code, bit for bit, and
//          stores them with the new scales.
// The weight update always uses the un-requantized f32 m' and v'. All f32
// tensors (O1, plain Adam) need only pass 2.
//
// Every output may be the same buffer as its input (an in-place state
// update): each thread reads element i of every input before it writes
// element i, and nothing else touches element i. So the pointers are not
// __restrict__.
//
//===----------------------------------------------------------------------===//

#include "OptimizerKernels.cuh"

namespace msamp::runtime::cuda {
namespace {

template <bool Store>
__global__ void __launch_bounds__(kThreads)
    adamPassKernel(AdamLaunchArgs a, OptimizerScratch *s) {
  const float gradScaleInv = s->gradScaleInv;
  const float loadInv[3] = {s->loadScaleInv[0], s->loadScaleInv[1],
                            s->loadScaleInv[2]};
  const float newScale[3] = {s->newScale[0], s->newScale[1], s->newScale[2]};
  unsigned largest[3] = {0u, 0u, 0u};
  for (int64_t i = globalThread(); i < a.n; i += gridStride()) {
    const float g = loadElement(a.grad, a.gradType, i, gradScaleInv);
    float w = loadElement(a.param.in, a.param.dtype, i, loadInv[0]);
    float m = loadElement(a.m.in, a.m.dtype, i, loadInv[1]);
    float v = loadElement(a.v.in, a.v.dtype, i, loadInv[2]);
    adamElement(a.constants, g, w, m, v);
    if constexpr (Store) {
      storeState(a.param.out, a.param.dtype, i, w, newScale[0]);
      storeState(a.m.out, a.m.dtype, i, m, newScale[1]);
      storeState(a.v.out, a.v.dtype, i, v, newScale[2]);
    } else {
      const unsigned mags[3] = {magnitudeBits(w), magnitudeBits(m),
                                magnitudeBits(v)};
#pragma unroll
      for (int t = 0; t < 3; ++t)
        largest[t] = mags[t] > largest[t] ? mags[t] : largest[t];
    }
  }
  if constexpr (!Store) {
    unsigned *const targets[3] = {
        a.param.dtype != MSAMP_RT_F32 ? &s->amaxBits[0] : nullptr,
        a.m.dtype != MSAMP_RT_F32 ? &s->amaxBits[1] : nullptr,
        a.v.dtype != MSAMP_RT_F32 ? &s->amaxBits[2] : nullptr};
    blockMaxAtomic<3>(largest, targets);
  }
}

} // namespace

cudaError_t launchAdam(const AdamLaunchArgs &a, cudaStream_t stream) {
  ScaleSlots slots;
  const StateTensorArgs *tensors[3] = {&a.param, &a.m, &a.v};
  bool anyScaled = false;
  for (int t = 0; t < 3; ++t) {
    if (tensors[t]->dtype == MSAMP_RT_F32)
      continue;
    slots.in[t] = tensors[t]->scale;
    slots.out[t] = tensors[t]->outScale;
    slots.dtype[t] = tensors[t]->dtype;
    anyScaled = true;
  }
  optimizerPrologueKernel<<<1, 1, 0, stream>>>(
      a.scratch, a.gradType == MSAMP_RT_F32 ? nullptr : a.gradScaleInv, slots);
  if (a.n > 0) {
    const unsigned grid = gridFor(a.n);
    if (anyScaled) {
      adamPassKernel<false><<<grid, kThreads, 0, stream>>>(a, a.scratch);
      optimizerChooseScalesKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
    }
    adamPassKernel<true><<<grid, kThreads, 0, stream>>>(a, a.scratch);
  } else if (anyScaled) {
    // No elements: the amax is 0 and every scale is kept (as on the CPU).
    optimizerChooseScalesKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
  }
  if (anyScaled)
    optimizerEpilogueKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
