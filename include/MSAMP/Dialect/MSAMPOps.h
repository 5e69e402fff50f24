//===- MSAMPOps.h - msamp operations ----------------------------*- C++ -*-===//

#ifndef MSAMP_DIALECT_MSAMPOPS_H
#define MSAMP_DIALECT_MSAMPOPS_H

#include "MSAMP/Dialect/MSAMPDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "MSAMP/Dialect/MSAMPOps.h.inc"

#endif // MSAMP_DIALECT_MSAMPOPS_H
