//===- DropoutTraining.cpp - dropout that evaluation turns off --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp.export traces the model in training mode, so the step's dropout is
// always on, but model.eval() turns it off: msamp-run --eval and
// Session.eval must compute PyTorch's eval loss (issue 15). A flag on the
// draw alone cannot do that, because dropout divides the mask by the keep
// probability outside the draw; recompiling a second, eval-mode graph would
// need a second entry point sharing the state. This pass instead recognizes
// the whole dropout that torch-mlir emits for nn.Dropout, F.dropout, Hugging
// Face attention dropout and timm's DropPath,
//
//   %u = msamp.random_uniform ... {low = 0.0, high = 1.0}
//   %m = linalg.generic ins(%u, KEEP) { cmpf olt %u, %keep }    // i1 mask
//   %f = linalg.generic ins(%m) { uitofp %m }                    // 0 / 1
//   %s = linalg.generic ins(%f) { divf %f, KEEP }                // 0 / 1/keep
//
// and gates the mask and the scale by a new hyperparameter input `training`
// (0-d f32, written by the session: 1 when training, 0 when evaluating):
// the mask yields `cmp || !training` and the scale `training ? f / keep :
// 1.0`, so with training = 0 every multiply by the scaled mask is by exactly
// 1.0 (PyTorch's eval identity) and with training = 1 every value is the
// one before (selects of the same bits). Other draws (torch.rand_like,
// torch.bernoulli, randn_like's Box-Muller) stay random in evaluation, as
// they do in PyTorch's eval mode. docs/Randomness.md 3.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPDROPOUTTRAINING
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

constexpr StringLiteral kTrainingName = "training";

/// One dropout: the draw's compare and the scales of its mask.
struct Dropout {
  linalg::GenericOp compare;
  SmallVector<linalg::GenericOp> scales;
};

/// The op of `generic`'s body that defines the one value it yields, or null
/// (several results, or a yielded value from outside the body).
static Operation *yieldedOp(linalg::GenericOp generic) {
  if (generic->getNumResults() != 1)
    return nullptr;
  Block &body = generic.getRegion().front();
  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1)
    return nullptr;
  Operation *op = yield->getOperand(0).getDefiningOp();
  if (!op || op->getBlock() != &body)
    return nullptr;
  return op;
}

/// Whether `arg` is the body argument of `generic` for input `operand`.
static bool isInputArgFor(linalg::GenericOp generic, Value arg, Value operand) {
  auto blockArg = dyn_cast<BlockArgument>(arg);
  if (!blockArg || blockArg.getOwner() != &generic.getRegion().front())
    return false;
  unsigned n = blockArg.getArgNumber();
  return n < generic.getNumDpsInputs() &&
         generic.getDpsInputOperand(n)->get() == operand;
}

