//===- LowPrecisionOptimizer.cpp - FP8 m and FP16 v Adam state --*- C++ -*-===//
//
// MS-AMP O2 (docs/Numerics.md 5.1): LBAdam/LBAdamW keep the first moment as
// E4M3 and the second as FP16, each with a per-tensor power-of-two scale that
// the update recomputes every step from the new amax. The dtypes are chosen per
// optimizer, not per param, so biases and norm scales get FP8 m / FP16 v too
// (docs/Numerics.md 1.3, docs/Interfaces.md 3). This pass gives every
// Adam/AdamW moment of @train_step that storage (docs/TrainStep.md 2 "O2"):
//
//   %m: tensor<..xf8E4M3FN>, %v: tensor<..xf16>,
//   %ms: tensor<f32> {msamp.name = "<p>.exp_avg.scale", msamp.init = "ones"}
//   %vs: tensor<f32> {msamp.name = "<p>.exp_avg_sq.scale", msamp.init = "ones"}
//   ... = msamp.adam_update ..., exp_avg %m scale %ms : ...,
//                                exp_avg_sq %v scale %vs : ..., ...
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/RebuildOptimizer.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPLOWPRECISIONOPTIMIZER
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

/// Replaces the uses of `oldValue` (f32) by `stored` (low precision, stored =
/// real * scale): a func.return keeps the stored value (it is the new state);
/// any other user (none in the synthesized form) reads it dequantized with
/// the inverse of `scale`, created right after `after`, the op defining both.
static void replaceWithStored(func::FuncOp func, Value oldValue, Value stored,
                              Value scale, Operation *after) {
  Value dequantized;
  for (OpOperand &use : llvm::make_early_inc_range(oldValue.getUses())) {
    if (isa<func::ReturnOp>(use.getOwner())) {
      use.set(stored);
      continue;
    }
    if (!dequantized) {
      Value one = getOrCreateScalarOne(func);
      OpBuilder b(func.getContext());
      b.setInsertionPointAfter(after);
      Value inv = arith::DivFOp::create(b, stored.getLoc(), one, scale);
      dequantized = DequantizeOp::create(b, stored.getLoc(), oldValue.getType(),
                                         stored, inv);
    }
    use.set(dequantized);
  }
}

namespace {
/// One f32 moment to convert: its argument and its msamp.name.
struct Moment {
  BlockArgument arg;
  StringRef name;
};

struct MSAMPLowPrecisionOptimizerPass
    : ::mlir::msamp::impl::MSAMPLowPrecisionOptimizerBase<
          MSAMPLowPrecisionOptimizerPass> {
  using Base::Base;

  // Passes.td declares no statistic for this pass; one is kept here for
  // --mlir-pass-statistics (a no-op in NDEBUG builds of LLVM, where the
  // optimization remark is the record).
  Statistic numLowPrecisionAdam{this, "num-low-precision-adam",
                                "Adam updates with FP8 m and FP16 v state"};

  void runOnOperation() override;

private:
  FailureOr<std::optional<Moment>> getMoment(StepSignature &signature,
                                             AdamUpdateOp op, Value moment,
                                             Value result, StringRef which);
  void convert(StepSignature &signature, AdamUpdateOp op,
               std::optional<Moment> m, std::optional<Moment> v);
};
} // namespace

/// The moment `moment` of `op` if it still has to be converted (f32), after
/// checking that it is persistent state this pass can retype: an argument of
/// the train step whose updating result is `result`.
FailureOr<std::optional<Moment>>
MSAMPLowPrecisionOptimizerPass::getMoment(StepSignature &signature,
                                          AdamUpdateOp op, Value moment,
                                          Value result, StringRef which) {
  func::FuncOp func = signature.getFunc();
  // Already low precision: converted by an earlier run (idempotence).
  if (!cast<RankedTensorType>(moment.getType()).getElementType().isF32())
    return std::optional<Moment>();
  auto arg = dyn_cast<BlockArgument>(moment);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return op.emitError() << "'" << which
                          << "' must be an argument of @train_step (Adam "
                             "moments are persistent state) to be stored in "
                             "low precision";
  unsigned index = arg.getArgNumber();
  std::optional<unsigned> updating = signature.findUpdatingResult(index);
  if (!updating ||
      func.getBody().front().getTerminator()->getOperand(*updating) != result)
    return op.emitError() << "the result updating '"
                          << signature.getArgName(index)
                          << "' must be the new '" << which
                          << "' of its msamp.adam_update";
  return std::optional<Moment>(Moment{arg, signature.getArgName(index)});
}

void MSAMPLowPrecisionOptimizerPass::runOnOperation() {
  func::FuncOp func = getTrainStepOrError(getOperation(), getArgument());
  if (!func)
    return signalPassFailure();

  // One signature for the whole pass: the scales' arguments and results are
  // written once (StepSignature.h). Check every update before changing any,
  // so that an error leaves the step as it was.
  StepSignature signature(func);
  struct Work {
    AdamUpdateOp op;
    std::optional<Moment> m, v;
  };
  SmallVector<Work> work;
  bool sgdMomentumSeen = false;
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto sgd = dyn_cast<SGDUpdateOp>(op)) {
      // msamp.sgd_update's momentum buffer is f32 by definition: MS-AMP has
      // no low-bit SGD. Said once, not per param.
      if (sgd.getMomentumBuffer() && !sgdMomentumSeen) {
        sgdMomentumSeen = true;
        remark::missed(sgd.getLoc(), remarkOptions("low-precision-optimizer",
                                                   "sgd-momentum-f32"))
            << remark::add("SGD momentum buffers stay f32")
            << remark::reason("low-precision optimizer state applies to "
                              "Adam/AdamW only");
      }
      return WalkResult::advance();
    }
    auto adam = dyn_cast<AdamUpdateOp>(op);
    if (!adam)
      return WalkResult::advance();
    auto m = getMoment(signature, adam, adam.getExpAvg(), adam.getNewExpAvg(),
                       "exp_avg");
    auto v = getMoment(signature, adam, adam.getExpAvgSq(),
                       adam.getNewExpAvgSq(), "exp_avg_sq");
    if (failed(m) || failed(v))
      return WalkResult::interrupt();
    if (*m || *v)
      work.push_back({adam, *m, *v});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  for (Work &w : work)
    convert(signature, w.op, w.m, w.v);
}

