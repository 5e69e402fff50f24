//===- Passes.h - msamp lowering passes and pipelines -----------*- C++ -*-===//

#ifndef MSAMP_CONVERSION_PASSES_H
#define MSAMP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Conversion/Passes.h.inc"

/// Steps 1-3 of --msamp-lower-to-llvm, shared with --msamp-lower-to-gpu:
/// elementwise fusion, runtime calls, one-shot bufferization, buffer
/// deallocation and msamp-finalize-runtime-calls. `onTensors` may add
/// passes after fusion, before the runtime calls (on tensors);
/// `afterBufferize` between bufferization and deallocation.
void buildBufferizeTrainStepPipeline(
    OpPassManager &pm,
    llvm::function_ref<void(OpPassManager &)> afterBufferize = {},
    llvm::function_ref<void(OpPassManager &)> onTensors = {});

/// Step 4 of --msamp-lower-to-llvm: bufferized linalg, loops and runtime
/// calls -> LLVM dialect for the host, plus the packed entry point.
/// `outlineLoopNests`: each loop nest its own function, identical ones
/// shared (msamp-outline-loop-nests); false keeps the step one function.
void buildLoopsToLLVMPipeline(OpPassManager &pm, bool outlineLoopNests = true);

/// The host tail shared by the CPU and GPU lowerings: control flow,
/// strided metadata, libm, then `lowerMemory` (memref -> LLVM and what must
/// come with it), the remaining dialects -> LLVM and the packed entry point.
void buildHostToLLVMPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> lowerMemory);

/// Tensor-level train step -> LLVM dialect with the packed entry point
/// (registered as --msamp-lower-to-llvm).
void buildLowerToLLVMPipeline(OpPassManager &pm, bool outlineLoopNests = true);

/// Options of --msamp-lower-to-llvm.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc("compile each loop nest as its own function, "
                     "structurally identical nests once"),
      llvm::cl::init(true)};
};

void registerMSAMPConversionPipelines();

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_PASSES_H
