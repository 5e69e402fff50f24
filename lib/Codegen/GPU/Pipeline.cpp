//===- Pipeline.cpp - --msamp-lower-to-gpu ------------------------*- C++
//-*-===//
//
// Tensor-level train step -> LLVM dialect host code + PTX kernels:
//
//  1. the tensor half of --msamp-lower-to-llvm: elementwise fusion, msamp
//     ops and GEMMs to runtime calls (adjacent Adam updates grouped into
//     multi-tensor calls first: GroupAdamUpdates.cpp; multi-use elementwise
//     results recomputed by their consumers: FuseProducers.cpp; FP8 GEMM
//     operands in the other layout written by their quantize's call:
//     FP8OperandLayouts.cpp), one-shot bufferization;
//     then globals are copied into step buffers (a kernel cannot read the
//     host image), buffers are deallocated, runtime calls finalized;
//  2. buffer copies become linalg.copy; parallel dimensions are moved
//     before reductions; full sums become partial sums with an atomic add;
//     f32 add/max reductions over contiguous rows become a gpu.launch with
//     a warp (or a block, long rows) per row and shuffles
//     (RowReductions.cpp; not in host emulation, which cannot run shuffles:
//     there they stay on the loop path below); every other linalg op
//     becomes an scf.parallel nest (reduction dimensions are sequential
//     scf.for inside it, the accumulator carried in a register:
//     RegisterAccumulators.cpp, emulated too), collapsed to
//     one dimension and tiled into blocks x threads, mapped to gpu.launch
//     and outlined into gpu.modules. What has no parallel dimension: 0-d
//     arithmetic becomes single-thread kernels (merged across the calls
//     and kernels they do not depend on: MergeScalarKernels.cpp), a full
//     reduction other than an atomic sum stays a host loop;
//  3. kernels: FP8 casts to NVVM cvt.satfinite, GPU-to-NVVM (libdevice for
//     math; math ops libdevice lacks to LLVM intrinsics), and
//     gpu-module-to-binary with format=isa: the gpu.binary embeds PTX for
//     `chip` (+ptx80 for sm_90, +ptx81 for sm_89), which the driver JITs
//     when the module is loaded;
//  4. host: gpu-to-llvm and the CPU tail of --msamp-lower-to-llvm, with
//     memref.alloc/dealloc lowered to the generic allocation functions, and
//     the packed entry point. msamp-compile renames the upstream host calls
//     (mgpu*, _mlir_memref_to_llvm_*) to the runtime's wrappers after
//     translation (GPURuntimeSymbols.h).
//
// Buffers: the step's temporaries are views of a static device arena and,
// where host code touches them, a pinned host arena, laid out by the buffer
// plan (msamp-gpu-static-arena, after step 2's tiling, so host emulation
// runs the same layout); the session's state and inputs are CUDA managed
// memory, which kernels, host code and the runtime's CUDA backend (device
// and managed pointers in place) all reach.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Codegen/GPU/HostToLLVM.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/SinkGlobals.h"
#include "MSAMP/Codegen/GPU/SplitHostStep.h"
#include "MSAMP/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#ifndef MSAMP_CUDA_TOOLKIT_ROOT
#define MSAMP_CUDA_TOOLKIT_ROOT "/usr/local/cuda"
#endif

using namespace mlir;

std::string mlir::msamp::defaultPTXFeatures(StringRef chip) {
  if (chip == "sm_89")
    return "+ptx81";
  return "+ptx80";
}

