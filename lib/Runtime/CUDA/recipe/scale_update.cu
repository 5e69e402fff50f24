//===- scale_update.cu - One scaled cast's bookkeeping on the device ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_scale_update's device work, with no host round trip. The amax is
// recipe/amax.cu's block-reduced one (one integer atomicMax per block into a
// zeroed accumulator); then one thread runs numerics::scaleUpdate
// (ScaleUpdate.h, the CPU backend's definition): the history roll, the
// just-in-time scale, the warm-up select, 1 / scale and the next scale, all
// of which were separate calls and a single-thread generated kernel. With a
// MAX all-reduce over more than one rank the backend finalizes the amax into
// an f32 and reduces it between the two launches (the collective needs the
// complete amax); at world size 1 the bookkeeping reads the accumulator
// itself: two launches for the whole update.
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"
#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

#include "MSAMP/Numerics/ScaleUpdate.h"

namespace msamp::runtime::cuda {
namespace {

__global__ void scaleUpdateKernel(ScaleUpdateLaunchArgs a) {
  const float amax = a.amax ? *a.amax : amaxFromBits(*a.amaxBits);
  const bool useJit = a.justInTime || (a.useJit && (*a.useJit & 1));
  // prevScale is read (by value) before any output, one of which may be its
  // buffer, is written.
  const numerics::ScaleUpdateResult r = numerics::scaleUpdate(
      amax, a.history, a.outHistory, a.length, *a.prevScale, useJit, a.kind,
      a.algo, a.fpMax, a.margin);
  *a.outScale = r.scale;
  *a.outScaleInv = r.scaleInv;
  *a.outNextScale = r.nextScale;
}

} // namespace

cudaError_t launchScaleUpdate(const ScaleUpdateLaunchArgs &a,
                              cudaStream_t stream) {
  scaleUpdateKernel<<<1, 1, 0, stream>>>(a);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
