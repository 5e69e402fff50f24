//===- BufferAccesses.cpp - which buffers an op reads and writes ----------===//
//
// Part of the msamp project.
//
// The buffer model of BufferAccesses.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/FreshArguments.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The parameters that runtime entry points only read (docs/RuntimeABI.md
/// 3.1-3.7, 3.12-3.15: the inputs, scales and histories; `out` may alias an
/// input where the ABI allows it, and is then written through `out`). Every
/// other memref parameter of a call is taken as read and written.
llvm::ArrayRef<unsigned> readOnlyParameters(llvm::StringRef callee) {
  static const unsigned kFirst[] = {0};
  static const unsigned kFirstTwo[] = {0, 1};
  static const unsigned kFirstFour[] = {0, 1, 2, 3};
  return llvm::StringSwitch<llvm::ArrayRef<unsigned>>(callee)
      .Cases({"msamp_rt_quantize", "msamp_rt_dequantize",
              "msamp_rt_compute_scale", "msamp_rt_update_amax_history",
              "msamp_rt_all_reduce", "msamp_rt_quantize_jit",
              "msamp_rt_quantize_transpose"},
             kFirstTwo)
      .Case("msamp_rt_amax", kFirst)
      .Cases({"msamp_rt_gemm", "msamp_rt_scale_update",
              "msamp_rt_quantize_scale_update"},
             kFirstFour)
      .Default({});
}

/// Workgroup or private memory of a kernel (a gpu.launch's attributions):
/// no other op can reach it.
bool isKernelLocal(Value memref) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
      cast<BaseMemRefType>(memref.getType()).getMemorySpace());
  return space && space.getValue() != gpu::AddressSpace::Global;
}

} // namespace

BufferAccesses msamp::collectBufferAccesses(Operation *root) {
  BufferAccesses accesses;
  auto both = [&](Value memref) {
    accesses.reads.insert(rootBuffer(memref));
    accesses.writes.insert(rootBuffer(memref));
  };
  root->walk([&](Operation *op) {
    if (isa<CallOpInterface>(op)) {
      auto call = dyn_cast<func::CallOp>(op);
      llvm::ArrayRef<unsigned> readOnly =
          call ? readOnlyParameters(call.getCallee()) : ArrayRef<unsigned>();
      for (OpOperand &operand : op->getOpOperands()) {
        if (!isa<BaseMemRefType>(operand.get().getType()))
          continue;
        // A table of addresses (msamp_rt_adam_update_multi's): the call
        // reaches buffers that are not its operands.
        if (rootBuffer(operand.get()).getDefiningOp<memref::AllocaOp>())
          accesses.anything = true;
        if (llvm::is_contained(readOnly, operand.getOperandNumber()))
          accesses.reads.insert(rootBuffer(operand.get()));
        else
          both(operand.get());
      }
      return;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    // Its nested ops are walked; a linalg op also has effects of its own
    // (it reads its inputs and writes its outputs), which it states.
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() && !effects)
      return;
    if (!effects) {
      for (Value operand : op->getOperands())
        if (isa<BaseMemRefType>(operand.getType()))
          both(operand);
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances) {
      if (isa<MemoryEffects::Allocate>(instance.getEffect()))
        continue; // fresh memory
      Value value = instance.getValue();
      if (!value) {
        if (!isa<SideEffects::AutomaticAllocationScopeResource>(
                instance.getResource()))
          accesses.anything = true;
        continue;
      }
      if (!isa<BaseMemRefType>(value.getType()) || isKernelLocal(value))
        continue;
      if (isa<MemoryEffects::Read>(instance.getEffect()))
        accesses.reads.insert(rootBuffer(value));
      else
        accesses.writes.insert(rootBuffer(value));
    }
  });
  return accesses;
}

/// Whether two root buffers may share memory: the same buffer, or two
/// buffers of which neither is an allocation of the step (arguments and
/// globals may alias each other), or one whose origin is not known.
bool msamp::mayAlias(Value a, Value b) {
  if (a == b)
    return true;
  auto known = [](Value v) {
    return isa<BlockArgument>(v) ||
           isa_and_nonnull<memref::AllocOp, memref::AllocaOp,
                           memref::GetGlobalOp>(v.getDefiningOp());
  };
  if (!known(a) || !known(b))
    return true;
  // An allocation, or an argument every call gives a buffer of its own,
  // shares memory with no other root.
  return !isOwnBuffer(a) && !isOwnBuffer(b);
}

static bool overlap(const llvm::SmallDenseSet<Value> &a,
                    const llvm::SmallDenseSet<Value> &b) {
  for (Value x : a)
    for (Value y : b)
      if (mayAlias(x, y))
        return true;
  return false;
}

/// Whether `later` may not move before `earlier` (neither is a pure op).
bool msamp::dependsOn(const BufferAccesses &later,
                      const BufferAccesses &earlier) {
  if (later.anything || earlier.anything)
    return true;
  return overlap(earlier.writes, later.reads) ||
         overlap(earlier.writes, later.writes) ||
         overlap(earlier.reads, later.writes);
}
