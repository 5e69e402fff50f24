//===- MSAMPRandomOps.cpp - msamp.random_uniform ----------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::msamp;

LogicalResult RandomUniformOp::verify() {
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high) || !(low < high))
    return emitOpError("needs finite low < high, got [")
           << low << ", " << high << ")";
  if (getId() < 0 || getId() > UINT32_MAX)
    return emitOpError("id must fit in 32 unsigned bits, got ") << getId();
  auto type = cast<RankedTensorType>(getResult().getType());
  // The element index is one 32-bit counter word.
  if (!type.hasStaticShape() || type.getNumElements() > UINT32_MAX)
    return emitOpError("needs a static shape of at most 2^32 - 1 elements");
  return success();
}
