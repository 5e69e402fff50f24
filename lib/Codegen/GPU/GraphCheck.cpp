//===- GraphCheck.cpp - can the step be captured as a CUDA graph? ---------===//
//
// Part of the msamp project.
//
// A CUDA graph replays the kernels and copies a step enqueued while it was
// captured; the step's host code runs once, at the capture. The session may
// replay a step only if every run of its host code would enqueue the same
// work: no host read of device results (a wait, a load), no host write a
// kernel reads (a store), no allocation, no call that waits or is not
// ordered on the stream, no host-level loop or branch. Which step qualifies
// is known here, not at run time, where a host read inside the step would
// silently freeze its value into the graph.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/GraphCheck.h"
#include "MSAMP/Codegen/GPU/HostStack.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/StreamOrderedCalls.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUGRAPHCHECK
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Why `op`, in the step's host code, cannot be replayed from a graph; ""
/// when it can.
std::string blockerOf(Operation &op, const msamp::HostStack &stack) {
  if (isa<gpu::LaunchFuncOp, func::ReturnOp, memref::AllocaOp>(op))
    return "";
  if (auto wait = dyn_cast<gpu::WaitOp>(op))
    return wait.getAsyncToken() ? ""
                                : "the host waits for the device here (host "
                                  "code reads a kernel's result)";
  if (auto call = dyn_cast<func::CallOp>(op)) {
    StringRef callee = call.getCallee();
    if (callee == "msamp_rt_gpu_arena" || callee == "msamp_rt_gpu_host_arena")
      return "";
    if (!msamp::isStreamOrderedCall(callee))
      return ("calls @" + callee +
              ", which is not ordered on the runtime's stream")
          .str();
    return "";
  }
  if (isa<memref::AllocOp>(op))
    return "allocates a buffer (managed memory) in the step";
  if (op.getNumRegions() > 0)
    return ("a loop or branch ('" + op.getName().getStringRef() +
            "') runs on the host")
        .str();
  if (isPure(&op))
    return "";
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return ("'" + op.getName().getStringRef() +
            "' has unknown effects on the host")
        .str();
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list) {
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
      continue;
    // The host's own stack (a multi-tensor Adam call's table of buffer
    // addresses): rewritten with the same addresses at every capture.
    Value memory = e.getValue();
    if (memory && stack.contains(memory))
      continue;
    return ("host code " +
            Twine(isa<MemoryEffects::Read>(e.getEffect()) ? "reads"
                                                          : "writes") +
            " a buffer ('" + op.getName().getStringRef() + "')")
        .str();
  }
  return "";
}

/// "FILE:LINE:COL: why", from the first file location in `op`'s.
std::string describe(Operation &op, const std::string &why) {
  std::string where;
  op.getLoc()->walk([&](Location loc) {
    if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      where = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
               ":" + Twine(file.getColumn()))
                  .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (where.empty()) {
    llvm::raw_string_ostream os(where);
    os << op.getLoc();
  }
  return where + ": " + why;
}

struct GraphCheckPass : msamp::impl::MSAMPGPUGraphCheckBase<GraphCheckPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    msamp::HostStack stack(module);
    checked.clear();
    std::string blocker;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      blocker = firstBlocker(func, symbols, stack);
      if (!blocker.empty())
        break;
    }
    module->setAttr(msamp::kCudaGraphBlockerAttr,
                    StringAttr::get(module.getContext(), blocker));
  }

  /// The first op of `func`'s host code that a graph cannot replay,
  /// described; "" if there is none. A call of a function the module
  /// defines (a layer, msamp-gpu-outline-layers) is replayed as its body
  /// is, so the body answers for it (once per function).
  std::string firstBlocker(func::FuncOp func, SymbolTable &symbols,
                           const msamp::HostStack &stack) {
    if (auto it = checked.find(func); it != checked.end())
      return it->second;
    std::string blocker;
    for (Operation &op : func.getBody().getOps()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && !callee.isExternal()) {
          blocker = firstBlocker(callee, symbols, stack);
          if (!blocker.empty())
            break;
          continue;
        }
      }
      std::string why = blockerOf(op, stack);
      if (why.empty())
        continue;
      blocker = describe(op, why);
      break;
    }
    checked[func] = blocker;
    return blocker;
  }

  llvm::DenseMap<Operation *, std::string> checked;
};

} // namespace
