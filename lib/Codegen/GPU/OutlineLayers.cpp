//===- OutlineLayers.cpp - --msamp-gpu-outline-layers ---------------------===//
//
// Part of the msamp project.
//
// On --target cuda the step's host code is every launch and runtime call of
// every layer, one straight line that grows with depth, and everything from
// gpu-to-llvm to LLVM's code generation paid for it per layer (issue 19).
// The kernels themselves are already compiled once (msamp-gpu-dedupe-kernels)
// and merged per layer (RepeatGroups.h), so after the static arena the
// layers differ only in the buffers they touch: views of one arena at
// different constant offsets. Here those offsets become the only
// difference, carried as values, and the CPU outliner (on buffers) makes
// each copy a call of one function.
//
//  1. Index arithmetic on constants is folded (the tiled loops' bounds), so
//     that no run of it becomes an argument or a function of its own.
//  2. Every view-like op (arena views, reshapes, casts) is cloned before
//     each top-level op that reads it, users first so that whole chains are
//     cloned: a layer reads no view that another op defined, only the
//     arena's base and the step's arguments. Each clone of an arena view
//     takes its offset from its own arith.index_cast of an i64 constant at
//     the step's entry: not a constant, so the outliner passes it as an
//     argument instead of cloning it in, and one per view, so that two
//     views of one offset in a layer do not make it differ from the others.
//  3. The multi-tensor calls' tables of buffer addresses span the layers;
//     each store into one takes its row index from such a value too (one
//     per row), so that a layer's rows go into its function.
//  4. msamp-outline-repeated-blocks on buffers outlines the tandem repeats.
//  5. The offsets and row indices left in the step become constants again.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferViews.h"
#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUOUTLINELAYERS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether `op` is a view of a buffer defined at the top of `body` (an
/// arena's base) at a constant offset.
bool isArenaView(Operation *op, Block &body) {
  auto view = dyn_cast<memref::ViewOp>(op);
  if (!msamp::constantByteShift(view))
    return false;
  Operation *source = view.getSource().getDefiningOp();
  return source && source->getBlock() == &body;
}

bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

/// Marks the i64 constants of the values this pass passes to the layers
/// (offsets, table rows), so that only those become constants again.
constexpr llvm::StringLiteral kLayerArgumentMarker = "msamp.layer_argument";

/// The value of an index `op` made by markedIndex, if it is one.
std::optional<int64_t> markedValue(Operation *op) {
  auto indexCast = dyn_cast<arith::IndexCastOp>(op);
  if (!indexCast)
    return std::nullopt;
  auto constant = indexCast.getIn().getDefiningOp<arith::ConstantOp>();
  if (!constant || !constant->hasAttr(kLayerArgumentMarker))
    return std::nullopt;
  return cast<IntegerAttr>(constant.getValue()).getInt();
}

