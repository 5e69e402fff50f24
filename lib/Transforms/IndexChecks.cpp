//===- IndexChecks.cpp - valid ranges of the index inputs -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// --msamp-index-checks: every integer input or target of @train_step that
// the graph uses as an index gets a range check, recorded as the module
// attribute msamp.index_checks and emitted by msamp-emit-entry-point as a
// call of msamp_rt_check_index before the step runs. The check sits at the
// step's entry, before anything is computed, so a refused step leaves every
// state buffer as it was (docs/Design.md "Bad data and bad updates").
//
// The range comes from how the graph reads the value, in the linalg.generic
// bodies it reaches through reshapes, slices and copies: a gather
// (tensor.extract with the value as a coordinate) bounds it by the gathered
// dimension, a one-hot compare with a loop index (the generators' and the
// ONNX importer's forms) or with an iota tensor (torch's arange) by that
// loop's extent. An equality compare with a constant outside that range is
// the loss's ignore_index, which stays valid.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/IndexReads.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPINDEXCHECKS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// What the reads of one argument say about its valid values.
struct IndexFacts {
  std::optional<int64_t> upper;  // the tightest bound found
  SmallVector<int64_t> compared; // constants it is compared to for equality

  void bound(int64_t extent) {
    if (extent >= 0 && extent != ShapedType::kDynamic)
      upper = upper ? std::min(*upper, extent) : extent;
  }
};

/// Follows the scalar `v` (an element of the argument, possibly cast,
/// clamped or selected) through the body of `gen` and records its reads.
void visitElement(Value v, linalg::GenericOp gen, IndexFacts &facts,
                  llvm::SmallPtrSetImpl<Value> &seen) {
  if (!seen.insert(v).second)
    return;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp, arith::MaxSIOp, arith::MinSIOp>(
            user)) {
      visitElement(user->getResult(0), gen, facts, seen);
    } else if (auto select = dyn_cast<arith::SelectOp>(user)) {
      if (use.getOperandNumber() != 0) // a value, not the condition
        visitElement(select.getResult(), gen, facts, seen);
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
      if (use.getOperandNumber() == 0)
        continue;
      unsigned dim = use.getOperandNumber() - 1;
      facts.bound(extract.getTensor().getType().getDimSize(dim));
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(user)) {
      if (cmp.getPredicate() != arith::CmpIPredicate::eq &&
          cmp.getPredicate() != arith::CmpIPredicate::ne)
        continue;
      Value other = cmp.getOperand(1 - use.getOperandNumber());
      if (std::optional<int64_t> extent = oneHotExtentOf(other, gen))
        facts.bound(*extent);
      else if (std::optional<int64_t> c = constantOf(other, gen))
        facts.compared.push_back(*c);
    }
  }
}

/// Collects the facts of argument `arg`: its reads in every generic it
/// reaches through view-like ops and through generics that copy it.
IndexFacts analyze(BlockArgument arg) {
  IndexFacts facts;
  SmallVector<Value> worklist = {arg};
  llvm::SmallPtrSet<Value, 8> views;
  while (!worklist.empty()) {
    Value view = worklist.pop_back_val();
    if (!views.insert(view).second)
      continue;
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
              tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(
              user)) {
        if (use.getOperandNumber() == 0)
          worklist.push_back(user->getResult(0));
        continue;
      }
      auto gen = dyn_cast<linalg::GenericOp>(user);
      if (!gen || !gen.isDpsInput(&use))
        continue;
      BlockArgument element = gen.getMatchingBlockArgument(&use);
      llvm::SmallPtrSet<Value, 8> seen;
      visitElement(element, gen, facts, seen);
      // A transpose, broadcast or integer cast yields the element itself.
      auto yield = cast<linalg::YieldOp>(gen.getBody()->getTerminator());
      for (auto [i, yielded] : llvm::enumerate(yield.getOperands()))
        if (stripIndexCasts(yielded) == element &&
            isa<IntegerType>(yielded.getType()))
          worklist.push_back(gen->getResult(i));
    }
  }
  return facts;
}

struct MSAMPIndexChecksPass
    : ::mlir::msamp::impl::MSAMPIndexChecksBase<MSAMPIndexChecksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = getTrainStepOrError(module, getArgument());
    if (!func)
      return signalPassFailure();
    Builder b(module.getContext());
    SmallVector<Attribute> checks;
    for (BlockArgument arg : func.getArguments()) {
      StringRef role = getArgRole(func, arg.getArgNumber());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if ((role != kRoleInput && role != kRoleTarget) || !type ||
          !type.getElementType().isSignlessInteger())
        continue;
      IndexFacts facts = analyze(arg);
      if (!facts.upper)
        continue;
      SmallVector<NamedAttribute> entry = {
          b.getNamedAttr("arg", b.getI64IntegerAttr(arg.getArgNumber())),
          b.getNamedAttr("name",
                         b.getStringAttr(getArgName(func, arg.getArgNumber()))),
          b.getNamedAttr("rank", b.getI64IntegerAttr(type.getRank())),
          b.getNamedAttr("type", TypeAttr::get(type.getElementType())),
          b.getNamedAttr("lower", b.getI64IntegerAttr(0)),
          b.getNamedAttr("upper", b.getI64IntegerAttr(*facts.upper))};
      // The loss's ignore_index: compared for equality, outside the range.
      for (int64_t c : facts.compared)
        if (c < 0 || c >= *facts.upper) {
          entry.push_back(
              b.getNamedAttr("ignore_index", b.getI64IntegerAttr(c)));
          break;
        }
      checks.push_back(b.getDictionaryAttr(entry));
    }
    if (checks.empty())
      module->removeAttr(kIndexChecksAttr);
    else
      module->setAttr(kIndexChecksAttr, b.getArrayAttr(checks));
  }
};

} // namespace
