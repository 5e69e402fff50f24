//===- OutlineLoopNests.cpp - one function per distinct loop nest ---------===//
//
// After linalg -> loops the whole train step was one function: an N-layer
// model gave LLVM one function with N times the loop nests, and its code
// generator (register allocation, loop strength reduction, instruction
// selection) grew faster than linearly in that size (12 layers: 25x the time
// of one). Each outermost loop nest becomes a call to its own function
// instead, and nests that differ only in the buffers they touch share one:
// every layer after the first then adds calls, not code.
//
// Identity is the nest's function, the captured values as its arguments and
// the captured constants cloned in, compared as IR (structuralFingerprint:
// what its generic-form text decided, without printing), so shapes, layouts
// (static strides and offsets are part of memref types), element types,
// attributes and constants all take part, and values are numbered within
// the function. Linear in the nest's size.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Codegen/TandemRepeats.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPOUTLINELOOPNESTS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The operation that owns `value`'s definition: its defining op, or the op
/// whose region holds the block that declares it.
Operation *definingScope(Value value) {
  if (Operation *op = value.getDefiningOp())
    return op;
  return cast<BlockArgument>(value).getOwner()->getParentOp();
}

/// Values `nest` uses that are defined outside it, in first-use order (the
/// order of the outlined function's arguments, so it is deterministic).
llvm::SetVector<Value> capturedValues(Operation *nest) {
  llvm::SetVector<Value> captured;
  nest->walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!nest->isAncestor(definingScope(operand)))
        captured.insert(operand);
  });
  return captured;
}

bool isClonableConstant(Value value) {
  Operation *op = value.getDefiningOp();
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

struct MSAMPOutlineLoopNestsPass
    : ::mlir::msamp::impl::MSAMPOutlineLoopNestsBase<
          MSAMPOutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      outlineNestsOf(func, symbols);
  }

  /// Fingerprint of a nest's function -> the function that holds it, across the
  /// module: the layers msamp-outline-repeated-blocks made functions share
  /// their nests too (a forward and a backward block both scale by 2).
  llvm::StringMap<func::FuncOp> byFingerprint;

  void outlineNestsOf(func::FuncOp func, SymbolTable &symbols) {
    SmallVector<Operation *> nests;
    for (Block &block : func.getBody())
      for (Operation &op : block)
        if (isa<scf::ForOp, scf::ParallelOp>(op))
          nests.push_back(&op);
    if (nests.empty())
      return;

    Block::iterator insertionPoint = std::next(func->getIterator());
    int64_t distinct = 0;
    OpBuilder builder(&getContext());
    for (Operation *nest : nests) {
      llvm::SetVector<Value> captured = capturedValues(nest);
      SmallVector<Value> arguments;
      SmallVector<Type> argumentTypes;
      for (Value value : captured)
        if (!isClonableConstant(value)) {
          arguments.push_back(value);
          argumentTypes.push_back(value.getType());
        }

      // The candidate function, built detached from the module.
      Location loc = nest->getLoc();
      auto type =
          builder.getFunctionType(argumentTypes, nest->getResultTypes());
      auto outlined = func::FuncOp::create(loc, "nest", type);
      Block *body = outlined.addEntryBlock();
      builder.setInsertionPointToStart(body);
      IRMapping mapping;
      for (auto [value, argument] :
           llvm::zip_equal(arguments, body->getArguments()))
        mapping.map(value, argument);
      for (Value value : captured)
        if (isClonableConstant(value))
          builder.clone(*value.getDefiningOp(), mapping);
      Operation *clone = builder.clone(*nest, mapping);
      func::ReturnOp::create(builder, loc, clone->getResults());

      func::FuncOp callee;
      std::string fingerprint;
      if (dedupe) {
        fingerprint = msamp::structuralFingerprint(outlined);
        callee = byFingerprint.lookup(fingerprint);
      }
      if (callee) {
        outlined.erase();
      } else {
        callee = outlined;
        callee.setPrivate();
        // LLVM's inliner would put a single-use function back. Internal
        // linkage: not exported from train_step.so, and LLVM sees every
        // call site (interprocedural constant propagation of the
        // descriptors' static fields).
        callee->setAttr("passthrough", builder.getArrayAttr(
                                           builder.getStringAttr("noinline")));
        callee->setAttr(
            "llvm.linkage",
            LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal));
        callee.setSymName(
            (func.getSymName() + "_nest_" + Twine(distinct)).str());
        ++distinct;
        // Right after `func`, in order of first use.
        symbols.insert(callee, insertionPoint);
        if (dedupe)
          byFingerprint[fingerprint] = callee;
      }

      builder.setInsertionPoint(nest);
      auto call = func::CallOp::create(builder, loc, callee, arguments);
      nest->replaceAllUsesWith(call.getResults());
      nest->erase();
    }

    int64_t shared = static_cast<int64_t>(nests.size()) - distinct;
    numOutlined += nests.size();
    numDeduplicated += shared;
    remark::passed(func.getLoc(), msamp::remarkOptions("outline-loop-nests",
                                                       "loop-nests-outlined"))
        << remark::add("{0} loop nests of @{1} outlined as {2} functions "
                       "({3} deduplicated: structurally identical to an "
                       "earlier nest)",
                       nests.size(), func.getSymName(), distinct, shared);
  }
};

} // namespace
