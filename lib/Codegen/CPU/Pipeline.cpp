//===- Pipeline.cpp - --msamp-lower-to-llvm ------------------*- C++ -*-===//
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

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::msamp::buildLowerToLLVMPipeline(OpPassManager &pm,
                                           bool outlineLoopNests) {
  buildBufferizeTrainStepPipeline(
      pm,
      [&](OpPassManager &pm) {
        // A repeated block's results become buffers its caller allocates:
        // returned, the deallocation needed a run-time alias check for each.
        if (outlineLoopNests)
          buildOutlinedResultsToOutParams(pm);
        pm.addNestedPass<func::FuncOp>(createMSAMPReorderReductionLoops());
      },
      // CPU only: on a GPU the loop over ids would launch a kernel per id.
      [](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(createMSAMPOneHotReductionToScatter());
      },
      // Each layer bufferized and compiled once (it only moves ops into
      // functions: no CSE between the runtime calls and bufferization).
      [&](OpPassManager &pm) {
        if (outlineLoopNests)
          pm.addPass(createMSAMPOutlineRepeatedBlocks());
        // No tensor the destination of many writes: one-shot bufferization's
        // conflict analysis was cubic in such a set (Passes.td).
        pm.addNestedPass<func::FuncOp>(createMSAMPSplitSharedInits());
      });
  // What the tensor-level outlining left in the step, chiefly the in-place
  // state updates of every layer, repeats too: on buffers it can be outlined.
  if (outlineLoopNests) {
    MSAMPOutlineRepeatedBlocksOptions onBuffers;
    onBuffers.onBuffers = true;
    pm.addPass(createMSAMPOutlineRepeatedBlocks(onBuffers));
    // Their allocations, too, move to the caller: LLVM's interprocedural
    // passes (called-value propagation) grew faster than linearly in the
    // aggregates of descriptors the functions returned.
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  // Every buffer and its dealloc exist now; the later passes make none.
  pm.addPass(createMSAMPBufferPlan());
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
  if (outlineLoopNests) {
    pm.addPass(createMSAMPOutlineLoopNests());
    // One pointer per buffer in the calls of the blocks and nests, not
    // their descriptors' fields: the step's length no longer grows with
    // the rank and number of buffers per call.
    pm.addPass(createMSAMPBarePointerCalls());
  }
  buildHostToLLVMPipeline(pm, [](OpPassManager &pm) {
    pm.addPass(createConvertVectorToLLVMPass());
    // Allocations go through the runtime's counting heap
    // (kAllocatorRuntimeSymbols): the session measures the step's peak.
    FinalizeMemRefToLLVMConversionPassOptions memref;
    memref.useGenericFunctions = true;
    pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  });
  // With the nests and layers outlined the step and its wrappers are
  // straight lines of calls: -O3 on them was time for nothing.
  // Code generation of their one long block at -O0 was superlinear.
  if (outlineLoopNests) {
    pm.addPass(createMSAMPInlineStepIntoEntryPoint());
    pm.addPass(createMSAMPOptNoneEntryPoints());
    pm.addPass(createMSAMPSplitStraightLines());
  }
}

void mlir::msamp::registerMSAMPCPUPipelines() {
  PassPipelineRegistration<LowerToLLVMOptions>(
      "msamp-lower-to-llvm",
      "lower a compiled train step to the LLVM dialect with runtime calls "
      "and the packed entry point",
      [](OpPassManager &pm, const LowerToLLVMOptions &options) {
        buildLowerToLLVMPipeline(pm, options.outlineLoopNests);
      });
}
