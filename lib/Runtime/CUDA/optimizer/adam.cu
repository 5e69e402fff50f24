//===- adam.cu - Low-bit and f32 Adam/AdamW, one or many tensors ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_adam_update and msamp_rt_adam_update_multi on the device:
// MS-AMP's LBAdamW (docs/Numerics.md 5.2) with the CPU backend's semantics
// and update order. Per element the arithmetic is adamElement
// (OptimizerMath.h), shared with the CPU.
//
// Nothing comes back to the host: every block reads lr and step from device
// memory and derives the step's constants with the CPU's own function
// (makeAdamConstants: double, IEEE-rounded operations, powStep), so the
// bias corrections are the CPU's bit for bit.
//
// Many tensors run in one launch: the kernel's parameter is a table of up
// to kAdamBatchTensors tensors and the first block of each; block b finds
// its tensor in the table and updates one chunk of it (kChunk elements).
//
// With any scaled (f16/FP8) param, m or v the update takes two passes, like
// MS-AMP's adamw_fp8_stage1/stage2 and the CPU backend, because the
// just-in-time scale needs the amax of every new value before the first
// store:
//   pass 1 computes every new value and only reduces the amaxes of the
//          scaled tensors (integer atomics, order-independent) into the
//          tensor's zeroed scratch; chunk 0 also snapshots the input scales;
//   pass 2 recomputes the same values with the same code, bit for bit, each
//          block choosing the new scales from the scratch (the same function
//          of the same bits in every block), stores them, and chunk 0 writes
//          the new scales.
// Pass 2 reads only the snapshot, never an input scale, so an output scale
// may be its input's buffer. The weight update always uses the
// un-requantized f32 m' and v'. All-f32 states need only pass 2.
//
// Every output may be the same buffer as its input (an in-place state
// update): each thread reads element i of every input before it writes
// element i, and nothing else touches element i. So the pointers are not
// __restrict__.
//
//===----------------------------------------------------------------------===//

#include "OptimizerKernels.cuh"

#include <algorithm>
#include <cstring>

namespace msamp::runtime::cuda {
namespace {

/// Elements per block: enough that the block's one-thread derivation of the
/// constants hides behind its memory traffic.
constexpr int64_t kChunk = kThreads * 32;

/// One launch's table (passed by value as a __grid_constant__ parameter,
/// read in place, never copied to local memory).
struct AdamBatch {
  AdamGroupArgs group;
  AdamTensorScratch *scratch = nullptr; ///< the batch's first tensor's
  int count = 0;
  /// Tensor k owns blocks [firstBlock[k], firstBlock[k + 1]).
  unsigned firstBlock[kAdamBatchTensors + 1] = {};
  AdamTensorArgs tensors[kAdamBatchTensors];
};
static_assert(sizeof(AdamBatch) <= 4096, "kernel parameters exceed 4 KiB");

/// The step's constants, derived by thread 0 from lr and step in device
/// memory. A step below 1 (the CPU rejects it; the device cannot report it
/// without a host synchronization) makes every new weight NaN.
__device__ void loadConstants(const AdamGroupArgs &g, AdamConstants &out) {
  if (threadIdx.x == 0) {
    const int64_t step = *g.step;
    AdamConstants c =
        makeAdamConstants(*g.lr, step < 1 ? 1 : step, g.beta1, g.beta2, g.eps,
                          g.weightDecay, g.decoupled, g.mode1);
    if (step < 1)
      c.stepSize = nd::bitsToFloat(nd::kF32QuietNaN);
    out = c;
  }
  __syncthreads();
}

/// The tensor of block `block` (tables are short: a linear search).
__device__ int tensorOfBlock(const AdamBatch &b, unsigned block) {
  int k = 0;
  while (k + 1 < b.count && block >= b.firstBlock[k + 1])
    ++k;
  return k;
}

template <bool Store, bool Scaled>
__global__ void __launch_bounds__(kThreads)
    adamKernel(const __grid_constant__ AdamBatch b) {
  __shared__ AdamConstants constants;
  loadConstants(b.group, constants);
  const int k = tensorOfBlock(b, blockIdx.x);
  const AdamTensorArgs &t = b.tensors[k];
  const int64_t chunk = blockIdx.x - b.firstBlock[k];
  const int64_t begin = chunk * kChunk;
  const int64_t end = begin + kChunk < t.n ? begin + kChunk : t.n;
  const StateTensorArgs *states[3] = {&t.param, &t.m, &t.v};

  const float gradScaleInv =
      b.group.gradType == MSAMP_RT_F32 ? 1.0f : *t.gradScaleInv;
  float loadInv[3] = {1.0f, 1.0f, 1.0f};
  float newScale[3] = {1.0f, 1.0f, 1.0f};
  if constexpr (Scaled) {
    AdamTensorScratch &s = b.scratch[k];
    for (int i = 0; i < 3; ++i) {
      if (states[i]->dtype == MSAMP_RT_F32)
        continue;
      // Pass 1 reads the input scale (nothing writes it yet) and chunk 0
      // keeps a copy; pass 2 reads only that copy.
      const float old = Store ? s.oldScale[i] : *states[i]->scale;
      if (!Store && chunk == 0 && threadIdx.x == 0)
        s.oldScale[i] = old;
      // The CPU's decode multiplier for a scaled tensor: 1 / scale, rounded.
      loadInv[i] = nd::divRn(1.0f, old);
      if (Store)
        newScale[i] = chooseScale(s.amaxBits[i], old, states[i]->dtype);
    }
  }

  unsigned largest[3] = {0u, 0u, 0u};
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float g = loadElement(t.grad, b.group.gradType, i, gradScaleInv);
    float w = loadElement(t.param.in, t.param.dtype, i, loadInv[0]);
    float m = loadElement(t.m.in, t.m.dtype, i, loadInv[1]);
    float v = loadElement(t.v.in, t.v.dtype, i, loadInv[2]);
    adamElement(constants, g, w, m, v);
    if constexpr (Store) {
      storeState(t.param.out, t.param.dtype, i, w, newScale[0]);
      storeState(t.m.out, t.m.dtype, i, m, newScale[1]);
      storeState(t.v.out, t.v.dtype, i, v, newScale[2]);
    } else {
      const unsigned mags[3] = {magnitudeBits(w), magnitudeBits(m),
                                magnitudeBits(v)};
#pragma unroll
      for (int s = 0; s < 3; ++s)
        largest[s] = mags[s] > largest[s] ? mags[s] : largest[s];
    }
  }

