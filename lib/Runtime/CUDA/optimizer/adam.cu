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
// to kAdamBatchTensors tensors and the first chunk of each; the chunk size
// follows the batch (AdamChunks.h: one element per thread for a small
// batch, up to 4 tiles for a large one). The grid is what the chip
// holds at once; each block derives the step's constants once and takes
// chunks blockIdx.x, + gridDim.x, ... .
// Within a chunk a thread updates kPackElements independent elements per
// step, all their loads issued first: for a tensor whose buffers are all
// aligned (common/Packs.cuh) one 8- or 16-byte access per buffer
// (consecutive elements), otherwise, and in the tensor's last partial
// tile, scalar accesses strided by the block (coalesced). Either way each
// element goes through loadElement, adamElement and storeState unchanged,
// so the values are the CPU's bit for bit (docs/GPU.md, "Runtime kernels
// at bandwidth").
//
// With any scaled (f16/FP8) param, m or v the update takes two passes, like
// MS-AMP's adamw_fp8_stage1/stage2 and the CPU backend, because the
// just-in-time scale needs the amax of every new value before the first
// store:
//   pass 1 computes every new value and only reduces the amaxes of the
//          scaled tensors (integer atomics, order-independent) into the
//          tensor's zeroed scratch; chunk 0 also snapshots the input scales;
//   pass 2 recomputes the same values with the same code, bit for bit, each
//          chunk choosing the new scales from the scratch (the same function
//          of the same bits in every chunk), stores them, and chunk 0 writes
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

#include "AdamChunks.h"
#include "OptimizerKernels.cuh"

#include "../common/Packs.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

