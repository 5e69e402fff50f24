//===- nvcc-compile-check.cu - FP8 numerics headers in device code --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Compile-only check that FP8.h and Scaling.h stay usable from CUDA device
// code: every MSAMP_HOST_DEVICE entry point is called from a __global__
// kernel, so a host-only construct (std::memcpy on the device path, a missing
// annotation, libm) fails the nvcc build rather than a runtime kernel build.
// The kernel mirrors one delayed-scaling step: amax, history update, scale,
// quantize, dequantize, and one FP8 all-reduce hop. It is never launched.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"

namespace nm = msamp::numerics;

// scales[0] is the scale in use; scales[1] and scales[2] receive the
// Exact and Pow2 variants, so that both are compiled for the device.
__global__ void delayedScalingStep(const float *x, long long n, float *history,
                                   int historyLen, float *scales,
                                   uint16_t *codes, float *roundTrip,
                                   uint8_t *reduced) {
  const long long i =
      blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i == 0) {
    const float current = nm::amax(x, n);
    nm::updateAmaxHistory(history, history, historyLen, current);
    const float reducedAmax =
        nm::reduceAmaxHistory(history, historyLen, nm::AmaxAlgo::Max);
    constexpr float fpMax = nm::maxFinite(nm::Format::E4M3);
    const float prev = scales[0];
    scales[1] = nm::computeScaleExact(reducedAmax, prev, fpMax, /*margin=*/0);
    scales[2] = nm::computeScalePow2(reducedAmax, prev, fpMax, /*margin=*/0);
    scales[0] = nm::computeScale(nm::ScaleKind::Pow2, reducedAmax, prev, fpMax,
                                 /*margin=*/0);
  }
  if (i >= n)
    return;
  // Other threads may read the old or the new scale; this is never run.
  const float s = scales[0];
  const nm::Format formats[] = {nm::Format::E4M3, nm::Format::E5M2,
                                nm::Format::F16};
  for (nm::Format f : formats) {
    codes[i] = nm::quantize(f, x[i], s);
    roundTrip[i] = nm::dequantize(f, codes[i], 1.0f / s);
  }
  const uint8_t a = nm::encodeE4M3(x[i]), b = nm::encodeE5M2(x[i]);
  const float widened =
      nm::decodeE4M3(a) + nm::decodeE5M2(b) +
      nm::decodeF16(nm::encodeF16(x[i])) +
      nm::decode(nm::Format::E4M3, nm::encode(nm::Format::E4M3, 1));
  reduced[i] = nm::addViaHalf(nm::Format::E4M3, a, nm::encodeE4M3(widened));
  if (reduced[i] == nm::kE4M3CanonicalNaN || b == nm::kE5M2CanonicalNaN)
    roundTrip[i] = 0.0f;
}
