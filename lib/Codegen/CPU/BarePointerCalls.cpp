//===- BarePointerCalls.cpp - --msamp-bare-pointer-calls --------*- C++ -*-===//
//
// The outlined blocks and loop nests take every buffer they touch as a
// memref argument, and convert-func-to-llvm passes a memref as its whole
// descriptor, one scalar per field (2 pointers, the offset, rank sizes and
// rank strides). A layer's backward block takes hundreds of buffers: each
// of its calls in the straight-line @train_step carried ~1,300 scalars, and
// every pass from the LLVM conversion to instruction selection paid for them
// per layer, some faster than linearly (issue 19). Where a function's
// memref types are fully static (shape, strides, offset), the descriptor's
// other fields are constants of the type: the function is given the
// `llvm.bareptr` attribute, so that convert-func-to-llvm passes one pointer
// per buffer and rebuilds the static descriptor inside the callee (LLVM then
// folds it, the loop nests see the same constant shapes as before).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPBAREPOINTERCALLS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The attribute convert-func-to-llvm reads on a function (and on the callee
/// of a call) to use the bare pointer calling convention for it alone; MLIR
/// spells it only inside its FuncToLLVM library.
constexpr StringLiteral kBarePtrAttrName = "llvm.bareptr";

/// Whether every memref argument of this function type is fully static, so
/// that one pointer and the type rebuild its descriptor, and no result is a
/// memref: a returned buffer the caller frees needs its allocated pointer,
/// which a bare pointer (the aligned one) is not.
bool takesOnlyStaticMemRefs(FunctionType type) {
  auto isStatic = [](Type t) {
    auto memref = dyn_cast<BaseMemRefType>(t);
    return !memref || LLVMTypeConverter::canConvertToBarePtr(memref);
  };
  return llvm::all_of(type.getInputs(), isStatic) &&
         llvm::none_of(type.getResults(), llvm::IsaPred<BaseMemRefType>);
}

/// The buffer `value` is a view of, through view-like ops.
Value viewRoot(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      value = view.getViewSource();
    else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op))
      value = meta.getSource();
    else
      break;
  }
  return value;
}

/// Whether `func` may free or reallocate a buffer it did not allocate: the
/// bare pointer is the descriptor's aligned pointer, which is the allocated
/// pointer (the one to free) only for buffers allocated without alignment.
bool mayFreeForeignBuffer(func::FuncOp func) {
  auto foreign = [](Value buffer) {
    return !isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
        viewRoot(buffer).getDefiningOp());
  };
  WalkResult result = func.walk([&](Operation *op) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && foreign(dealloc.getMemref()))
      return WalkResult::interrupt();
    if (auto realloc = dyn_cast<memref::ReallocOp>(op);
        realloc && foreign(realloc.getSource()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

struct MSAMPBarePointerCallsPass
    : ::mlir::msamp::impl::MSAMPBarePointerCallsBase<
          MSAMPBarePointerCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Functions referenced other than as a direct call's callee (e.g. by
    // func.constant) keep the descriptor convention: an indirect call
    // cannot see the attribute. One walk of the module for all of them.
    llvm::DenseSet<StringAttr> referenced;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&module.getBodyRegion())) {
      for (const SymbolTable::SymbolUse &use : *uses)
        if (!isa<func::CallOp>(use.getUser()))
          referenced.insert(use.getSymbolRef().getRootReference());
    } else {
      // Unknown ops that may hold symbols: leave everything as it is.
      return markAllAnalysesPreserved();
    }

    bool changed = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPrivate() ||
          func->hasAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName()) ||
          referenced.contains(func.getSymNameAttr()) ||
          !takesOnlyStaticMemRefs(func.getFunctionType()) ||
          mayFreeForeignBuffer(func))
        continue;
      func->setAttr(kBarePtrAttrName, UnitAttr::get(&getContext()));
      ++numBarePointer;
      changed = true;
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
