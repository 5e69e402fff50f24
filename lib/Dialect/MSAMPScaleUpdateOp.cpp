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
  if (failed(getMaxFinite(getFormat())))
    return emitOpError("format must be f8E4M3FN, f8E5M2 or f16, got ")
           << getFormat();
  // The I64Attr getter is unsigned: read the signed value.
  int64_t margin = getMarginAttr().getValue().getSExtValue();
  if (margin < 0)
    return emitOpError("margin must be non-negative, got ") << margin;
  if (getAmaxHistory().getType().getDimSize(0) == 0)
    return emitOpError("amax history must have at least one entry");
  if (getUseJit() && getJustInTime())
    return emitOpError("use_jit and just_in_time exclude each other: a "
                       "just-in-time scale has no warm-up select");
  return success();
}
