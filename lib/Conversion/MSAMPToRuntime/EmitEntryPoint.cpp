//===- EmitEntryPoint.cpp - packed C entry point of @train_step --*- C++
//-*-===//
//
// After lowering to the LLVM dialect, `_mlir_ciface_train_step` takes one
// pointer per argument (to its memref descriptor), so its arity depends on
// the graph. The runtime needs one signature for every graph:
//
//   void msamp_train_step_packed(void **descriptors);  // N+1+M pointers
//   int64_t msamp_train_step_abi_version(void);
//   int64_t msamp_train_step_num_args(void);           // N+1+M
//
// The descriptors are in manifest argument order (the N entries of "state"
// and "inputs", by "index"), then the 0-d f32 loss output, then one 0-d f32
// output per "metric" of the manifest's "outputs" (M of them, in that order;
// none for steps compiled without --msamp-grad-stats), as
// convert-msamp-to-runtime appended them (docs/RuntimeABI.md 11).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPEMITENTRYPOINT
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {
struct MSAMPEmitEntryPointPass
    : ::mlir::msamp::impl::MSAMPEmitEntryPointBase<MSAMPEmitEntryPointPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto target =
        module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_train_step");
    if (!target) {
      module.emitError("no _mlir_ciface_train_step: lower the train step to "
                       "the LLVM dialect with its C interface first");
      return signalPassFailure();
    }
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    unsigned numArgs = target.getNumArguments();
    for (Type t : target.getArgumentTypes())
      if (t != ptr) {
        target.emitError("expected only pointer arguments in the C interface");
        return signalPassFailure();
      }

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    Location loc = module.getLoc();
    auto packed =
        LLVM::LLVMFuncOp::create(b, loc, "msamp_train_step_packed",
                                 LLVM::LLVMFunctionType::get(voidType, {ptr}));
    Block *entry = packed.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> args;
    for (unsigned i = 0; i < numArgs; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    LLVM::CallOp::create(b, loc, target, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    auto constant = [&](StringRef name, int64_t value) {
      b.setInsertionPointToEnd(module.getBody());
      auto fn = LLVM::LLVMFuncOp::create(b, loc, name,
                                         LLVM::LLVMFunctionType::get(i64, {}));
      Block *body = fn.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      Value v = LLVM::ConstantOp::create(b, loc, i64, value);
      LLVM::ReturnOp::create(b, loc, v);
    };
    constant("msamp_train_step_abi_version", msamp::kRuntimeABIVersion);
    constant("msamp_train_step_num_args", numArgs);

    // The msamp.* argument attributes served the compiler and the manifest;
    // LLVM IR translation does not know them.
    module.walk([&](LLVM::LLVMFuncOp fn) {
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
        SmallVector<NamedAttribute> kept;
        for (NamedAttribute attr : fn.getArgAttrDict(i)
                                       ? fn.getArgAttrDict(i).getValue()
                                       : ArrayRef<NamedAttribute>{})
          if (!attr.getName().getValue().starts_with("msamp."))
            kept.push_back(attr);
        fn.setArgAttrs(i, kept);
      }
    });
  }
};
} // namespace
