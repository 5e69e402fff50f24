//===- Passes.h - msamp passes and pipelines --------------------*- C++ -*-===//

#ifndef MSAMP_TRANSFORMS_PASSES_H
#define MSAMP_TRANSFORMS_PASSES_H

#include "MSAMP/Dialect/MSAMPDialect.h"
#include "MSAMP/Transforms/RecipeEnums.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Transforms/Passes.h.inc"

/// Registers --msamp-o0, --msamp-o1, --msamp-o2 and --msamp-emit-manifest.
void registerMSAMPPipelines();

/// Registers the reference rows of MS-AMP's level table: --msamp-amp and
/// --msamp-te (ReferencePipelines.cpp).
void registerMSAMPReferencePipelines();

/// What every level's pipeline starts with: the contract check, inlining,
/// GEMM classification and the train-step synthesis with `synth`.
void buildTrainStepPrologue(OpPassManager &pm,
                            const MSAMPSynthesizeTrainStepOptions &synth);

/// What every level's pipeline ends with, after its precision passes:
/// gradient statistics (then `afterStats`, the passes that read them),
/// canonicalization, index checks, the final verifier.
void buildTrainStepEpilogue(
    OpPassManager &pm,
    llvm::function_ref<void(OpPassManager &)> afterStats = nullptr);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_PASSES_H
