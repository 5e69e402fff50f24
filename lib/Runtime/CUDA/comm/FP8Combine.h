//===- FP8Combine.h - One FP8 reduction hop, host and device ----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Collective.h's combineFP8 with a device-friendly signature: both select
// the numerics core's hops (docs/Numerics.md 4.4: a sum hop is
// fp8(half(a) + half(b)), saturating; max compares decoded values and a NaN
// wins, ties keep `a`), so the NCCL all-gather fallback reduces exactly like
// the CPU's reduceFP8InRankOrder. The host tests compare the two on all
// 65536 code pairs of both formats.
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
  return isMax ? numerics::maxOfCodes(format, a, b)
               : numerics::addViaHalf(format, a, b);
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMM_FP8COMBINE_H