  if constexpr (Scaled && !Store) {
    unsigned *const targets[3] = {
        t.param.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[0] : nullptr,
        t.m.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[1] : nullptr,
        t.v.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[2] : nullptr};
    blockMaxAtomic<3>(largest, targets);
  }
  if constexpr (Scaled && Store) {
    if (chunk == 0 && threadIdx.x == 0)
      for (int i = 0; i < 3; ++i)
        if (states[i]->dtype != MSAMP_RT_F32)
          *states[i]->outScale = newScale[i];
  }
}

} // namespace

size_t adamScratchBytes(const AdamGroupArgs &group, int64_t count) {
  return group.anyScaled()
             ? static_cast<size_t>(count) * sizeof(AdamTensorScratch)
             : 0;
}

cudaError_t launchAdam(const AdamGroupArgs &group,
                       const AdamTensorArgs *tensors, int64_t count,
                       void *scratch, cudaStream_t stream) {
  const bool scaled = group.anyScaled();
  auto *tensorScratch = static_cast<AdamTensorScratch *>(scratch);
  if (scaled && count > 0) {
    const cudaError_t error =
        cudaMemsetAsync(scratch, 0, adamScratchBytes(group, count), stream);
    if (error != cudaSuccess)
      return error;
  }
  for (int64_t first = 0; first < count; first += kAdamBatchTensors) {
    AdamBatch b;
    b.group = group;
    b.count =
        static_cast<int>(std::min<int64_t>(kAdamBatchTensors, count - first));
    b.scratch = scaled ? tensorScratch + first : nullptr;
    int64_t blocks = 0;
    for (int k = 0; k < b.count; ++k) {
      b.tensors[k] = tensors[first + k];
      b.firstBlock[k] = static_cast<unsigned>(blocks);
      // An empty tensor still gets a block: it writes the kept scales.
      blocks += std::max<int64_t>(1, (b.tensors[k].n + kChunk - 1) / kChunk);
      if (blocks > INT32_MAX)
        return cudaErrorInvalidValue;
    }
    b.firstBlock[b.count] = static_cast<unsigned>(blocks);
    const unsigned grid = static_cast<unsigned>(blocks);
    if (scaled) {
      adamKernel<false, true><<<grid, kThreads, 0, stream>>>(b);
      adamKernel<true, true><<<grid, kThreads, 0, stream>>>(b);
    } else {
      adamKernel<true, false><<<grid, kThreads, 0, stream>>>(b);
    }
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
      return error;
  }
  return cudaSuccess;
}

} // namespace msamp::runtime::cuda
