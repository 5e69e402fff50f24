//===- CpuKernels.cpp - Casts, amax, scaling and optimizers on the CPU ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The reference implementations of every elementwise kernel of the runtime.
// Each one is a blocked loop (CpuConvert.h) split over threads for large
// tensors. Results never depend on the thread count: kernels are elementwise
// or amax reductions, and amax is order-independent (numerics::amax compares
// magnitudes as integers).
//
// All FP8/f16 rounding, scale selection and amax come from the numerics core
// (MSAMP/Numerics), and so does the optimizers' per-element arithmetic
// (Numerics/Optimizer.h, which the CUDA kernels call too). Both passes of
// the two-pass update run the same blocks (adamBlock, sgdBlock), which is what
// makes the recompute of pass 2 bit-identical to the values pass 1 took the
// amax of. The library is compiled with -ffp-contract=off so that no product is
// fused into an add behind our back, which would change results between
// machines with and without FMA.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "../Status.h"
#include "CpuConvert.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Optimizer.h"
#include "MSAMP/Numerics/Scaling.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace msamp::runtime::cpu {

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

namespace {

std::atomic<int> configuredThreads{0};

int defaultThreads() {
  static const int threads = [] {
    if (const char *env = std::getenv("MSAMP_RT_NUM_THREADS")) {
      char *end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && n > 0)
        return static_cast<int>(std::min<long>(n, kMaxChunks));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
  }();
  return threads;
}

struct ChunkJob {
  void (*fn)(void *, int, int64_t, int64_t);
  void *ctx;
  int chunk;
  int64_t begin, end;
};

void *chunkThreadMain(void *arg) {
  const ChunkJob *job = static_cast<const ChunkJob *>(arg);
  job->fn(job->ctx, job->chunk, job->begin, job->end);
  return nullptr;
}

} // namespace

int maxThreads() {
  const int n = configuredThreads.load(std::memory_order_relaxed);
  return std::min(n > 0 ? n : defaultThreads(), kMaxChunks);
}

void setMaxThreads(int n) {
  configuredThreads.store(n > 0 ? n : 0, std::memory_order_relaxed);
}

int chunkCount(int64_t n, int64_t grain) {
  const int64_t chunks =
      std::min<int64_t>(n / std::max<int64_t>(grain, 1), maxThreads());
  return chunks < 1 ? 1 : static_cast<int>(chunks);
}

void runChunks(int64_t n, int chunks,
               void (*fn)(void *ctx, int chunk, int64_t begin, int64_t end),
               void *ctx) {
  chunks = std::clamp(chunks, 1, kMaxChunks);
  if (chunks == 1) {
    fn(ctx, 0, 0, n);
    return;
  }
  // pthreads rather than std::thread: without exceptions a failed
  // std::thread start terminates the process, while pthread_create reports
  // the failure and the chunk can run here instead.
  ChunkJob jobs[kMaxChunks];
  pthread_t threads[kMaxChunks];
  bool started[kMaxChunks] = {};
  const int64_t base = n / chunks, extra = n % chunks;
  int64_t begin = 0;
  for (int c = 0; c < chunks; ++c) {
    const int64_t end = begin + base + (c < extra ? 1 : 0);
    jobs[c] = ChunkJob{fn, ctx, c, begin, end};
    begin = end;
  }
  for (int c = 1; c < chunks; ++c)
    started[c] =
        pthread_create(&threads[c], nullptr, chunkThreadMain, &jobs[c]) == 0;
  for (int c = 0; c < chunks; ++c)
    if (!started[c])
      chunkThreadMain(&jobs[c]);
  for (int c = 1; c < chunks; ++c)
    if (started[c])
      pthread_join(threads[c], nullptr);
}

//===----------------------------------------------------------------------===//
// Casts and amax
//===----------------------------------------------------------------------===//

namespace {

/// max(|a|, |b|) with the core's NaN rule, for merging block amaxes.
float mergeAmax(float a, float b) {
  const float pair[2] = {a, b};
  return numerics::amax(pair, 2);
}

float inverse(float scale) { return numerics::detail::divRn(1.0f, scale); }

} // namespace

msamp_rt_status quantize(const TensorRef &in, const float *scale,
                         const TensorRef &out) {
  const float s = *scale;
  auto body = [&](int, int64_t begin, int64_t end) {
    float buf[kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t count = std::min(kBlock, end - b);
      loadF32(in.data, in.dtype, b, count, 1.0f, buf);
      storeScaled(buf, count, s, out.dtype, out.data, b);
    }
  };
  parallelChunks(in.numel, chunkCount(in.numel, kGrain), body);
  return MSAMP_RT_OK;
}