void mlir::msamp::buildLowerToGPUPipeline(OpPassManager &pm,
                                          const LowerToGPUOptions &options) {
  // The cost report's floor is counted on tensors (StepFloor.cpp).
  if (!options.hostEmulation)
    pm.addPass(createMSAMPGPUStepFloor());
  // 1. Tensors -> buffers, as for the CPU; constants into step buffers.
  const bool outlineTensors = options.dedupe && options.outlineTensors;
  buildBufferizeTrainStepPipeline(
      pm,
      [&](OpPassManager &pm) {
        if (outlineTensors) {
          // A layer's results become buffers its caller allocates, as on
          // the CPU; inside the layer each is its own (FreshArguments.h).
          buildOutlinedResultsToOutParams(pm);
          pm.addPass(createMSAMPGPUMarkFreshArguments());
        }
        pm.addPass(createMSAMPGPUStageGlobals());
      },
      // The optimizer's updates as few multi-tensor calls as possible.
      [&](OpPassManager &pm) {
        // Each FP8 cast's amax, history and scales as one call.
        pm.addNestedPass<func::FuncOp>(createMSAMPGPUFuseScaleUpdates());
        {
          MSAMPGPUGroupAdamUpdatesOptions group;
          group.perCopy = outlineTensors;
          pm.addNestedPass<func::FuncOp>(createMSAMPGPUGroupAdamUpdates(group));
        }
        pm.addNestedPass<func::FuncOp>(createMSAMPGPUFusePermutes());
        // Multi-use elementwise results recomputed by their consumers
        // rather than written and read back (FuseProducers.cpp).
        pm.addNestedPass<func::FuncOp>(createMSAMPGPUFuseProducers());
        // Independent row reductions of one tensor read it once
        // (FuseSiblingReductions.cpp).
        pm.addNestedPass<func::FuncOp>(createMSAMPGPUFuseSiblingReductions());
        // FP8 GEMM operands in the other layout: transposed codes written
        // by their quantize's call instead of a pack in every GEMM.
        pm.addNestedPass<func::FuncOp>(createMSAMPGPUFP8OperandLayouts());
      },
      // No tensor the destination of many writes: CSE had merged every
      // tensor.empty of a type into one value, and one-shot
      // bufferization's conflict analysis grew with the cube of such a set
      // (issue 19: 9.4 s of a 29 s compile at 24 layers). As on the CPU.
      [&](OpPassManager &pm) {
        // Each layer bufferized and lowered once (msamp-compile keeps a
        // ZeRO-sharded step inline unless asked: docs/GPU.md).
        if (outlineTensors)
          pm.addPass(createMSAMPOutlineRepeatedBlocks());
        pm.addNestedPass<func::FuncOp>(createMSAMPSplitSharedInits());
      });

  // 2. linalg -> parallel loops -> gpu.launch -> gpu.module.
  MSAMPGPUTileParallelLoopsOptions tile;
  tile.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUCopiesToLinalg());
  // The embedding gradient as a deterministic scatter kernel, before any
  // other pass takes its one-hot reduction for a reduction to run as one.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUOneHotScatter());
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUParallelDimsOuter());
  // Reduction accumulators start from their constant, not from a copy.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUReductionInits());
  // Independent elementwise kernels over the same loops as one launch.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUMergeSiblingKernels());
  // Each kernel's cost, while its linalg op still says it (KernelCosts.cpp).
  if (!options.hostEmulation)
    pm.addNestedPass<func::FuncOp>(createMSAMPGPUKernelCosts());
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUAtomicFullReductions());
  // The gradient norm's sums, one per parameter, as one kernel.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUMergeAtomicSums());
  // Shuffles and barriers have no host form: emulation keeps row
  // reductions and the atomic sums' per-thread adds on loops.
  if (!options.hostEmulation) {
    // A block's partial sums added in workgroup memory, one atomic add.
    pm.addNestedPass<func::FuncOp>(createMSAMPGPUBlockAtomicSums());
    pm.addNestedPass<func::FuncOp>(createMSAMPGPURowReductions());
  }
  pm.addNestedPass<func::FuncOp>(createMSAMPGPURegisterAccumulators());
  pm.addNestedPass<func::FuncOp>(createMSAMPGPULinalgToParallelLoops());
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUTileParallelLoops(tile));
  // The host's 0-d arithmetic between kernels as single-thread kernels, so
  // the host does not wait for the stream there (ScalarKernels.cpp).
  // A 0-d buffer that bufferization reused holds one value per buffer, so
  // that no store waits for the previous value's readers.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUSplitScalarBuffers());
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUScalarKernels());
  // Runs that depend on nothing between them become one kernel.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUMergeScalarKernels());
  // What only one merged kernel writes and reads needs no buffer
  // (KernelLocalScalars.cpp): fewer parameters, arena slots and stores.
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUKernelLocalScalars());
  // After the scalar kernels: what host code still touches is known.
  pm.addPass(createMSAMPGPUStaticArena({options.hostEmulation}));
  // A slice of an arena buffer as a buffer of its own: its offset applied
  // by the host, not compiled into each kernel (FoldArenaSubviews.cpp).
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUFoldArenaSubviews());
  // Each layer's host code once: the repeats as calls, their views'
  // offsets as arguments (OutlineLayers.cpp). Host emulation too, so that
  // its tests run the outlined step against the CPU's.
  const bool outlineLayers = options.dedupe && options.outlineLayers;
  if (outlineLayers)
    pm.addPass(createMSAMPGPUOutlineLayers({!options.hostEmulation}));
  if (options.hostEmulation) {
    // Test aid: the same buffers, kernels bodies and launch geometry, run
    // by the host (scf.parallel lowers to loops).
    buildLoopsToLLVMPipeline(pm, options.dedupe);
    return;
  }
  // One pointer per buffer in the layers' calls, as on the CPU.
  if (outlineLayers || outlineTensors)
    pm.addPass(createMSAMPBarePointerCalls());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A staged table's copy kernel reads the table from its own module
  // (device memory), not from the host image (SinkGlobals.cpp).
  pm.addNestedPass<func::FuncOp>(createMSAMPGPUSinkGlobals());
  pm.addPass(createGpuKernelOutliningPass());
  // Kernels take bare pointers (below): every buffer needs a static layout.
  pm.addPass(createMSAMPGPUCheckKernelBuffers());
  if (options.dedupe)
    pm.addPass(createMSAMPGPUDedupeKernels());
  // One stream: the host waits only where its own code needs the kernels'
  // results (AsyncLaunches.cpp).
  pm.addPass(createMSAMPGPUAsyncLaunches());
  pm.addPass(createMSAMPGPUGraphCheck());
  MSAMPGPUCostReportOptions costReport;
  costReport.file = options.costReport;
  pm.addPass(createMSAMPGPUCostReport(costReport));
  pm.addPass(createLowerAffinePass());

  // 3. Kernels -> NVVM -> PTX, embedded in gpu.binary ops.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features.empty() ? defaultPTXFeatures(options.chip)
                                             : std::string(options.features);
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createMSAMPGPULowerFP8Casts());
  // Buffers as bare pointers, in the kernel and at its launch (gpu-to-llvm
  // below): every kernel buffer has a static shape, strides and offset,
  // which the kernel rebuilds from its type. A whole descriptor was
  // 3 + 2 x rank parameters per buffer, each one an alloca, a store and a
  // pointer in the launch's host code (issue 19), and counted against the
  // merged kernels' parameter budget (kKernelBufferParamBytes).
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What libdevice has no function for (trunc, ctlz, cttz, ctpop) is left
  // by convert-gpu-to-nvvm; LLVM intrinsics the NVPTX backend selects.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.toolkit.empty()
                           ? std::string(MSAMP_CUDA_TOOLKIT_ROOT)
                           : std::string(options.toolkit);
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // 4. Host code -> LLVM dialect. gpu-to-llvm renumbered the host step's
  // one block for every value it replaced (SplitHostStep.cpp), so right
  // before it the step is cut into bounded blocks. Not earlier: the greedy
  // rewrites before (expand-strided-metadata) hoist every constant back
  // into the entry block (4,495 at 24 layers), and finalize-memref-to-llvm
  // puts a cast of every argument of the step there (2,578).
  buildHostToLLVMPipeline(
      pm,
      [&](OpPassManager &pm) {
        // Before gpu-to-llvm, whose memref patterns would lower memref.alloc to
        // plain malloc (host memory a kernel cannot reach).
        FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
        memrefToLLVM.useGenericFunctions = true;
        pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
        pm.addPass(createMSAMPGPUSplitHostStep());
        // gpu-to-llvm, kernels taking bare pointers (convert-gpu-to-nvvm
        // above), without its greedy walk of the step (HostToLLVM.cpp).
        if (options.upstreamHostConversion) {
          GpuToLLVMConversionPassOptions gpuToLLVM;
          gpuToLLVM.kernelBarePtrCallConv = true;
          pm.addPass(createGpuToLLVMConversionPass(gpuToLLVM));
        } else {
          pm.addPass(createMSAMPGPUHostToLLVM());
        }
      },
      // The step is in bounded blocks by then, thousands of them: the last
      // canonicalization runs bottom-up without region simplification
      // (unreachable blocks, region DCE), which walked them all per
      // iteration. The same object; the CPU's step is cut only after, and
      // there the defaults are faster.
      /*stepInBlocks=*/true);
  // The host step is a straight line of launches and runtime calls, one
  // block that grows with depth: LLVM -O3's SLP vectorizer and -O3 code
  // generation of that block grew quadratically (issue 19: 12.8 s and 12.5
  // s of a 25 s compile at 8 layers). As on the CPU target, it goes into
  // the packed entry point, -O0 (optnone: nothing to optimize in glue that
  // a CUDA graph replays without running), cut into bounded blocks
  // (msamp-compile then moves each launch's argument allocas into the
  // entry block: LaunchAllocas.h).
  if (!options.hostEmulation) {
    pm.addPass(createMSAMPInlineStepIntoEntryPoint());
    pm.addPass(createMSAMPOptNoneEntryPoints());
    pm.addPass(createMSAMPSplitStraightLines());
  }
}

void mlir::msamp::registerMSAMPGPUPipelines() {
  // Not in Passes.td (SinkGlobals.h, SplitHostStep.h): registered with the
  // pipeline.
  registerMSAMPGPUSinkGlobals();
  registerMSAMPGPUSplitHostStep();
  registerMSAMPGPUHostToLLVM();
  PassPipelineRegistration<LowerToGPUOptions>(
      "msamp-lower-to-gpu",
      "lower a compiled train step to GPU kernels (NVVM, PTX embedded) and "
      "LLVM dialect host code with runtime calls and the packed entry point",
      [](OpPassManager &pm, const LowerToGPUOptions &options) {
        buildLowerToGPUPipeline(pm, options);
      });
}

void mlir::msamp::registerGPUTargetTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}