void MSAMPLowPrecisionOptimizerPass::convert(StepSignature &signature,
                                             AdamUpdateOp op,
                                             std::optional<Moment> m,
                                             std::optional<Moment> v) {
  func::FuncOp func = signature.getFunc();
  MLIRContext *ctx = func.getContext();
  auto scalar = getScalarF32Type(ctx);

  // Storage types and scales. "ones": MS-AMP starts from zero states cast
  // just in time, where amax 0 keeps the initial scale 1
  // (docs/Numerics.md 5.1). m is E4M3 (target max 448); v is FP16 (target max
  // 65504), never FP8: an FP8 second moment diverges (FP8-LM ablation,
  // docs/Numerics.md 5.3).
  auto retype = [&](std::optional<Moment> &moment, Type element) -> Value {
    if (!moment)
      return Value();
    unsigned index = moment->arg.getArgNumber();
    auto type = cast<RankedTensorType>(moment->arg.getType());
    signature.setType(index, type.clone(element));
    return signature.addArgument(scalar, kRoleScalingState,
                                 (moment->name + ".scale").str(), kInitOnes);
  };
  Value mScale = retype(m, Float8E4M3FNType::get(ctx));
  Value vScale = retype(v, Float16Type::get(ctx));

  // Any reader of a moment other than its update (none in the synthesized
  // form) keeps reading real values.
  for (auto [moment, scale] : {std::pair(m, mScale), std::pair(v, vScale)}) {
    if (!moment)
      continue;
    Value arg = moment->arg;
    SmallVector<OpOperand *> others;
    for (OpOperand &use : arg.getUses())
      if (use.getOwner() != op)
        others.push_back(&use);
    if (others.empty())
      continue;
    Value one = getOrCreateScalarOne(func);
    OpBuilder b(ctx);
    b.setInsertionPointAfterValue(one);
    Value inv = arith::DivFOp::create(b, op.getLoc(), one, scale);
    Value real = DequantizeOp::create(
        b, op.getLoc(),
        cast<RankedTensorType>(arg.getType()).clone(Float32Type::get(ctx)), arg,
        inv);
    for (OpOperand *use : others)
      use->set(real);
  }

  // The update dequantizes the moments, updates them in f32 and requantizes
  // them with fresh just-in-time scales, which it returns.
  OptimizerOverrides overrides;
  if (m)
    overrides.expAvg = ScaledOperand{op.getExpAvg(), mScale};
  if (v)
    overrides.expAvgSq = ScaledOperand{op.getExpAvgSq(), vScale};
  OpBuilder b(op);
  auto newOp = cast<AdamUpdateOp>(rebuildOptimizerOp(b, op, overrides));

  // Results: unchanged ones are replaced one for one; a converted moment's
  // new value updates its argument and its new scale is a new result.
  op.getNewParam().replaceAllUsesWith(newOp.getNewParam());
  if (op.getNewParamScale())
    op.getNewParamScale().replaceAllUsesWith(newOp.getNewParamScale());
  auto replaceMoment = [&](std::optional<Moment> &moment, Value oldValue,
                           Value oldScale, Value newValue, Value newScale) {
    if (!moment) {
      oldValue.replaceAllUsesWith(newValue);
      if (oldScale)
        oldScale.replaceAllUsesWith(newScale);
      return;
    }
    replaceWithStored(func, oldValue, newValue, newScale, newOp);
    signature.setResult(moment->arg.getArgNumber(), newValue);
  };
  replaceMoment(m, op.getNewExpAvg(), op.getNewExpAvgScale(),
                newOp.getNewExpAvg(), newOp.getNewExpAvgScale());
  replaceMoment(v, op.getNewExpAvgSq(), op.getNewExpAvgSqScale(),
                newOp.getNewExpAvgSq(), newOp.getNewExpAvgSqScale());
  // Scale results are appended after every earlier result, m before v.
  if (m)
    signature.addResult(newOp.getNewExpAvgScale(),
                        cast<BlockArgument>(mScale).getArgNumber());
  if (v)
    signature.addResult(newOp.getNewExpAvgSqScale(),
                        cast<BlockArgument>(vScale).getArgNumber());
  op.erase();

  ++numLowPrecisionAdam;
  std::string what;
  if (m)
    what += "'" + m->name.str() + "' stored as f8E4M3FN";
  if (m && v)
    what += ", ";
  if (v)
    what += "'" + v->name.str() + "' stored as f16";
  remark::passed(newOp.getLoc(),
                 remarkOptions("low-precision-optimizer", "low-precision-adam"))
      << remark::add("{0}, each with a per-tensor scale", what);
}
