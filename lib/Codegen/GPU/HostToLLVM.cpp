//===- HostToLLVM.cpp - The host step's GPU ops to runtime calls ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-host-to-llvm: upstream gpu-to-llvm is two steps. First a
// greedy rewrite that lowers vector transfers (for hosts that have them);
// then the dialect conversion of the host code to the LLVM dialect, with
// every gpu.launch_func a call of the GPU runtime wrappers. On --target
// cuda the host step has no vector op, so the first step only walked it:
// the greedy driver folds every op and simplifies every region, and
// msamp-gpu-split-host-step has cut the step into thousands of blocks by
// then. It took two thirds of gpu-to-llvm's time, and grew faster than the
// step (issue 19: 0.55 s at 24 layers of the benchmark LM, 1.28 s at 48).
//
// This pass makes the same conversion with the same patterns and legality
// (every loaded dialect's ConvertToLLVMPatternInterface, the vector and
// memref patterns, the GPU runtime-call patterns; gpu.module and
// gpu.binary stay; a gpu.launch_func is legal once its operands are
// converted; upstream's structural conversions of the async dialect are
// left out, since no pass of ours makes an async op) and skips the greedy
// step when no op outside the kernel modules is a vector op; when one is,
// it runs upstream gpu-to-llvm itself.
// The later host canonicalization folds what the greedy step would have:
// train_step.so is byte for byte the same
// (test/Codegen/GPU/msamp-gpu-host-to-llvm.test compares the LLVM IR).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/HostToLLVM.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace {

struct HostToLLVMPass : PassWrapper<HostToLLVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HostToLLVMPass)

  StringRef getArgument() const override { return "msamp-gpu-host-to-llvm"; }
  StringRef getDescription() const override {
    return "gpu-to-llvm with kernels taking bare pointers, without its "
           "greedy vector-transfer rewrite when the host has no vector op";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, memref::MemRefDialect>();
    registerConvertToLLVMDependentDialectLoading(registry);
  }

  /// Whether an op outside the kernel modules is a vector op.
  static bool hostHasVectorOps(ModuleOp module) {
    return module
        .walk([](Operation *op) {
          if (isa<gpu::GPUModuleOp>(op))
            return WalkResult::skip();
          return isa<vector::VectorDialect>(op->getDialect())
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GpuToLLVMConversionPassOptions upstreamOptions;
    upstreamOptions.kernelBarePtrCallConv = true;
    if (hostHasVectorOps(module)) {
      OpPassManager upstream(ModuleOp::getOperationName());
      upstream.addPass(createGpuToLLVMConversionPass(upstreamOptions));
      if (failed(runPipeline(upstream, module)))
        signalPassFailure();
      return;
    }

    MLIRContext *context = &getContext();
    LLVMTypeConverter converter(context, LowerToLLVMOptions(context));
    RewritePatternSet patterns(context);
    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect>();
    for (Dialect *dialect : context->getLoadedDialects())
      if (auto *toLLVM = dyn_cast<ConvertToLLVMPatternInterface>(dialect))
        toLLVM->populateConvertToLLVMConversionPatterns(target, converter,
                                                        patterns);
    // The kernel modules are already binaries; a launch is done once its
    // operands are LLVM values.
    target.addLegalOp<gpu::GPUModuleOp, gpu::BinaryOp>();
    target.addDynamicallyLegalOp<gpu::LaunchFuncOp>(
        [&](gpu::LaunchFuncOp launch) { return converter.isLegal(launch); });
    populateVectorToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateGpuToLLVMConversionPatterns(
        converter, patterns, upstreamOptions.kernelBarePtrCallConv,
        upstreamOptions.kernelIntersperseSizeCallConv);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> mlir::msamp::createMSAMPGPUHostToLLVM() {
  return std::make_unique<HostToLLVMPass>();
}

void mlir::msamp::registerMSAMPGPUHostToLLVM() {
  PassRegistration<HostToLLVMPass>();
}
