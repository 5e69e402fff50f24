//===- FP8Combine.h - One FP8 reduction hop, host and device ----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Collective.h's combineFP8 (NUMERICS.md 4.4: a sum hop is
// fp8(half(a) + half(b)), saturating; max compares decoded values and a NaN
// wins, ties keep `a`) as an MSAMP_HOST_DEVICE function: Collective.h's is a
// host-only inline function. The host tests compare the two on all 65536
// code pairs of both formats, so the NCCL all-gather fallback reduces
// exactly like the CPU's reduceFP8InRankOrder.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMM_FP8COMBINE_H
#define MSAMP_LIB_RUNTIME_CUDA_COMM_FP8COMBINE_H

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"

#include <cstdint>

namespace msamp::runtime::cuda {

MSAMP_HOST_DEVICE inline uint8_t
combineFP8Codes(numerics::Format format, bool isMax, uint8_t a, uint8_t b) {
  if (!isMax)
    return numerics::addViaHalf(format, a, b);
  const float x = numerics::decode(format, a);
  const float y = numerics::decode(format, b);
  if (numerics::detail::isNaN(x))
    return a;
  if (numerics::detail::isNaN(y))
    return b;
  return y > x ? b : a;
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMM_FP8COMBINE_H
