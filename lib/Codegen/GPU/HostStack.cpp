//===- HostStack.cpp - Buffers on the host step's own stack ---------------===//
//
// Part of the msamp project. See HostStack.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/HostStack.h"
#include "MSAMP/Codegen/GPU/CallSites.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

msamp::HostStack::HostStack(ModuleOp module) {
  SymbolTable symbols(module);
  CallSites callsOf = collectCallSites(module, symbols);
  // Callers first would do, but the module's functions are few: repeat
  // until nothing changes (a chain of calls adds one level per round).
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto &[op, calls] : callsOf) {
      auto callee = cast<func::FuncOp>(op);
      for (BlockArgument arg : callee.getArguments()) {
        if (arguments.contains(arg) || !isa<BaseMemRefType>(arg.getType()))
          continue;
        if (llvm::all_of(calls, [&](func::CallOp call) {
              return contains(call.getOperand(arg.getArgNumber()));
            })) {
          arguments.insert(arg);
          changed = true;
        }
      }
    }
  }
}

bool msamp::HostStack::contains(Value buffer) const {
  return buffer.getDefiningOp<memref::AllocaOp>() || arguments.contains(buffer);
}
