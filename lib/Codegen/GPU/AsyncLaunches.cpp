//===- AsyncLaunches.cpp - no stream synchronization after each launch ----===//
//
// Part of the msamp project.
//
// gpu-to-llvm follows every synchronous gpu.launch_func with a stream
// synchronization: GPT-2 small waited 1,446 times per step for kernels that
// the next kernel or runtime call would have waited for on the stream
// anyway. Here a block's launches are chained on one async token (the
// session's stream) and the host waits only where its own code touches
// memory a kernel may be writing, or at the end of a nested block. The
// return of a public function (the step) does not wait: its caller
// synchronizes before it reads an output (runtime ABI 4), so a step holds
// no synchronization and can be captured as a CUDA graph. Nor does the
// return of a function the step calls (a layer, msamp-gpu-outline-layers):
// the call counts as pending work in the caller, as a launch does, and the
// callee starts as if work were pending (its first host access waits). The CUDA
// backend's entry points return without waiting when every buffer is device or
// managed memory (Staging.h), as a compiled step's are: such a call leaves
// work pending on the stream exactly as a launch does.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/HostStack.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/StreamOrderedCalls.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUASYNCLAUNCHES
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The functions of the module with a body: a call of one (a layer that
/// msamp-gpu-outline-layers outlined) leaves its work pending on the stream
/// like a launch, and its return does not wait.
using DefinedFunctions = llvm::DenseSet<StringRef>;

/// Whether the host must have the kernels' results before `op` runs.
bool needsDeviceResults(Operation &op, const DefinedFunctions &defined,
                        const msamp::HostStack &stack) {
  // The caller of a public function (the step's entry) synchronizes before
  // it reads what the step computed; the caller of a defined function
  // counts the call as pending work.
  if (isa<func::ReturnOp>(op))
    return false;
  if (op.hasTrait<OpTrait::IsTerminator>() || op.getNumRegions() > 0)
    return true;
  if (auto call = dyn_cast<func::CallOp>(op))
    return !msamp::isStreamOrderedCall(call.getCallee()) &&
           !defined.contains(call.getCallee());
  if (isa<gpu::LaunchFuncOp, gpu::WaitOp>(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true; // unknown: assume it touches memory
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
      return false;
    // The host's own stack (a multi-tensor Adam call's table of buffer
    // addresses, AdamGroupToRuntime.cpp): no kernel reads or writes it.
    Value memory = e.getValue();
    return !(memory && stack.contains(memory));
  });
}

/// `pending`: whether work may be on the stream when the block starts (a
/// called function's caller may have launched some).
void makeBlockAsync(Block &block, const DefinedFunctions &defined,
                    const msamp::HostStack &stack, bool pending) {
  Value token;
  auto streamToken = [&](OpBuilder &b, Location loc) {
    return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                               ValueRange{})
        .getAsyncToken();
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (launch && !launch.getAsyncToken()) {
      OpBuilder b(launch);
      auto tokenType = b.getType<gpu::AsyncTokenType>();
      if (!token)
        token = streamToken(b, launch.getLoc());
      SmallVector<Value> deps{token};
      llvm::append_range(deps, launch.getAsyncDependencies());
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      auto async = gpu::LaunchFuncOp::create(
          b, launch.getLoc(), launch.getKernel(),
          launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, deps, cluster);
      async->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
      token = async.getAsyncToken();
      launch.erase();
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op);
        call && (msamp::isStreamOrderedCall(call.getCallee()) ||
                 defined.contains(call.getCallee()))) {
      // Pending work like a launch: the token (the stream) is what a later
      // host access waits for.
      if (!token) {
        OpBuilder b(call);
        token = streamToken(b, call.getLoc());
      }
      continue;
    }
    if ((token || pending) && needsDeviceResults(op, defined, stack)) {
      OpBuilder b(&op);
      if (!token)
        token = streamToken(b, op.getLoc());
      gpu::WaitOp::create(b, op.getLoc(), Type(), ValueRange{token});
      token = Value();
      pending = false;
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        makeBlockAsync(inner, defined, stack, /*pending=*/false);
  }
}

struct AsyncLaunchesPass
    : msamp::impl::MSAMPGPUAsyncLaunchesBase<AsyncLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DefinedFunctions defined;
    msamp::HostStack stack(module);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        defined.insert(func.getSymName());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // A function the module calls starts with its caller's work pending.
      bool pending = func.isPrivate();
      for (Block &block : func.getBody()) {
        makeBlockAsync(block, defined, stack, pending);
        pending = false;
      }
    }
  }
};

} // namespace
