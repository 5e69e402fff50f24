//===- GemmTable.h - the GEMMs of a compiled train step ---------*- C++ -*-===//
//
// gemms.json (docs/Interfaces.md 4), written by msamp-compile from the
// tensor-level @train_step: one entry per classified GEMM with its kind,
// layer, weight, operand and output element types, whether it runs in FP8,
// and the reason it stayed in high precision. The reasons are data recorded
// by the passes that decide (--msamp-fp8-gemms, --msamp-amp-gemms) in the
// op's `msamp.gemm` dictionary, so no consumer parses IR or remark text.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_GEMMTABLE_H
#define MSAMP_TRANSFORMS_GEMMTABLE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::msamp {

/// Key of the `msamp.gemm` dictionary that holds why a GEMM stayed in high
/// precision.
constexpr llvm::StringLiteral kGemmWhyKey = "why";

/// Records `why` in the `msamp.gemm` dictionary of `op` (a GEMM kept in high
/// precision); the remark the pass also emits is for humans.
void recordGemmKeptReason(Operation *op, llvm::StringRef why);

/// Writes the GEMM table of a tensor-level @train_step as a JSON object
/// {"level": L, "gemms": [{"kind", "layer", "weight", "op", "fp8", "lhs",
/// "rhs", "out", "why"}, ...]} in program order.
void printGemmTableJSON(func::FuncOp trainStep, llvm::raw_ostream &os);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_GEMMTABLE_H
