//===- ComputedIndexChecks.cpp - checks of indices the graph computes -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// --msamp-computed-index-checks: an index the graph computes itself
// (position ids from a cumulative sum, ids shifted by an offset, the
// result of a gather), like an integer buffer (stored position ids), is not
// a step input, so the entry-point checks of --msamp-index-checks never see
// it. Each linalg.generic that reads such a
// tensor as an index gets an msamp.check_index of the tensor right before
// it, naming the generic's location, and its tensor.extract coordinates are
// clamped into the gathered dimension: a bad value records an error and
// reads a valid row instead of memory outside the table. The step runs to
// its end (every rank keeps taking part in the collectives) and the
// session refuses it and restores the state it copied before the step.
//
// Only reads that go from the element to the index through integer casts
// are checked: a graph that clamps or selects the index itself (the ONNX
// importer's Gather, whose negative indices count from the end) defines
// its own out-of-range behaviour.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/IndexReads.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPCOMPUTEDINDEXCHECKS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// How one generic reads one integer operand as an index.
struct IndexUse {
  std::optional<int64_t> upper;     // the tightest bound found
  SmallVector<int64_t> compared;    // constants compared for equality
  SmallVector<OpOperand *> gathers; // tensor.extract coordinates
};

/// Follows the element `v` through integer casts and records its reads.
void visit(Value v, linalg::GenericOp gen, IndexUse &use) {
  for (OpOperand &u : v.getUses()) {
    Operation *user = u.getOwner();
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp>(user)) {
      visit(user->getResult(0), gen, use);
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
      if (u.getOperandNumber() == 0)
        continue;
      int64_t size =
          extract.getTensor().getType().getDimSize(u.getOperandNumber() - 1);
      if (size == ShapedType::kDynamic || !isa<IndexType>(v.getType()))
        continue;
      use.upper = use.upper ? std::min(*use.upper, size) : size;
      use.gathers.push_back(&u);
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(user)) {
      if (cmp.getPredicate() != arith::CmpIPredicate::eq &&
          cmp.getPredicate() != arith::CmpIPredicate::ne)
        continue;
      Value other = cmp.getOperand(1 - u.getOperandNumber());
      if (std::optional<int64_t> extent = oneHotExtentOf(other, gen)) {
        if (*extent > 0)
          use.upper = use.upper ? std::min(*use.upper, *extent) : *extent;
      } else if (std::optional<int64_t> c = constantOf(other, gen)) {
        use.compared.push_back(*c);
      }
    }
  }
}

/// Whether `v` is, through reshapes, slices and copies, an input or target
/// of the step: those are checked at the entry by --msamp-index-checks,
/// which bounds them by the same reads. Anything else (a computed value, a
/// buffer such as stored position ids) is checked here.
bool isCheckedInput(Value v, func::FuncOp func) {
  llvm::SmallPtrSet<Value, 8> seen;
  while (seen.insert(v).second) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner()->getParentOp() != func.getOperation())
        return false;
      StringRef role = getArgRole(func, arg.getArgNumber());
      return role == kRoleInput || role == kRoleTarget;
    }
    Operation *def = v.getDefiningOp();
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
            tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    // A transpose, broadcast or integer cast yields its one input element.
    auto gen = dyn_cast<linalg::GenericOp>(def);
    if (!gen || gen.getNumDpsInputs() != 1 || gen.getNumResults() != 1)
      return false;
    auto yield = cast<linalg::YieldOp>(gen.getBody()->getTerminator());
    if (stripIndexCasts(yield.getOperand(0)) != gen.getBody()->getArgument(0))
      return false;
    v = gen.getDpsInputOperand(0)->get();
  }
  return false;
}

/// "FILE:LINE:COL" of the first file location in `loc`, else its printed
/// form.
std::string siteOf(Location loc) {
  std::string site;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      site = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (site.empty()) {
    llvm::raw_string_ostream os(site);
    loc.print(os);
  }
  return site;
}

/// Replaces each gathered coordinate by its clamp into [0, size).
void clampGathers(ArrayRef<OpOperand *> gathers) {
  for (OpOperand *coordinate : gathers) {
    auto extract = cast<tensor::ExtractOp>(coordinate->getOwner());
    OpBuilder b(extract);
    Location loc = extract.getLoc();
    int64_t size = extract.getTensor().getType().getDimSize(
        coordinate->getOperandNumber() - 1);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value last = arith::ConstantIndexOp::create(b, loc, size - 1);
    Value clamped = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, coordinate->get(), zero), last);
    coordinate->set(clamped);
  }
}

struct MSAMPComputedIndexChecksPass
    : ::mlir::msamp::impl::MSAMPComputedIndexChecksBase<
          MSAMPComputedIndexChecksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = getTrainStepOrError(module, getArgument());
    if (!func)
      return signalPassFailure();
    // One check per tensor and range, before its first reader.
    llvm::DenseMap<std::pair<Value, int64_t>, std::string> checkSites;
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp gen) { generics.push_back(gen); });
    for (linalg::GenericOp gen : generics) {
      for (OpOperand *operand : gen.getDpsInputOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand->get().getType());
        if (!type || !type.getElementType().isSignlessInteger() ||
            type.getElementType().getIntOrFloatBitWidth() < 32)
          continue;
        IndexUse use;
        visit(gen.getMatchingBlockArgument(operand), gen, use);
        if (!use.upper || *use.upper <= 0 ||
            isCheckedInput(operand->get(), func))
          continue;
        clampGathers(use.gathers);
        std::optional<int64_t> ignore;
        for (int64_t c : use.compared)
          if (c < 0 || c >= *use.upper) {
            ignore = c;
            break;
          }
        std::string site = siteOf(gen.getLoc());
        auto [entry, isNew] =
            checkSites.try_emplace({operand->get(), *use.upper}, site);
        if (isNew) {
          OpBuilder b(gen);
          CheckIndexOp::create(
              b, gen.getLoc(), operand->get(), b.getI64IntegerAttr(*use.upper),
              ignore ? b.getI64IntegerAttr(*ignore) : IntegerAttr(),
              b.getStringAttr(site));
        }
        remark::passed(gen.getLoc(),
                       remarkOptions("computed-index-checks", "IndexChecked"))
            << ("index computed in the graph checked against [0, " +
                Twine(*use.upper) + ")" +
                (ignore ? " or " + Twine(*ignore) : Twine()) +
                (isNew ? " here" : " by the check at " + entry->second))
                   .str();
      }
    }
  }
};

} // namespace
