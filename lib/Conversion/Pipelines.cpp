//===- Pipelines.cpp - --msamp-lower-to-llvm ----------------------*- C++
//-*-===//
//
// Tensor-level train step -> LLVM dialect, ready for ahead-of-time compilation
// into a shared object (tools/msamp-compile):
//
//  1. chains of elementwise linalg ops are fused so each fused chain is one
//     loop nest (no intermediate tensors), which LLVM's loop vectorizer then
//     vectorizes at -O3;
//  2. msamp ops and GEMMs become runtime calls (convert-msamp-to-runtime),
//     immediately before bufferization (see below);
//  3. one-shot bufferization across function boundaries (identity layouts so
//     the runtime sees plain contiguous buffers), then ownership-based
//     deallocation frees every temporary inside the step;
//  4. linalg -> loops -> LLVM, plus the packed entry point. Strided copies
//     become loops and every math op a libm call or an LLVM intrinsic
//     (msamp-legalize-math first rewrites those neither provides), so the
//     object references nothing but the runtime, libc and libm: msamp-compile
//     checks that before linking.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::msamp::buildBufferizeTrainStepPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> afterBufferize,
    llvm::function_ref<void(OpPassManager &)> onTensors) {
  // Scalar-state arithmetic (step + 1, 1 / scale, warm-up selects) is arith
  // on 0-d tensors: make it linalg so that it bufferizes and fuses.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createMSAMPLegalizeMath());
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (onTensors)
    onTensors(pm);
  // The runtime calls hand buffers over with bufferization.to_buffer, a Pure
  // op: CSE or canonicalization between here and one-shot bufferization
  // would merge a later read into an earlier to_buffer of the same tensor,
  // and bufferization would then reuse the tensor's buffer before the call
  // reads it. So the conversion runs last on tensors, right before
  // bufferization, with nothing in between.
  pm.addPass(createConvertMSAMPToRuntime());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  // Before deallocation: a copy-back extends its buffer to the step's end.
  pm.addNestedPass<func::FuncOp>(createMSAMPCheckInPlaceStates());
  if (afterBufferize)
    afterBufferize(pm);
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Only now, with every buffer's lifetime settled, may calls take the
  // type-erased memref<*xi8> operands of the C interface.
  pm.addPass(createMSAMPFinalizeRuntimeCalls());
}

void mlir::msamp::buildLowerToLLVMPipeline(OpPassManager &pm,
                                           bool outlineLoopNests) {
  buildBufferizeTrainStepPipeline(
      pm,
      [](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(createMSAMPReorderReductionLoops());
      },
      // CPU only: on a GPU the loop over ids would launch a kernel per id.
      [](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(createMSAMPOneHotReductionToScatter());
      });
  buildLoopsToLLVMPipeline(pm, outlineLoopNests);
}

void mlir::msamp::buildLoopsToLLVMPipeline(OpPassManager &pm,
                                           bool outlineLoopNests) {
  // After convert-bufferization-to-memref, the last pass that makes copies
  // (a bufferization.clone becomes alloc + memref.copy).
  pm.addNestedPass<func::FuncOp>(createMSAMPStridedCopiesToLoops());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  // Before msamp-math-to-libm-or-llvm (buildHostToLLVMPipeline): a libm tanhf
  // call keeps GELU's loops scalar.
  pm.addNestedPass<func::FuncOp>(createMSAMPApproximateTanh());
  // Last on loops: the nests are final, so identical ones print the same.
  if (outlineLoopNests)
    pm.addPass(createMSAMPOutlineLoopNests());
  buildHostToLLVMPipeline(pm, [](OpPassManager &pm) {
    pm.addPass(createConvertVectorToLLVMPass());
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  });
}

void mlir::msamp::buildHostToLLVMPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> lowerMemory) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createMSAMPMathToLibmOrLLVM());
  lowerMemory(pm);
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMSAMPEmitEntryPoint());
}

void mlir::msamp::registerMSAMPConversionPipelines() {
  PassPipelineRegistration<LowerToLLVMOptions>(
      "msamp-lower-to-llvm",
      "lower a compiled train step to the LLVM dialect with runtime calls "
      "and the packed entry point",
      [](OpPassManager &pm, const LowerToLLVMOptions &options) {
        buildLowerToLLVMPipeline(pm, options.outlineLoopNests);
      });
}
