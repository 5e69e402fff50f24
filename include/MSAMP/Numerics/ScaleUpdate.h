//===- ScaleUpdate.h - One scaled cast's bookkeeping after its amax -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What msamp-fp8-gemms' delayed scaling does with a cast's amax once it is
// known (docs/Numerics.md 2.1; the ops msamp.update_amax_history, two
// msamp.compute_scale, the warm-up select and 1 / scale), as one function of
// the core's rules, so that msamp_rt_scale_update's CPU backend and its CUDA
// kernel (one thread) compute it the same way, and both the same way as the
// separate entry points:
//
//   history' = roll(history, amax)
//   jit      = computeScale(kind, history'[0], prev)      (most_recent)
//   scale    = useJit ? jit : prev
//   next     = computeScale(kind, reduce(history', algo), scale)
//
// A just-in-time cast (the FP8 weight gradients, whose amax is all-reduced
// first) is the case useJit = true; its history' and next are not read.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_SCALEUPDATE_H
#define MSAMP_NUMERICS_SCALEUPDATE_H

#include "MSAMP/Numerics/Scaling.h"

namespace msamp::numerics {

/// The outputs of scaleUpdate.
struct ScaleUpdateResult {
  float scale, scaleInv, nextScale;
};

/// Rolls `history` (`len` >= 1 entries) into `outHistory` (which may be
/// `history`) and returns the scale to cast with, its inverse and the next
/// step's scale. `prevScale` is a value: an output buffer may alias the
/// buffer it was read from.
MSAMP_HOST_DEVICE inline ScaleUpdateResult
scaleUpdate(float amax, const float *history, float *outHistory, int len,
            float prevScale, bool useJit, ScaleKind kind, AmaxAlgo algo,
            float fpMax, int margin) {
  updateAmaxHistory(history, outHistory, len, amax);
  const float jit = computeScale(
      kind, reduceAmaxHistory(outHistory, len, AmaxAlgo::MostRecent), prevScale,
      fpMax, margin);
  const float scale = useJit ? jit : prevScale;
  const float next = computeScale(
      kind, reduceAmaxHistory(outHistory, len, algo), scale, fpMax, margin);
  return {scale, detail::divRn(1.0f, scale), next};
}

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_SCALEUPDATE_H