struct OutlineLayersPass
    : msamp::impl::MSAMPGPUOutlineLayersBase<OutlineLayersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = msamp::findFunctionOfKind(module, msamp::kTrainStep);
    if (!step || step.isExternal() || !step.getBody().hasOneBlock())
      return markAllAnalysesPreserved();
    Block &body = step.getBody().front();
    foldConstantArithmetic(body);
    rematerializeViews(body);
    opaqueTableRows(body);
    llvm::DenseSet<Operation *> before;
    for (auto fn : module.getOps<func::FuncOp>())
      before.insert(fn);
    OpPassManager outline(ModuleOp::getOperationName());
    msamp::MSAMPOutlineRepeatedBlocksOptions onBuffers;
    onBuffers.onBuffers = true;
    outline.addPass(msamp::createMSAMPOutlineRepeatedBlocks(onBuffers));
    if (failed(runPipeline(outline, module)))
      return signalPassFailure();
    restoreConstantOffsets(body);
    if (!optNone)
      return;
    Builder b(&getContext());
    for (auto fn : module.getOps<func::FuncOp>())
      if (!before.contains(fn))
        fn->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline"),
                                    b.getStringAttr("optnone")}));
  }

  void foldConstantArithmetic(Block &body) {
    OpBuilder b(&getContext());
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (!isa_and_nonnull<arith::ArithDialect>(op.getDialect()) ||
          op.hasTrait<OpTrait::ConstantLike>() || op.getNumResults() != 1 ||
          !llvm::all_of(op.getOperands(), isConstant))
        continue;
      SmallVector<OpFoldResult> folded;
      if (failed(op.fold(folded)) || folded.size() != 1)
        continue;
      auto attr = dyn_cast<Attribute>(folded.front());
      if (!attr)
        continue;
      b.setInsertionPoint(&op);
      Operation *constant = op.getDialect()->materializeConstant(
          b, attr, op.getResult(0).getType(), op.getLoc());
      if (!constant)
        continue;
      op.getResult(0).replaceAllUsesWith(constant->getResult(0));
      op.erase();
    }
  }

  void rematerializeViews(Block &body) {
    SmallVector<Operation *> views;
    for (Operation &op : body)
      if (msamp::isBufferView(&op))
        views.push_back(&op);
    OpBuilder b(&getContext());
    for (Operation *view : llvm::reverse(views)) {
      bool arena = isArenaView(view, body);
      llvm::SetVector<Operation *> users;
      for (Operation *user : view->getUsers())
        users.insert(body.findAncestorOpInBlock(*user));
      // Already its one user's own (a cast right before a call).
      if (!arena && users.size() == 1 && view->getNextNode() == users[0])
        continue;
      for (Operation *user : users) {
        b.setInsertionPoint(user);
        Operation *clone = b.clone(*view);
        if (arena)
          cast<memref::ViewOp>(clone).getByteShiftMutable().assign(
              layerOffset(cast<memref::ViewOp>(view), b));
        view->getResult(0).replaceUsesWithIf(
            clone->getResult(0), [&](OpOperand &use) {
              return body.findAncestorOpInBlock(*use.getOwner()) == user;
            });
      }
      SmallVector<Value> operands(view->getOperands());
      view->erase();
      for (Value operand : operands)
        if (isConstant(operand) && operand.use_empty())
          operand.getDefiningOp()->erase();
    }
  }

  /// The multi-tensor calls' tables (AdamGroupToRuntime.cpp: a row of
  /// addresses and sizes per tensor, stored by host code into a stack
  /// buffer) span the layers: a layer's rows differ from the next layer's
  /// only in their row index. Each store's row index becomes a value of its
  /// own at the step's entry, one per row of each table, so that a layer's
  /// stores are equal text too and become a call with the row indices as
  /// arguments.
  void opaqueTableRows(Block &body) {
    OpBuilder b(&getContext());
    for (auto table : body.getOps<memref::AllocaOp>()) {
      llvm::DenseMap<int64_t, Value> rows;
      for (Operation *user : llvm::make_early_inc_range(table->getUsers())) {
        auto store = dyn_cast<memref::StoreOp>(user);
        if (!store || store->getBlock() != &body ||
            store.getMemRef() != table.getResult() ||
            store.getIndices().empty())
          continue;
        auto row =
            store.getIndices().front().getDefiningOp<arith::ConstantOp>();
        if (!row)
          continue;
        int64_t index = cast<IntegerAttr>(row.getValue()).getInt();
        Value &opaque = rows[index];
        if (!opaque) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&body);
          opaque = markedIndex(b, table.getLoc(), index);
        }
        store.getIndicesMutable()[0].assign(opaque);
        if (row->use_empty())
          row->erase();
      }
    }
  }

  /// An index value equal to `value` that the outliner passes as an
  /// argument instead of cloning it (restoreConstantOffsets folds it back).
  static Value markedIndex(OpBuilder &b, Location loc, int64_t value) {
    auto wide = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
    wide->setAttr(kLayerArgumentMarker, b.getUnitAttr());
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), wide);
  }

  /// A new index value at the step's entry, right after `view`'s arena base,
  /// equal to its constant offset.
  Value layerOffset(memref::ViewOp view, OpBuilder &b) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(view.getSource().getDefiningOp());
    return markedIndex(b, view.getLoc(), *msamp::constantByteShift(view));
  }

  /// The offsets and row indices the step passes to the layers (and those
  /// no repeat took) as index constants, one per value.
  void restoreConstantOffsets(Block &body) {
    SmallVector<std::pair<Operation *, int64_t>> marked;
    for (Operation &op : body)
      if (std::optional<int64_t> value = markedValue(&op))
        marked.push_back({&op, *value});
    // The constants first, at the entry: a marked op may be the first op.
    OpBuilder b(&getContext());
    b.setInsertionPointToStart(&body);
    llvm::DenseMap<int64_t, Value> constants;
    for (auto [op, value] : marked)
      if (Value &constant = constants[value]; !constant)
        constant = arith::ConstantIndexOp::create(b, op->getLoc(), value);
    for (auto [op, value] : marked) {
      Operation *wide = op->getOperand(0).getDefiningOp();
      op->getResult(0).replaceAllUsesWith(constants.lookup(value));
      op->erase();
      if (wide->use_empty())
        wide->erase();
    }
  }
};

} // namespace
