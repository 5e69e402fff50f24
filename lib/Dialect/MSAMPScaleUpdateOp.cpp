//===- MSAMPScaleUpdateOp.cpp - msamp.scale_update's verifier -------------===//
//
// The fused scaling bookkeeping of one cast (MSAMPOps.td; made by
// msamp-gpu-fuse-scale-updates, lowered to msamp_rt_scale_update).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

LogicalResult ScaleUpdateOp::verify() {
  if (failed(verifyScaleParameters(*this, getFormat(), getMarginAttr(),
                                   getAmaxHistory().getType())))
    return failure();
  if (getUseJit() && getJustInTime())
    return emitOpError("use_jit and just_in_time exclude each other: a "
                       "just-in-time scale has no warm-up select");
  return success();
}
