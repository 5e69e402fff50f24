//===- FinalizeRuntimeCalls.cpp - calls to canonical runtime decls -*- C++
//-*-===//
//
// convert-msamp-to-runtime calls typed declarations (one per operand-type
// signature) so that bufferization and buffer deallocation see ordinary
// memref uses. This pass, run after deallocation, points every such call at
// the single declaration per runtime symbol (memref<*xi8> parameters, the
// llvm.emit_c_interface ABI of docs/RuntimeABI.md) and erases the typed ones.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFINALIZERUNTIMECALLS
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPFinalizeRuntimeCallsPass
    : ::mlir::msamp::impl::MSAMPFinalizeRuntimeCallsBase<
          MSAMPFinalizeRuntimeCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<RuntimeFn> byName;
    for (const RuntimeSymbol &symbol : getRuntimeSymbols())
      byName[symbol.name] = symbol.fn;

    SmallVector<func::FuncOp> typed;
    for (auto decl : module.getOps<func::FuncOp>())
      if (decl->hasAttr(kRuntimeSymbolAttr))
        typed.push_back(decl);

    auto i8 = UnrankedMemRefType::get(IntegerType::get(&getContext(), 8),
                                      /*memorySpace=*/0);
    WalkResult result = module.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !callee->hasAttr(kRuntimeSymbolAttr))
        return WalkResult::advance();
      StringRef name =
          callee->getAttrOfType<StringAttr>(kRuntimeSymbolAttr).getValue();
      auto it = byName.find(name);
      if (it == byName.end()) {
        call.emitError("unknown runtime symbol '") << name << "'";
        return WalkResult::interrupt();
      }
      func::FuncOp decl = getOrInsertRuntimeDecl(module, it->second);
      OpBuilder b(call);
      SmallVector<Value> operands;
      for (Value v : call.getOperands()) {
        if (isa<UnrankedMemRefType>(v.getType()) && v.getType() != i8)
          v = UnrealizedConversionCastOp::create(b, call.getLoc(), i8, v)
                  .getResult(0);
        operands.push_back(v);
      }
      func::CallOp::create(b, call.getLoc(), decl, operands);
      call.erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (func::FuncOp decl : typed)
      decl.erase();
  }
};
} // namespace
