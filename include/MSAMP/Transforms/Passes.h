//===- Passes.h - msamp passes and pipelines --------------------*- C++ -*-===//

#ifndef MSAMP_TRANSFORMS_PASSES_H
#define MSAMP_TRANSFORMS_PASSES_H

#include "MSAMP/Dialect/MSAMPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Transforms/Passes.h.inc"

/// Registers --msamp-o0, --msamp-o1, --msamp-o2 and --msamp-emit-manifest.
void registerMSAMPPipelines();

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_PASSES_H