namespace msamp::runtime::cuda {
namespace {

/// Elements per block-wide step: one pack per thread.
constexpr int64_t kTile = kThreads * kPackElements;

/// A chunk size the tests force (setAdamChunkOverride); 0: AdamChunks.h.
std::atomic<int64_t> chunkOverride{0};

/// One launch's table (passed by value as a __grid_constant__ parameter,
/// read in place, never copied to local memory).
struct AdamBatch {
  AdamGroupArgs group;
  AdamTensorScratch *scratch = nullptr; ///< the batch's first tensor's
  int count = 0;
  /// Bit k: every buffer of tensor k is packAligned, so its full tiles
  /// take the vector path.
  unsigned packed = 0;
  /// Elements per chunk (adamChunkElements): a multiple of kThreads, and
  /// of kTile when larger than one.
  unsigned chunkElements = 0;
  /// Tensor k owns chunks [firstChunk[k], firstChunk[k + 1]).
  unsigned firstChunk[kAdamBatchTensors + 1] = {};
  AdamTensorArgs tensors[kAdamBatchTensors];
};
static_assert(sizeof(AdamBatch) <= 4096, "kernel parameters exceed 4 KiB");
static_assert(kAdamBatchTensors <= 32, "AdamBatch::packed has 32 bits");

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

/// The tensor of chunk `chunk` (tables are short: a linear search).
__device__ int tensorOfChunk(const AdamBatch &b, unsigned chunk) {
  int k = 0;
  while (k + 1 < b.count && chunk >= b.firstChunk[k + 1])
    ++k;
  return k;
}

/// What the elements of one tensor need besides its buffers.
struct TensorScales {
  float gradInv = 1.0f;
  float loadInv[3] = {1.0f, 1.0f, 1.0f};
  float newScale[3] = {1.0f, 1.0f, 1.0f};
};

/// The new values of one element from its decoded old ones: stored at
/// place i of outW/outM/outV (the tensors, or packs), or (amax pass) their
/// magnitudes folded into `largest`.
template <bool Store>
__device__ inline void
finishElement(const AdamConstants &c, const AdamTensorArgs &t,
              const TensorScales &s, float g, float w, float m, float v,
              void *outW, void *outM, void *outV, int64_t i,
              unsigned (&largest)[3]) {
  adamElement(c, g, w, m, v);
  if constexpr (Store) {
    storeState(outW, t.param.dtype, i, w, s.newScale[0]);
    storeState(outM, t.m.dtype, i, m, s.newScale[1]);
    storeState(outV, t.v.dtype, i, v, s.newScale[2]);
  } else {
    const unsigned mags[3] = {magnitudeBits(w), magnitudeBits(m),
                              magnitudeBits(v)};
#pragma unroll
    for (int k = 0; k < 3; ++k)
      largest[k] = mags[k] > largest[k] ? mags[k] : largest[k];
  }
}

/// Elements tile + j * kThreads + threadIdx.x (j < kPackElements) below
/// `end`: scalar accesses, coalesced across the warp, every load of the
/// thread issued before the first element's arithmetic. For tensors whose
/// buffers do not allow packs, and for the last, partial tile.
template <bool Store>
__device__ inline void scalarTile(const AdamConstants &c, int32_t gradType,
                                  const AdamTensorArgs &t,
                                  const TensorScales &s, int64_t tile,
                                  int64_t end, unsigned (&largest)[3]) {
  float g[kPackElements], w[kPackElements], m[kPackElements], v[kPackElements];
#pragma unroll
  for (int j = 0; j < kPackElements; ++j) {
    const int64_t i = tile + j * kThreads + threadIdx.x;
    g[j] = w[j] = m[j] = v[j] = 0.0f;
    if (i < end) {
      g[j] = loadElement(t.grad, gradType, i, s.gradInv);
      w[j] = loadElement(t.param.in, t.param.dtype, i, s.loadInv[0]);
      m[j] = loadElement(t.m.in, t.m.dtype, i, s.loadInv[1]);
      v[j] = loadElement(t.v.in, t.v.dtype, i, s.loadInv[2]);
    }
  }
#pragma unroll
  for (int j = 0; j < kPackElements; ++j) {
    const int64_t i = tile + j * kThreads + threadIdx.x;
    if (i < end)
      finishElement<Store>(c, t, s, g[j], w[j], m[j], v[j], t.param.out,
                           t.m.out, t.v.out, i, largest);
  }
}

/// The full tile at `tile` of a packed tensor: thread x owns elements
/// tile + x * kPackElements + [0, kPackElements), read and written as one
/// pack per buffer. loadElement and storeState work on the packs in
/// registers exactly as on the tensors.
template <bool Store>
__device__ inline void packTile(const AdamConstants &c, int32_t gradType,
                                const AdamTensorArgs &t, const TensorScales &s,
                                int64_t tile, unsigned (&largest)[3]) {
  const int64_t first =
      tile + static_cast<int64_t>(threadIdx.x) * kPackElements;
  const Pack gp = loadPack(t.grad, elementBytes(gradType), first);
  const Pack wp = loadPack(t.param.in, elementBytes(t.param.dtype), first);
  const Pack mp = loadPack(t.m.in, elementBytes(t.m.dtype), first);
  const Pack vp = loadPack(t.v.in, elementBytes(t.v.dtype), first);
  Pack wo, mo, vo;
#pragma unroll
  for (int j = 0; j < kPackElements; ++j)
    finishElement<Store>(c, t, s, loadElement(&gp, gradType, j, s.gradInv),
                         loadElement(&wp, t.param.dtype, j, s.loadInv[0]),
                         loadElement(&mp, t.m.dtype, j, s.loadInv[1]),
                         loadElement(&vp, t.v.dtype, j, s.loadInv[2]), &wo, &mo,
                         &vo, j, largest);
  if constexpr (Store) {
    storePack(t.param.out, elementBytes(t.param.dtype), first, wo);
    storePack(t.m.out, elementBytes(t.m.dtype), first, mo);
    storePack(t.v.out, elementBytes(t.v.dtype), first, vo);
  }
}

/// The amax pass's block-wide max of `largest` into tensor k's scratch;
/// resets `largest`. Block-uniform (it synchronizes); the leading barrier
/// lets blockMaxAtomic's shared memory be reused.
__device__ inline void flushAmax(const AdamBatch &b, int k,
                                 unsigned (&largest)[3]) {
  __syncthreads();
  const AdamTensorArgs &t = b.tensors[k];
  unsigned *const targets[3] = {
      t.param.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[0] : nullptr,
      t.m.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[1] : nullptr,
      t.v.dtype != MSAMP_RT_F32 ? &b.scratch[k].amaxBits[2] : nullptr};
  blockMaxAtomic<3>(largest, targets);
  largest[0] = largest[1] = largest[2] = 0u;
}

/// A grid that the chip holds at once (launchPass): each block derives the
/// step's constants once and then takes chunks blockIdx.x, + gridDim.x, ...
/// of the table. The amax pass keeps its running maxima while consecutive
/// chunks belong to one tensor and flushes them when the tensor changes.
template <bool Store, bool Scaled>
__global__ void __launch_bounds__(kThreads)
    adamKernel(const __grid_constant__ AdamBatch b) {
  __shared__ AdamConstants constants;
  loadConstants(b.group, constants);
  const unsigned chunks = b.firstChunk[b.count];
  int current = -1;
  unsigned largest[3] = {0u, 0u, 0u};
  for (unsigned c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int k = tensorOfChunk(b, c);
    if constexpr (Scaled && !Store) {
      if (k != current && current >= 0)
        flushAmax(b, current, largest);
    }
    current = k;
    const AdamTensorArgs &t = b.tensors[k];
    const int64_t chunk = c - b.firstChunk[k];
    const int64_t begin = chunk * b.chunkElements;
    const int64_t end =
        begin + b.chunkElements < t.n ? begin + b.chunkElements : t.n;
    const StateTensorArgs *states[3] = {&t.param, &t.m, &t.v};

    TensorScales s;
    if (b.group.gradType != MSAMP_RT_F32)
      s.gradInv = *t.gradScaleInv;
    if constexpr (Scaled) {
      AdamTensorScratch &scratch = b.scratch[k];
      for (int i = 0; i < 3; ++i) {
        if (states[i]->dtype == MSAMP_RT_F32)
          continue;
        // Pass 1 reads the input scale (nothing writes it yet) and chunk 0
        // keeps a copy; pass 2 reads only that copy.
        const float old = Store ? scratch.oldScale[i] : *states[i]->scale;
        if (!Store && chunk == 0 && threadIdx.x == 0)
          scratch.oldScale[i] = old;
        // The CPU's decode multiplier for a scaled tensor: 1 / scale,
        // rounded.
        s.loadInv[i] = nd::divRn(1.0f, old);
        if (Store)
          s.newScale[i] =
              chooseScale(scratch.amaxBits[i], old, states[i]->dtype);
      }
    }

    const bool packed = (b.packed >> k) & 1u;
    for (int64_t tile = begin; tile < end; tile += kTile) {
      if (packed && tile + kTile <= end)
        packTile<Store>(constants, b.group.gradType, t, s, tile, largest);
      else
        scalarTile<Store>(constants, b.group.gradType, t, s, tile, end,
                          largest);
    }

    if constexpr (Scaled && Store) {
      if (chunk == 0 && threadIdx.x == 0)
        for (int i = 0; i < 3; ++i)
          if (states[i]->dtype != MSAMP_RT_F32)
            *states[i]->outScale = s.newScale[i];
    }
  }
  if constexpr (Scaled && !Store) {
    if (current >= 0)
      flushAmax(b, current, largest);
  }
}

/// Whether every buffer of `t` allows packs.
bool packable(const AdamTensorArgs &t, int32_t gradType) {
  const StateTensorArgs *states[3] = {&t.param, &t.m, &t.v};
  bool ok = packAligned(t.grad, elementBytes(gradType));
  for (const StateTensorArgs *state : states)
    ok = ok && packAligned(state->in, elementBytes(state->dtype)) &&
         packAligned(state->out, elementBytes(state->dtype));
  return ok;
}

/// Elements per chunk of a batch: the tests' override, or the size with the
/// least predicted time on this device (AdamChunks.h). Both passes share
/// the batch, so the store pass's occupancy sizes it.
template <bool Scaled>
int64_t chunkElementsFor(const AdamTensorArgs *tensors, int count) {
  if (const int64_t forced = chunkOverride.load(std::memory_order_relaxed))
    return forced;
  int64_t sizes[kAdamBatchTensors];
  for (int k = 0; k < count; ++k)
    sizes[k] = tensors[k].n;
  const int64_t resident =
      residentGrid<adamKernel<true, Scaled>>(std::numeric_limits<int>::max());
  return adamChunkElements(sizes, count, resident, kThreads, kTile);
}

template <bool Store, bool Scaled>
cudaError_t launchPass(const AdamBatch &b, cudaStream_t stream) {
  const unsigned grid =
      residentGrid<adamKernel<Store, Scaled>>(b.firstChunk[b.count]);
  adamKernel<Store, Scaled><<<grid, kThreads, 0, stream>>>(b);
  return cudaGetLastError();
}

} // namespace

bool setAdamChunkOverride(int64_t elements) {
  const bool valid =
      elements == 0 ||
      (elements > 0 && elements % kThreads == 0 &&
       (elements <= kTile || elements % kTile == 0) && elements <= INT32_MAX);
  if (valid)
    chunkOverride.store(elements, std::memory_order_relaxed);
  return valid;
}

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
    const int64_t chunk =
        scaled ? chunkElementsFor<true>(tensors + first, b.count)
               : chunkElementsFor<false>(tensors + first, b.count);
    b.chunkElements = static_cast<unsigned>(chunk);
    int64_t chunks = 0;
    for (int k = 0; k < b.count; ++k) {
      b.tensors[k] = tensors[first + k];
      if (packable(b.tensors[k], group.gradType))
        b.packed |= 1u << k;
      b.firstChunk[k] = static_cast<unsigned>(chunks);
      chunks += adamChunksOf(b.tensors[k].n, chunk);
      if (chunks > INT32_MAX)
        return cudaErrorInvalidValue;
    }
    b.firstChunk[b.count] = static_cast<unsigned>(chunks);
    const cudaError_t error =
        scaled ? launchPass<false, true>(b, stream) : cudaSuccess;
    const cudaError_t storeError = error != cudaSuccess ? error
                                   : scaled
                                       ? launchPass<true, true>(b, stream)
                                       : launchPass<true, false>(b, stream);
    if (storeError != cudaSuccess)
      return storeError;
  }
  return cudaSuccess;
}

} // namespace msamp::runtime::cuda
