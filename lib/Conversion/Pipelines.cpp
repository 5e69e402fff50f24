//===- Pipelines.cpp - the lowering steps both targets share ---*- C++ -*-===//
//
// Steps 1-3 of the CPU (Codegen/CPU/Pipeline.cpp) and GPU
// (Codegen/GPU/Pipeline.cpp) lowerings, and their common host tail.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::msamp::buildBufferizeTrainStepPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> afterBufferize,
    llvm::function_ref<void(OpPassManager &)> onTensors,
    llvm::function_ref<void(OpPassManager &)> beforeBufferize) {
  // One generated Philox for both targets: the same numbers on CPU and GPU.
  pm.addNestedPass<func::FuncOp>(createMSAMPLowerRandomUniform());
  // Scalar-state arithmetic (step + 1, 1 / scale, warm-up selects) is arith
  // on 0-d tensors: make it linalg so that it bufferizes and fuses.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createMSAMPLegalizeMath());
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (onTensors)
    onTensors(pm);
  // Fusion folds reshapes into contractions (attention's two batch dims):
  // make each one a (batched) GEMM again, so that every one is a runtime
  // call (BLAS, cuBLASLt) rather than a generated loop nest.
  pm.addNestedPass<func::FuncOp>(createMSAMPNormalizeContractions());
  // The runtime calls hand buffers over with bufferization.to_buffer, a Pure
  // op: CSE or canonicalization between here and one-shot bufferization
  // would merge a later read into an earlier to_buffer of the same tensor,
  // and bufferization would then reuse the tensor's buffer before the call
  // reads it. So the conversion runs last on tensors, right before
  // bufferization, with nothing in between.
  pm.addPass(createConvertMSAMPToRuntime());
  if (beforeBufferize)
    beforeBufferize(pm);

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  // Before deallocation: a copy-back extends its buffer to the step's end.
  pm.addNestedPass<func::FuncOp>(createMSAMPCheckInPlaceStates());
  // Column sums in two stages (GPU: enough threads); on both targets, so
  // they keep one summation order. Before deallocation: it allocates.
  pm.addNestedPass<func::FuncOp>(createMSAMPSplitColumnReductions());
  if (afterBufferize)
    afterBufferize(pm);
  // MLIR's buildBufferDeallocationPipeline (default options), with
  // msamp-split-fresh-deallocs before the simplification: its pairwise
  // alias proofs over the step's end-of-function dealloc were quadratic.
  pm.addPass(memref::createExpandReallocPass(
      memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createMSAMPSplitFreshDeallocs());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Only now, with every buffer's lifetime settled, may calls take the
  // type-erased memref<*xi8> operands of the C interface.
  pm.addPass(createMSAMPFinalizeRuntimeCalls());
}

void mlir::msamp::buildOutlinedResultsToOutParams(OpPassManager &pm) {
  // Only private functions change: the outlined blocks (@train_step is
  // public and the runtime's declarations return nothing).
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void mlir::msamp::buildHostToLLVMPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> lowerMemory,
    bool stepInBlocks) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createMSAMPMathToLibmOrLLVM());
  lowerMemory(pm);
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Per function, so that the context's threads canonicalize the layers'
  // and loop nests' functions while one of them does the step (the same
  // object: no pattern looks across functions).
  if (stepInBlocks) {
    // Bottom-up and no region simplification, which walked all of a step's
    // thousands of blocks per iteration (the same object, in less time).
    GreedyRewriteConfig canonicalize;
    canonicalize.setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    pm.addNestedPass<LLVM::LLVMFuncOp>(createCanonicalizerPass(canonicalize));
  } else {
    pm.addNestedPass<LLVM::LLVMFuncOp>(createCanonicalizerPass());
  }
  pm.addPass(createMSAMPEmitEntryPoint());
}
