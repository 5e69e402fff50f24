//===- MSAMPDialect.h - msamp dialect ---------------------------*- C++ -*-===//
//
// The msamp dialect and its enumerations.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_DIALECT_MSAMPDIALECT_H
#define MSAMP_DIALECT_MSAMPDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "MSAMP/Dialect/MSAMPOpsDialect.h.inc"

#include "MSAMP/Dialect/MSAMPEnums.h.inc"

namespace mlir::msamp {
/// The largest finite value of a scaled storage format (f8E4M3FN: 448,
/// f8E5M2: 57344, f16: 65504), or failure for any other type.
FailureOr<float> getMaxFinite(Type elementType);
/// True for the element types msamp stores scaled tensors in.
bool isLowPrecisionStorage(Type elementType);
/// The checks every op that derives a scale shares (msamp.compute_scale,
/// msamp.scale_update): a scaled `format` (getMaxFinite), a non-negative
/// `margin` and an amax history of at least one entry; each failure is an
/// error on `op`.
LogicalResult verifyScaleParameters(Operation *op, Type format,
                                    IntegerAttr margin, ShapedType amaxHistory);
} // namespace mlir::msamp

#endif // MSAMP_DIALECT_MSAMPDIALECT_H
