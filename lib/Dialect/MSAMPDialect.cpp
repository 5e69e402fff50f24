//===- MSAMPDialect.cpp - msamp dialect registration ------------*- C++ -*-===//

#include "MSAMP/Dialect/MSAMPDialect.h"
#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::msamp;

#include "MSAMP/Dialect/MSAMPOpsDialect.cpp.inc"

#include "MSAMP/Dialect/MSAMPEnums.cpp.inc"

void MSAMPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "MSAMP/Dialect/MSAMPOps.cpp.inc"
      >();
}

Operation *MSAMPDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  // Folders only produce dense tensor constants; arith.constant holds them.
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}

FailureOr<float> mlir::msamp::getMaxFinite(Type elementType) {
  if (isa<Float8E4M3FNType>(elementType))
    return 448.0f;
  if (isa<Float8E5M2Type>(elementType))
    return 57344.0f;
  if (elementType.isF16())
    return 65504.0f;
  return failure();
}

bool mlir::msamp::isLowPrecisionStorage(Type elementType) {
  return succeeded(getMaxFinite(elementType));
}

LogicalResult mlir::msamp::verifyScaleParameters(Operation *op, Type format,
                                                 IntegerAttr margin,
                                                 ShapedType amaxHistory) {
  if (failed(getMaxFinite(format)))
    return op->emitOpError("format must be f8E4M3FN, f8E5M2 or f16, got ")
           << format;
  // The I64Attr getter is unsigned: read the signed value.
  int64_t signedMargin = margin.getValue().getSExtValue();
  if (signedMargin < 0)
    return op->emitOpError("margin must be non-negative, got ") << signedMargin;
  if (amaxHistory.getDimSize(0) == 0)
    return op->emitOpError("amax history must have at least one entry");
  return success();
}
