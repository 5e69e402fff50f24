//===- sgd.cu - SGD with momentum on f32 or scaled params -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_sgd_update on the device: PyTorch SGD (dampening 0, optional
// momentum buffer and Nesterov), per element sgdElement (OptimizerMath.h).
// A scaled (f16/FP8) param is re-scaled just in time with the same two
// passes as Adam (adam.cu); the momentum buffer is always f32. Outputs may
// alias inputs (see adam.cu). As in adam.cu, thread 0 of every block
// derives the step's constants from lr and step in device memory, so
// nothing is read back to the host.
//
//===----------------------------------------------------------------------===//

#include "OptimizerKernels.cuh"

namespace msamp::runtime::cuda {
namespace {

/// The step's constants, derived by thread 0 from lr and step in device
/// memory. A step below 1 (the CPU rejects it; the device cannot report it
/// without a host synchronization) makes every new weight NaN, as Adam's.
__device__ void loadConstants(const SgdLaunchArgs &a, SgdConstants &out) {
  if (threadIdx.x == 0) {
    const int64_t step = *a.step;
    SgdConstants c = makeSgdConstants(*a.lr, step, a.momentum, a.weightDecay,
                                      a.hasBuffer, a.nesterov);
    if (step < 1)
      c.lr = nd::bitsToFloat(nd::kF32QuietNaN);
    out = c;
  }
  __syncthreads();
}

template <bool Store>
__global__ void __launch_bounds__(kThreads)
    sgdPassKernel(SgdLaunchArgs a, OptimizerScratch *s) {
  __shared__ SgdConstants constants;
  loadConstants(a, constants);
  const float gradScaleInv = s->gradScaleInv;
  const float loadInv = s->loadScaleInv[0];
  const float newScale = s->newScale[0];
  const bool readBuffer = constants.hasBuffer && !constants.firstStep;
  unsigned largest = 0u;
  for (int64_t i = globalThread(); i < a.n; i += gridStride()) {
    const float g = loadElement(a.grad, a.gradType, i, gradScaleInv);
    float w = loadElement(a.param.in, a.param.dtype, i, loadInv);
    // At step 1 the old buffer is not read: it may hold garbage.
    float b = readBuffer ? a.buf[i] : 0.0f;
    sgdElement(constants, g, w, b);
    if constexpr (Store) {
      storeState(a.param.out, a.param.dtype, i, w, newScale);
      if (constants.hasBuffer)
        a.outBuf[i] = b;
    } else {
      const unsigned mag = magnitudeBits(w);
      largest = mag > largest ? mag : largest;
    }
  }
  if constexpr (!Store)
    blockMaxAtomic(largest, &s->amaxBits[0]);
}

} // namespace

cudaError_t launchSgd(const SgdLaunchArgs &a, cudaStream_t stream) {
  ScaleSlots slots;
  const bool scaled = a.param.dtype != MSAMP_RT_F32;
  if (scaled) {
    slots.in[0] = a.param.scale;
    slots.out[0] = a.param.outScale;
    slots.dtype[0] = a.param.dtype;
  }
  optimizerPrologueKernel<<<1, 1, 0, stream>>>(
      a.scratch, a.gradType == MSAMP_RT_F32 ? nullptr : a.gradScaleInv, slots);
  if (a.n > 0) {
    const unsigned grid = gridFor(a.n);
    if (scaled) {
      sgdPassKernel<false><<<grid, kThreads, 0, stream>>>(a, a.scratch);
      optimizerChooseScalesKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
    }
    sgdPassKernel<true><<<grid, kThreads, 0, stream>>>(a, a.scratch);
  } else if (scaled) {
    optimizerChooseScalesKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
  }
  if (scaled)
    optimizerEpilogueKernel<<<1, 1, 0, stream>>>(a.scratch, slots);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
