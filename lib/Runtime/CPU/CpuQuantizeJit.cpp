//===- CpuQuantizeJit.cpp - The fused just-in-time cast on the CPU --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_quantize_jit as the composition of the CPU kernels it fuses: the
// amax (cpu::amax), the scale of a one-entry history (cpu::computeScale,
// most_recent), the scaled cast (cpu::quantize), then 1 / scale with the
// numerics core's division. Each rule therefore has one definition, and the
// results are those of the three separate entry points by construction;
// the CUDA backend is tested bit for bit against this one. The transposed
// layout copies the codes just written (a byte or f16 transpose: the same
// codes, so no second quantization can differ). msamp_rt_quantize_transpose
// is the same without the amax and scale: quantize, then that transpose.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "../DType.h"

#include "MSAMP/Numerics/Scaling.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace msamp::runtime::cpu {
namespace {

/// outT[c][r] = out[r][c] for elements of `bytes` bytes, in tiles so that
/// both sides stay in cache.
void transposeCodes(const void *src, void *dst, int64_t rows, int64_t cols,
                    int bytes) {
  constexpr int64_t kTile = 64;
  const auto *s = static_cast<const uint8_t *>(src);
  auto *d = static_cast<uint8_t *>(dst);
  auto body = [&](int, int64_t begin, int64_t end) {
    for (int64_t r0 = begin; r0 < end; r0 += kTile)
      for (int64_t c0 = 0; c0 < cols; c0 += kTile)
        for (int64_t r = r0; r < std::min(r0 + kTile, end); ++r)
          for (int64_t c = c0; c < std::min(c0 + kTile, cols); ++c)
            std::memcpy(d + (c * rows + r) * bytes, s + (r * cols + c) * bytes,
                        static_cast<size_t>(bytes));
  };
  // Split by rows, as many chunks as the element count pays for.
  const int chunks = static_cast<int>(
      std::min<int64_t>(chunkCount(rows * cols, kGrain), rows));
  parallelChunks(rows, chunks, body);
}

} // namespace

msamp_rt_status quantizeJit(const QuantizeJitParams &p) {
  float amaxValue = 0.0f;
  if (msamp_rt_status s = amax(p.in, &amaxValue))
    return s;
  // The scale msamp.compute_scale most_recent takes from the history
  // [amax]; prevScale is read before outScale (which may alias it) is written.
  ComputeScaleParams cs;
  cs.history = &amaxValue;
  cs.length = 1;
  cs.prevScale = p.prevScale;
  float scale = 0.0f;
  cs.out = &scale;
  cs.kind = p.kind;
  cs.algo = numerics::AmaxAlgo::MostRecent;
  cs.fpMax = p.fpMax;
  cs.margin = p.margin;
  if (msamp_rt_status s = computeScale(cs))
    return s;
  if (msamp_rt_status s = quantize(p.in, &scale, p.out))
    return s;
  if (p.outT && p.rows > 0 && p.cols > 0)
    transposeCodes(p.out.data, p.outT, p.rows, p.cols, dtypeSize(p.out.dtype));
  *p.outScale = scale;
  *p.outScaleInv = numerics::detail::divRn(1.0f, scale);
  return MSAMP_RT_OK;
}

msamp_rt_status quantizeTranspose(const QuantizeTransposeParams &p) {
  if (msamp_rt_status s = quantize(p.in, p.scale, p.out))
    return s;
  if (p.rows > 0 && p.cols > 0)
    transposeCodes(p.out.data, p.outT, p.rows, p.cols, dtypeSize(p.out.dtype));
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime::cpu
