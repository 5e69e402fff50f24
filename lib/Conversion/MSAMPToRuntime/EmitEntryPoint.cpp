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
// Before the step runs, the packed entry point checks every index input the
// module's msamp.index_checks attribute lists (--msamp-index-checks) with
// msamp_rt_check_index. A failed check has recorded the runtime's sticky
// error (input, value, valid range); the entry point then returns without
// calling the step, so nothing (no param, moment or scale) is updated.
// The checks are a function of their own,
//
//   int32_t msamp_train_step_check_inputs(void **descriptors);  // 0: valid
//
// which a data-parallel session calls before the step, so that every rank
// learns of a bad index on any rank before any enters the step's
// collectives (docs/RuntimeABI.md 11.1).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/TrainStep/TrainStep.h"

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

  /// At the builder's position in `checker`: one msamp_rt_check_index call
  /// per entry of msamp.index_checks (on the argument's ranked descriptor,
  /// wrapped as an unranked memref), returning the status of the first
  /// failure. Leaves the builder where every check has passed.
  LogicalResult emitIndexChecks(OpBuilder &b, ModuleOp module,
                                LLVM::LLVMFuncOp checker,
                                ArrayRef<Value> args) {
    auto checks = module->getAttrOfType<ArrayAttr>(msamp::kIndexChecksAttr);
    if (!checks)
      return success();
    module->removeAttr(msamp::kIndexChecksAttr);
    MLIRContext *ctx = module.getContext();
    Location loc = checker.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    auto i64 = IntegerType::get(ctx, 64);
    LLVM::LLVMFuncOp checkFn = msamp::getOrInsertHostRuntimeDecl(
        module, msamp::HostRuntimeFn::CheckIndex, loc);
    auto unranked = LLVM::LLVMStructType::getLiteral(ctx, {i64, ptr});
    Block *refuse = nullptr;
    for (auto [n, attr] : llvm::enumerate(checks)) {
      auto check = dyn_cast<DictionaryAttr>(attr);
      auto arg = check ? check.getAs<IntegerAttr>("arg") : nullptr;
      auto name = check ? check.getAs<StringAttr>("name") : nullptr;
      auto rank = check ? check.getAs<IntegerAttr>("rank") : nullptr;
      auto type = check ? check.getAs<TypeAttr>("type") : nullptr;
      auto lower = check ? check.getAs<IntegerAttr>("lower") : nullptr;
      auto upper = check ? check.getAs<IntegerAttr>("upper") : nullptr;
      auto ignore = check ? check.getAs<IntegerAttr>("ignore_index") : nullptr;
      if (!arg || !name || !rank || !type || !lower || !upper ||
          arg.getInt() < 0 || arg.getInt() >= static_cast<int64_t>(args.size()))
        return module.emitError("malformed ")
               << msamp::kIndexChecksAttr << " entry " << n << ": " << attr;
      int32_t dtype = msamp::getRuntimeDTypeCode(type.getValue());
      auto c64 = [&](int64_t v) -> Value {
        return LLVM::ConstantOp::create(b, loc, i64, v);
      };
      auto c32 = [&](int64_t v) -> Value {
        return LLVM::ConstantOp::create(b, loc, i32, v);
      };
      Value memref = LLVM::UndefOp::create(b, loc, unranked);
      memref = LLVM::InsertValueOp::create(b, loc, memref, c64(rank.getInt()),
                                           ArrayRef<int64_t>{0});
      memref = LLVM::InsertValueOp::create(b, loc, memref, args[arg.getInt()],
                                           ArrayRef<int64_t>{1});
      Value slot = LLVM::AllocaOp::create(b, loc, ptr, unranked, c64(1));
      LLVM::StoreOp::create(b, loc, memref, slot);
      std::string text = name.getValue().str();
      text.push_back('\0');
      Value namePtr = LLVM::createGlobalString(
          loc, b, "msamp_index_check_name_" + std::to_string(n), text,
          LLVM::Linkage::Internal);
      Value status =
          LLVM::CallOp::create(b, loc, checkFn,
                               ValueRange{slot, c32(dtype), c64(lower.getInt()),
                                          c64(upper.getInt()),
                                          c64(ignore ? ignore.getInt() : 0),
                                          c32(ignore ? 1 : 0), namePtr})
              .getResult();
      Value failed =
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, status, c32(0));
      Block *current = b.getInsertionBlock();
      if (!refuse) {
        refuse = b.createBlock(&checker.getBody(), {}, {i32}, {loc});
        LLVM::ReturnOp::create(b, loc, refuse->getArgument(0));
      }
      Block *next = b.createBlock(&checker.getBody());
      b.setInsertionPointToEnd(current);
      LLVM::CondBrOp::create(b, loc, failed, refuse, ValueRange{status}, next,
                             ValueRange{});
      b.setInsertionPointToStart(next);
    }
    return success();
  }

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
    auto i32 = IntegerType::get(ctx, 32);
    // The descriptors of `fn`'s packed argument, loaded at the builder.
    auto loadArgs = [&](LLVM::LLVMFuncOp fn) {
      SmallVector<Value> args;
      for (unsigned i = 0; i < numArgs; ++i) {
        Value slot = LLVM::GEPOp::create(
            b, loc, ptr, ptr, fn.getArgument(0),
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
      }
      return args;
    };
    auto checker =
        LLVM::LLVMFuncOp::create(b, loc, msamp::kCheckInputsFunction,
                                 LLVM::LLVMFunctionType::get(i32, {ptr}));
    b.setInsertionPointToStart(checker.addEntryBlock(b));
    if (failed(emitIndexChecks(b, module, checker, loadArgs(checker))))
      return signalPassFailure();
    LLVM::ReturnOp::create(
        b, loc, LLVM::ConstantOp::create(b, loc, i32, 0).getResult());

    b.setInsertionPointToEnd(module.getBody());
    auto packed =
        LLVM::LLVMFuncOp::create(b, loc, "msamp_train_step_packed",
                                 LLVM::LLVMFunctionType::get(voidType, {ptr}));
    b.setInsertionPointToStart(packed.addEntryBlock(b));
    Value status =
        LLVM::CallOp::create(b, loc, checker, ValueRange{packed.getArgument(0)})
            .getResult();
    Value refused = LLVM::ICmpOp::create(
        b, loc, LLVM::ICmpPredicate::ne, status,
        LLVM::ConstantOp::create(b, loc, i32, 0).getResult());
    Block *entry = b.getInsertionBlock();
    Block *refuse = b.createBlock(&packed.getBody());
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    Block *run = b.createBlock(&packed.getBody());
    b.setInsertionPointToEnd(entry);
    LLVM::CondBrOp::create(b, loc, refused, refuse, run);
    b.setInsertionPointToStart(run);
    LLVM::CallOp::create(b, loc, target, loadArgs(packed));
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
    // All of a function's argument attributes are set at once: setting
    // them one argument at a time rebuilt the whole array each time,
    // quadratic in the step's arguments (2,578 at 24 layers, issue 19).
    module.walk([&](LLVM::LLVMFuncOp fn) {
      ArrayAttr all = fn.getArgAttrsAttr();
      if (!all)
        return;
      SmallVector<DictionaryAttr> kept;
      for (Attribute dict : all) {
        SmallVector<NamedAttribute> attrs;
        for (NamedAttribute attr : cast<DictionaryAttr>(dict))
          if (!attr.getName().getValue().starts_with("msamp."))
            attrs.push_back(attr);
        kept.push_back(DictionaryAttr::get(fn.getContext(), attrs));
      }
      fn.setAllArgAttrs(kept);
    });
  }
};
} // namespace