msamp_rt_status dequantize(const TensorRef &in, const float *scaleInv,
                           const TensorRef &out) {
  const float s = *scaleInv;
  auto body = [&](int, int64_t begin, int64_t end) {
    float buf[kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t count = std::min(kBlock, end - b);
      loadF32(in.data, in.dtype, b, count, s, buf);
      storeHigh(buf, count, out.dtype, out.data, b);
    }
  };
  parallelChunks(in.numel, chunkCount(in.numel, kGrain), body);
  return MSAMP_RT_OK;
}

msamp_rt_status amax(const TensorRef &in, float *out) {
  float partial[kMaxChunks];
  const int chunks = chunkCount(in.numel, kGrain);
  auto body = [&](int chunk, int64_t begin, int64_t end) {
    if (in.dtype == MSAMP_RT_F32) {
      partial[chunk] = numerics::amax(
          static_cast<const float *>(in.data) + begin, end - begin);
      return;
    }
    float running = 0.0f;
    float buf[kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t count = std::min(kBlock, end - b);
      loadF32(in.data, in.dtype, b, count, 1.0f, buf);
      running = mergeAmax(running, numerics::amax(buf, count));
    }
    partial[chunk] = running;
  };
  parallelChunks(in.numel, chunks, body);
  *out = numerics::amax(partial, chunks);
  return MSAMP_RT_OK;
}

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

msamp_rt_status computeScale(const ComputeScaleParams &p) {
  if (p.length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_compute_scale: history length %lld is too "
                       "long",
                       static_cast<long long>(p.length));
  const float reduced = numerics::reduceAmaxHistory(
      p.history, static_cast<int>(p.length), p.algo);
  *p.out =
      numerics::computeScale(p.kind, reduced, *p.prevScale, p.fpMax, p.margin);
  return MSAMP_RT_OK;
}