/// The value of a float constant as a body sees it: a scalar arith.constant
/// (captured from above), its truncf/extf in the body, or the body argument
/// of a splat-constant input tensor.
static std::optional<double> constantValue(linalg::GenericOp generic, Value v) {
  if (auto cast = v.getDefiningOp<arith::TruncFOp>())
    v = cast.getIn();
  else if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  if (auto blockArg = dyn_cast<BlockArgument>(v)) {
    if (blockArg.getOwner() != &generic.getRegion().front() ||
        blockArg.getArgNumber() >= generic.getNumDpsInputs())
      return std::nullopt;
    v = generic.getDpsInputOperand(blockArg.getArgNumber())->get();
  }
  FloatAttr scalar;
  if (matchPattern(v, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  DenseFPElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// `keep` rounded to the float type `type`: the divisor of an f32 scale is
/// torch-mlir's truncf of the f64 keep probability of the compare.
static double roundedTo(Type type, double keep) {
  APFloat value(keep);
  bool lost;
  value.convert(cast<FloatType>(type).getFloatSemantics(),
                llvm::RoundingMode::NearestTiesToEven, &lost);
  return value.convertToDouble();
}

/// The dropout drawn by `draw`, or std::nullopt if `draw` is not one: a
/// uniform [0, 1) draw compared `u < keep` in one generic, the mask
/// converted to 0/1 and divided by the same keep.
static std::optional<Dropout> matchDropout(RandomUniformOp draw) {
  if (draw.getLow().convertToDouble() != 0.0 ||
      draw.getHigh().convertToDouble() != 1.0 || !draw->hasOneUse())
    return std::nullopt;
  auto compare = dyn_cast<linalg::GenericOp>(*draw->user_begin());
  if (!compare)
    return std::nullopt;
  auto cmp = dyn_cast_or_null<arith::CmpFOp>(yieldedOp(compare));
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OLT ||
      !isInputArgFor(compare, cmp.getLhs(), draw.getResult()))
    return std::nullopt;
  std::optional<double> keep = constantValue(compare, cmp.getRhs());
  if (!keep || !(*keep > 0.0 && *keep <= 1.0))
    return std::nullopt;

  Dropout dropout{compare, {}};
  Value mask = compare->getResult(0);
  for (Operation *user : mask.getUsers()) {
    auto convert = dyn_cast<linalg::GenericOp>(user);
    if (!convert)
      continue;
    auto toFloat = dyn_cast_or_null<arith::UIToFPOp>(yieldedOp(convert));
    if (!toFloat || !isInputArgFor(convert, toFloat.getIn(), mask))
      continue;
    Value zeroOne = convert->getResult(0);
    for (Operation *scaleUser : zeroOne.getUsers()) {
      auto scale = dyn_cast<linalg::GenericOp>(scaleUser);
      if (!scale)
        continue;
      auto div = dyn_cast_or_null<arith::DivFOp>(yieldedOp(scale));
      if (!div || !isInputArgFor(scale, div.getLhs(), zeroOne))
        continue;
      std::optional<double> divisor = constantValue(scale, div.getRhs());
      if (divisor &&
          roundedTo(div.getType(), *divisor) == roundedTo(div.getType(), *keep))
        dropout.scales.push_back(scale);
    }
  }
  if (dropout.scales.empty())
    return std::nullopt;
  return dropout;
}

/// Rebuilds `generic` with `training` (0-d f32) as one more input and its
/// yielded value v replaced by `training != 0 ? v : evalValue`.
static void gate(OpBuilder &b, linalg::GenericOp generic, Value training,
                 TypedAttr evalValue) {
  MLIRContext *ctx = b.getContext();
  unsigned numLoops = generic.getNumLoops();
  SmallVector<Value> inputs(generic.getDpsInputs());
  inputs.push_back(training);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  maps.insert(maps.begin() + generic.getNumDpsInputs(),
              AffineMap::get(numLoops, 0, {}, ctx));
  b.setInsertionPoint(generic);
  auto gated = linalg::GenericOp::create(
      b, generic.getLoc(), generic->getResultTypes(), inputs,
      generic.getDpsInits(), maps, generic.getIteratorTypesArray());
  gated->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  gated.getRegion().takeBody(generic.getRegion());
  Block &body = gated.getRegion().front();
  Type f32 = b.getF32Type();
  BlockArgument flag =
      body.insertArgument(inputs.size() - 1, f32, generic.getLoc());

  Operation *yield = body.getTerminator();
  b.setInsertionPoint(yield);
  Location loc = yield->getLoc();
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
  Value on =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, flag, zero);
  Value off = arith::ConstantOp::create(b, loc, evalValue);
  Value value = arith::SelectOp::create(b, loc, on, yield->getOperand(0), off);
  yield->setOperand(0, value);

  generic->replaceAllUsesWith(gated->getResults());
  generic.erase();
}

struct MSAMPDropoutTrainingPass
    : ::mlir::msamp::impl::MSAMPDropoutTrainingBase<MSAMPDropoutTrainingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = getTrainStepOrError(module, "--" + getArgument().str());
    if (!step)
      return signalPassFailure();
    SmallVector<Dropout> dropouts;
    step.walk([&](RandomUniformOp draw) {
      if (std::optional<Dropout> d = matchDropout(draw))
        dropouts.push_back(*d);
    });
    if (dropouts.empty())
      return;
    if (std::optional<unsigned> existing = findArgument(step, kTrainingName)) {
      emitError(step.getArgument(*existing).getLoc())
          << "--" << getArgument() << ": @train_step already has an argument "
          << "named '" << kTrainingName
          << "', the input this pass adds to gate dropout; rename it";
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    Value training = addStateArgument(step, getScalarF32Type(&getContext()),
                                      kRoleHyperparam, kTrainingName, "");
    updateFunctionType(step);
    for (Dropout &d : dropouts) {
      gate(b, d.compare, training, b.getBoolAttr(true));
      for (linalg::GenericOp scale : d.scales) {
        auto type = cast<FloatType>(
            cast<ShapedType>(scale->getResult(0).getType()).getElementType());
        gate(b, scale, training, b.getFloatAttr(type, 1.0));
      }
    }
  }
};

} // namespace
