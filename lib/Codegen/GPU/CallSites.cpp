//===- CallSites.cpp - the calls of each function a module defines --------===//
//
// Part of the msamp project. See CallSites.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/CallSites.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

msamp::CallSites msamp::collectCallSites(ModuleOp module,
                                         SymbolTable &symbols) {
  CallSites calls;
  module.walk([&](func::CallOp call) {
    if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        callee && !callee.isExternal())
      calls[callee].push_back(call);
  });
  return calls;
}
