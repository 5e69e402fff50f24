//===- FreshArguments.cpp - --msamp-gpu-mark-fresh-arguments --------------===//
//
// Part of the msamp project. What and why: FreshArguments.h and the pass's
// description in include/MSAMP/Codegen/GPU/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/FreshArguments.h"
#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Codegen/GPU/CallSites.h"
#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUMARKFRESHARGUMENTS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

bool msamp::isOwnBuffer(Value root) {
  if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(root.getDefiningOp()))
    return true;
  auto arg = dyn_cast<BlockArgument>(root);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), kFreshArgAttr);
}

namespace {

/// Whether operand `index` of `call` is an allocation of the caller that no
/// other operand of the call reaches.
bool passesFreshBuffer(func::CallOp call, unsigned index) {
  Value operand = call.getOperand(index);
  if (!operand.getDefiningOp<memref::AllocOp>())
    return false;
  for (auto [other, value] : llvm::enumerate(call.getOperands()))
    if (other != index && isa<BaseMemRefType>(value.getType()) &&
        msamp::getViewRoot(value) == operand)
      return false;
  return true;
}

struct MarkFreshArgumentsPass
    : msamp::impl::MSAMPGPUMarkFreshArgumentsBase<MarkFreshArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    msamp::CallSites callsOf = msamp::collectCallSites(module, symbols);
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      // Only a private function is called from nowhere else.
      if (!func.isPrivate())
        continue;
      auto calls = callsOf.find(func);
      if (calls == callsOf.end())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<MemRefType>(func.getArgument(i).getType()) &&
            llvm::all_of(calls->second, [&](func::CallOp call) {
              return passesFreshBuffer(call, i);
            })) {
          func.setArgAttr(i, msamp::kFreshArgAttr, unit);
          ++numFresh;
        }
    }
  }
};

} // namespace
