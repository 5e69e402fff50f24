//===- LossScale.cpp - GradScaler's skip and update (amp-fp16) ------------===//
//
// The second half of AMP's dynamic loss scaling (the first, the scaled fp16
// casts, is msamp-amp-gemms; the state is described in LossScale.h). Runs
// after msamp-grad-stats, whose `nonfinite` metric is GradScaler's
// found_inf: Inf or NaN anywhere in the (all-reduced) gradients.
//
//  * found_inf: every state update except the step counter and the
//    scaler's state returns the old value: the optimizer step is skipped.
//    The step counter still advances, as it does for a step the session
//    skips (Session::finishNonFinite), so step numbers, schedules and
//    checkpoints count every step (PyTorch's Adam would not count the
//    skipped step in its bias correction: a difference of one step per
//    overflow, a handful of times at the start of training).
//  * the scale: backoff on found_inf (tracker reset), growth after
//    growth-interval good steps in a row if the grown scale is finite
//    (tracker reset), torch's _amp_update_scale_ exactly.
//
// Skipping happens in the step because the session's own skip restores the
// whole state, the loss scale included, and would undo the backoff. The
// overflow is handled, so `nonfinite` is returned as 0 (the session goes on)
// and the new metric `loss_scale_overflow` reports the skip.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/LossScale.h"
#include "MSAMP/TrainStep/GradStats.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPLOSSSCALE
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

static Value scalarF32(OpBuilder &b, Location loc, double value) {
  auto type = getScalarF32Type(b.getContext());
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type,
                             b.getF32FloatAttr(static_cast<float>(value))));
}

static Value scalarI64(OpBuilder &b, Location loc, int64_t value) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(value)));
}

Value mlir::msamp::buildLossScaleInUse(OpBuilder &b, Location loc, Value state,
                                       double initScale) {
  Value zero = scalarF32(b, loc, 0.0);
  Value unset =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, state, zero);
  return arith::SelectOp::create(b, loc, unset, scalarF32(b, loc, initScale),
                                 state);
}

namespace {
struct MSAMPLossScalePass
    : ::mlir::msamp::impl::MSAMPLossScaleBase<MSAMPLossScalePass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Index of the result with role "metric" named `name`.
std::optional<unsigned> findMetricResult(func::FuncOp func, StringRef name) {
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (getResultRole(func, i) == kRoleMetric && getResultName(func, i) == name)
      return i;
  return std::nullopt;
}
} // namespace

void MSAMPLossScalePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto bad = [&](StringRef what) {
    module.emitError("invalid msamp-loss-scale option ") << what;
    signalPassFailure();
  };
  if (!(growthFactor > 1.0 && std::isfinite(growthFactor)))
    return bad("growth-factor: expected a finite factor > 1");
  if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
    return bad("backoff-factor: expected a factor in (0, 1)");
  if (growthInterval < 1)
    return bad("growth-interval: expected a positive number of steps");
  func::FuncOp step = getTrainStepOrError(module, "--msamp-loss-scale");
  if (!step)
    return signalPassFailure();
  std::optional<unsigned> scaleIndex =
      findArgument(step, kLossScaleName, kRoleLossScale);
  std::optional<unsigned> trackerIndex =
      findArgument(step, kGrowthTrackerName, kRoleLossScale);
  std::optional<unsigned> flagIndex = findMetricResult(step, kNonFiniteName);
  if (!scaleIndex || !trackerIndex || !flagIndex) {
    step.emitError("--msamp-loss-scale needs the loss-scale state of "
                   "--msamp-amp-gemms=\"dtype=fp16 loss-scale=true\" ('")
        << kLossScaleName << "', '" << kGrowthTrackerName << "') and the '"
        << kNonFiniteName << "' metric of --msamp-grad-stats";
    return signalPassFailure();
  }

  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  OpBuilder b(ret);
  Location loc = step.getLoc();
  Value flag = ret.getOperand(*flagIndex);
  Value found = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, flag,
                                      scalarF32(b, loc, 0.0));
  Value foundScalar = tensor::ExtractOp::create(b, loc, found, ValueRange{});

  // Skip: every update returns the old state.
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    auto updates = step.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr);
    if (!updates)
      continue;
    unsigned arg = updates.getInt();
    StringRef role = getArgRole(step, arg);
    if (role == kRoleStep || role == kRoleLossScale)
      continue;
    Value kept = arith::SelectOp::create(
        b, loc, foundScalar, step.getArgument(arg), ret.getOperand(r));
    ret.setOperand(r, kept);
  }

  // GradScaler.update.
  Value state = step.getArgument(*scaleIndex);
  Value tracker = step.getArgument(*trackerIndex);
  Value scale = buildLossScaleInUse(b, loc, state, initScale);
  Value zero = scalarI64(b, loc, 0);
  Value backedOff =
      arith::MulFOp::create(b, loc, scale, scalarF32(b, loc, backoffFactor));
  Value good = arith::AddIOp::create(b, loc, tracker, scalarI64(b, loc, 1));
  Value due = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, good,
                                    scalarI64(b, loc, growthInterval));
  Value grown =
      arith::MulFOp::create(b, loc, scale, scalarF32(b, loc, growthFactor));
  Value grownFinite = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, grown,
      scalarF32(b, loc, std::numeric_limits<float>::infinity()));
  Value growNow = arith::AndIOp::create(b, loc, due, grownFinite);
  Value onGood = arith::SelectOp::create(b, loc, growNow, grown, scale);
  Value newScale = arith::SelectOp::create(b, loc, found, backedOff, onGood);
  Value trackerOnGood = arith::SelectOp::create(b, loc, due, zero, good);
  Value newTracker =
      arith::SelectOp::create(b, loc, found, zero, trackerOnGood);
  setStateResult(step, *scaleIndex, newScale);
  setStateResult(step, *trackerIndex, newTracker);

  // The overflow was handled: the session must not stop or undo the step.
  Value overflow = arith::UIToFPOp::create(b, loc, flag.getType(), found);
  ret.setOperand(*flagIndex, scalarF32(b, loc, 0.0));
  ret->insertOperands(ret.getNumOperands(), overflow);
  NamedAttribute attrs[] = {
      b.getNamedAttr(kNameAttr, b.getStringAttr(kOverflowMetricName)),
      b.getNamedAttr(kRoleAttr, b.getStringAttr(kRoleMetric))};
  (void)step.insertResult(step.getNumResults(), overflow.getType(),
                          b.getDictionaryAttr(attrs));
}
