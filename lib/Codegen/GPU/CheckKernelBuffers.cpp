//===- CheckKernelBuffers.cpp - --msamp-gpu-check-kernel-buffers ----------===//
//
// Part of the msamp project. What and why: the pass's description in
// include/MSAMP/Codegen/GPU/Passes.td.
//
// Kernels take their buffers as bare pointers (Pipeline.cpp): the kernel
// rebuilds each descriptor from its memref type, which must therefore say
// the whole layout. gpu-to-llvm refuses a launch that breaks this with
// "failed to legalize operation 'gpu.launch_func'"; this check says which
// kernel, which buffer and why, at the launch's source location.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUCHECKKERNELBUFFERS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

struct CheckKernelBuffersPass
    : msamp::impl::MSAMPGPUCheckKernelBuffersBase<CheckKernelBuffersPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](gpu::LaunchFuncOp launch) {
      for (auto [index, operand] :
           llvm::enumerate(launch.getKernelOperands())) {
        auto type = dyn_cast<BaseMemRefType>(operand.getType());
        if (!type || LLVMTypeConverter::canConvertToBarePtr(type))
          continue;
        launch.emitError()
            << "kernel @" << launch.getKernelModuleName().getValue()
            << " takes buffer argument " << index << " of type " << type
            << ", whose shape, strides or offset are not static: kernels "
               "take their buffers as bare pointers (the descriptor rebuilt "
               "from the type), so every kernel buffer needs a static layout";
        failedAny = true;
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