msamp_rt_status updateAmaxHistory(const float *history, int64_t length,
                                  const float *amax, float *out) {
  if (length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_update_amax_history: history length %lld is "
                       "too long",
                       static_cast<long long>(length));
  const float newest = *amax;
  numerics::updateAmaxHistory(history, out, static_cast<int>(length), newest);
  return MSAMP_RT_OK;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

namespace {

/// A tensor the optimizer reads and writes: f32, or a scaled format whose
/// old scale was read before anything was written (out scales may alias).
struct StateTensor {
  const void *in = nullptr;
  void *out = nullptr;
  int32_t dtype = MSAMP_RT_F32;
  bool scaled = false;
  float oldScale = 1.0f;
  float loadScaleInv = 1.0f; ///< decode multiplier: 1 / oldScale
  float newScale = 1.0f;     ///< set between the passes

  StateTensor() = default;
  StateTensor(const TensorRef &input, const TensorRef &output,
              const float *scale)
      : in(input.data), out(output.data), dtype(input.dtype),
        scaled(input.dtype != MSAMP_RT_F32) {
    if (scaled) {
      oldScale = *scale;
      loadScaleInv = inverse(oldScale);
    }
  }

  void load(int64_t begin, int64_t count, float *dst) const {
    loadF32(in, dtype, begin, count, loadScaleInv, dst);
  }

  void store(const float *src, int64_t begin, int64_t count) const {
    if (scaled)
      storeScaled(src, count, newScale, dtype, out, begin);
    else
      storeHigh(src, count, MSAMP_RT_F32, out, begin);
  }

  /// The just-in-time power-of-two scale of docs/Numerics.md 5.2 for new values
  /// with this amax; the old scale survives an amax of 0 or a non-finite one.
  void chooseScale(float amax) {
    newScale = numerics::computeScalePow2(
        amax, oldScale, numerics::maxFinite(toFormat(dtype)), /*margin=*/0);
  }
};

/// Runs `compute(begin, count, bufs...)` over all elements twice when some
/// output is scaled (pass 1: amaxes of the new values of the scaled tensors,
/// nothing written; pass 2: recompute and store with the new scales), once
/// otherwise. Inputs are read a whole block before the block is written, so
/// every output may alias its input.
///
/// `compute(begin, count, bufs)` loads block [begin, begin + count) of every
/// input (read-only ones such as the gradient included) and leaves the new
/// values of tensors[t] in bufs[t]; a null tensors[t] is neither reduced nor
/// stored.
template <int N, typename Compute>
void twoPassUpdate(int64_t numel, StateTensor *(&tensors)[N],
                   Compute &&compute) {
  bool anyScaled = false;
  for (StateTensor *t : tensors)
    anyScaled |= t && t->scaled;
  const int chunks = chunkCount(numel, kGrain);

  if (anyScaled) {
    float partial[N][kMaxChunks];
    auto pass1 = [&](int chunk, int64_t begin, int64_t end) {
      float bufs[N][kBlock];
      float running[N] = {};
      for (int64_t b = begin; b < end; b += kBlock) {
        const int64_t count = std::min(kBlock, end - b);
        compute(b, count, bufs);
        for (int t = 0; t < N; ++t)
          if (tensors[t] && tensors[t]->scaled)
            running[t] = mergeAmax(running[t], numerics::amax(bufs[t], count));
      }
      for (int t = 0; t < N; ++t)
        partial[t][chunk] = running[t];
    };
    parallelChunks(numel, chunks, pass1);
    for (int t = 0; t < N; ++t)
      if (tensors[t] && tensors[t]->scaled)
        tensors[t]->chooseScale(numerics::amax(partial[t], chunks));
  }

  auto pass2 = [&](int, int64_t begin, int64_t end) {
    float bufs[N][kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t count = std::min(kBlock, end - b);
      compute(b, count, bufs);
      for (int t = 0; t < N; ++t)
        if (tensors[t])
          tensors[t]->store(bufs[t], b, count);
    }
  };
  parallelChunks(numel, chunks, pass2);
}

/// The optimizers' per-element arithmetic is the numerics core's
/// (MSAMP/Numerics/Optimizer.h), shared with the CUDA kernels; here it runs
/// over a block of decoded f32 values, w/m/v or w/b in place, g read.
inline void adamBlock(const numerics::AdamConstants &c, int64_t count, float *w,
                      const float *g, float *m, float *v) {
  for (int64_t j = 0; j < count; ++j)
    numerics::adamElement(c, g[j], w[j], m[j], v[j]);
}

inline void sgdBlock(const numerics::SgdConstants &c, int64_t count, float *w,
                     const float *g, float *b) {
  // Without a momentum buffer `b` is scratch that sgdElement never reads.
  for (int64_t j = 0; j < count; ++j)
    numerics::sgdElement(c, g[j], w[j], b[j]);
}

/// Loads a gradient block: decode * scale_inv, or the f32 values.
struct GradInput {
  const void *data;
  int32_t dtype;
  float scaleInv;
  void load(int64_t begin, int64_t count, float *dst) const {
    loadF32(data, dtype, begin, count, scaleInv, dst);
  }
};

GradInput gradInput(const TensorRef &grad, const float *scaleInv) {
  return GradInput{grad.data, grad.dtype,
                   grad.dtype == MSAMP_RT_F32 ? 1.0f : *scaleInv};
}

} // namespace

msamp_rt_status adamUpdate(const AdamParams &p) {
  const int64_t step = *p.step;
  if (step < 1)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_adam_update: step is %lld; the first update "
                       "is step 1",
                       static_cast<long long>(step));
  const numerics::AdamConstants c =
      numerics::makeAdamConstants(*p.lr, step, p.beta1, p.beta2, p.eps,
                                  p.weightDecay, p.decoupled, p.mode1);

  // Every scale is read here, before any output (which may alias it) is
  // written.
  const GradInput grad = gradInput(p.grad, p.gradScaleInv);
  StateTensor param(p.param, p.outParam, p.paramScale);
  StateTensor m(p.m, p.outM, p.mScale);
  StateTensor v(p.v, p.outV, p.vScale);
  StateTensor *tensors[3] = {&param, &m, &v};

  twoPassUpdate(p.numel, tensors,
                [&](int64_t begin, int64_t count, float(&bufs)[3][kBlock]) {
                  float g[kBlock];
                  grad.load(begin, count, g);
                  param.load(begin, count, bufs[0]);
                  m.load(begin, count, bufs[1]);
                  v.load(begin, count, bufs[2]);
                  adamBlock(c, count, bufs[0], g, bufs[1], bufs[2]);
                });

  if (param.scaled)
    *p.outParamScale = param.newScale;
  if (m.scaled)
    *p.outMScale = m.newScale;
  if (v.scaled)
    *p.outVScale = v.newScale;
  return MSAMP_RT_OK;
}

msamp_rt_status sgdUpdate(const SgdParams &p) {
  const int64_t step = *p.step;
  if (step < 1)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_sgd_update: step is %lld; the first update "
                       "is step 1",
                       static_cast<long long>(step));
  const numerics::SgdConstants c = numerics::makeSgdConstants(
      *p.lr, step, p.momentum, p.weightDecay, p.hasMomentumBuffer, p.nesterov);

  const GradInput grad = gradInput(p.grad, p.gradScaleInv);
  StateTensor param(p.param, p.outParam, p.paramScale);
  StateTensor buf;
  if (c.hasBuffer)
    buf = StateTensor(p.buf, p.outBuf, nullptr);
  StateTensor *tensors[2] = {&param, c.hasBuffer ? &buf : nullptr};

  twoPassUpdate(p.numel, tensors,
                [&](int64_t begin, int64_t count, float(&bufs)[2][kBlock]) {
                  float g[kBlock];
                  grad.load(begin, count, g);
                  param.load(begin, count, bufs[0]);
                  if (c.hasBuffer)
                    buf.load(begin, count, bufs[1]);
                  sgdBlock(c, count, bufs[0], g, bufs[1]);
                });

  if (param.scaled)
    *p.outParamScale = param.newScale;
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime::cpu
