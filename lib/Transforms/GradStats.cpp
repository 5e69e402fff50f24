//===- GradStats.cpp - global gradient norm, clipping, overflow --*- C++
//-*-===//
//
// Gradient-norm clipping and non-finite gradient detection, compiled into the
// train step because the gradients exist only inside it (docs/TrainStep.md 2
// "Gradient statistics"). PyTorch / MS-AMP semantics (docs/Numerics.md 5.2,
// msamp/nn/clip_grad.py):
//
//   total     = sqrt(sum over the optimizer updates of sum(g^2))
//   clip_coef = min(1, max_grad_norm / (total + 1e-6))     (1 if max <= 0)
//   f32 grad g            -> g * clip_coef
//   FP8/f16 grad q, s_inv -> q, s_inv * clip_coef           (exact: the bytes
//                                                            stay, as MS-AMP's
//                                                            ScalingTensor.mul_)
//
// `g` is the gradient the optimizer reads: all-reduced, and dequantized
// (msamp.dequantize with its inverse scale) when it is stored in FP8 or f16,
// so the norm is the norm of what the update uses. Squares are summed in f64:
// an f32 square overflows above 1.8e19, which would report a finite gradient
// as non-finite; f64 holds every finite f32 square exactly in range.
//
// An FP8 cast saturates (msamp.quantize maps +-Inf to +-448), so an
// overflowing weight gradient is invisible in its bytes and in the
// dequantized values. MS-AMP detects it from the amax recorded before the
// cast; so does this pass: the (max-reduced) amax that fed the scale of each
// FP8 gradient's quantize is folded into the sum, and a non-finite amax makes
// the sum non-finite (its own value: +Inf or NaN).
//
// Added to @train_step:
//   * argument `max_grad_norm` (role hyperparam, tensor<f32>), appended so
//     that no msamp.updates index moves;
//   * results `grad_norm` (the total before clipping) and `nonfinite` (1.0
//     when grad_norm is Inf or NaN, else 0.0), role "metric", appended after
//     the state results, with no msamp.updates.
//
// With max_grad_norm <= 0 the coefficient is exactly 1.0 and every multiply
// is exact, so an unclipped step computes the same bits as one compiled
// without this pass. The pass is idempotent: a step that already has the
// argument and both metrics is left alone.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/GradStats.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGRADSTATS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

/// The updates the statistics read, in program order.
using Update = OptimizerUpdate;

static void setGrad(Operation *op, Value grad) {
  if (auto adam = dyn_cast<AdamUpdateOp>(op))
    adam.getGradMutable().assign(grad);
  else
    cast<SGDUpdateOp>(op).getGradMutable().assign(grad);
}

static void setGradScaleInv(Operation *op, Value scaleInv) {
  if (auto adam = dyn_cast<AdamUpdateOp>(op))
    adam.getGradScaleInvMutable().assign(scaleInv);
  else
    cast<SGDUpdateOp>(op).getGradScaleInvMutable().assign(scaleInv);
}

/// The 0-d f32 amax recorded before the cast that produced the low-precision
/// gradient `grad`, or null. The form of --msamp-fp8-weight-gradients is
///   %ga = msamp.all_reduce max (msamp.amax %g)
///   %s  = msamp.compute_scale ... (tensor.expand_shape %ga), ...
///   %q  = msamp.quantize %g, %s ;  grad = msamp.all_reduce mean %q scale_inv
/// The scale's history is followed first (it is what the cast used); a
/// delayed scale's history yields this step's amax. Otherwise an amax of the
/// quantized value is taken, its max-reduced form when there is one (every
/// rank then agrees on the flag).
static Value findRecordedAmax(Value grad, Value gradScaleInv) {
  Value payload = grad;
  // O3 stage 2 (flat shards): the update reads its slice of a
  // reduce-scatter of many payloads, with its own inverse scale divided by
  // the world size: `1 / s / N`, where `s` is the scale its payload was
  // quantized with.
  if (auto piece = payload.getDefiningOp<tensor::ExtractSliceOp>();
      piece && piece.getSource().getDefiningOp<ReduceScatterOp>() &&
      gradScaleInv) {
    auto perRank = gradScaleInv.getDefiningOp<arith::DivFOp>();
    auto inverse =
        perRank ? perRank.getLhs().getDefiningOp<arith::DivFOp>() : nullptr;
    if (!inverse)
      return nullptr;
    for (Operation *user : inverse.getRhs().getUsers())
      if (auto q = dyn_cast<QuantizeOp>(user);
          q && q.getScale() == inverse.getRhs()) {
        payload = q.getResult();
        break;
      }
  }
  // O3 stage 1 (flat shards): the update reads its slice of the reduced
  // gradient.
  if (auto piece = payload.getDefiningOp<tensor::ExtractSliceOp>())
    payload = piece.getSource();
  if (auto flat = payload.getDefiningOp<tensor::CollapseShapeOp>())
    payload = flat.getSrc();
  else if (auto flat1 = payload.getDefiningOp<tensor::ExpandShapeOp>())
    payload = flat1.getSrc();
  if (auto reduce = payload.getDefiningOp<AllReduceOp>())
    payload = reduce.getInput();
  else if (auto toOwner = payload.getDefiningOp<ReduceOp>())
    payload = toOwner.getInput();
  auto quantize = payload.getDefiningOp<QuantizeOp>();
  if (!quantize)
    return nullptr;
  auto isScalarF32 = [](Value v) {
    return v.getType() == getScalarF32Type(v.getContext());
  };

  if (auto scale = quantize.getScale().getDefiningOp<ComputeScaleOp>()) {
    Value history = scale.getAmaxHistory();
    while (auto expand = history.getDefiningOp<tensor::ExpandShapeOp>())
      history = expand.getSrc();
    if (auto roll = history.getDefiningOp<UpdateAmaxHistoryOp>())
      return roll.getAmax();
    if (isScalarF32(history) && (history.getDefiningOp<AllReduceOp>() ||
                                 history.getDefiningOp<AmaxOp>()))
      return history;
  }
  for (Operation *user : quantize.getInput().getUsers()) {
    auto amax = dyn_cast<AmaxOp>(user);
    if (!amax)
      continue;
    for (Operation *amaxUser : amax.getResult().getUsers())
      if (auto reduce = dyn_cast<AllReduceOp>(amaxUser))
        if (reduce.getKind() == ReduceKind::Max && !reduce.getScaleInv())
          return reduce.getResult();
    return amax.getResult();
  }
  return nullptr;
}

namespace {
/// Emits the IR of the statistics before the first optimizer update.
class StatsBuilder {
public:
  StatsBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {
    f32 = b.getF32Type();
    f64 = b.getF64Type();
  }

  /// A 0-d f64 accumulator holding 0.
  Value zeroAccumulator() {
    Value zero = constant(f64, 0.0);
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f64);
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }

  /// acc + sum(x^2) over every element of the f32 tensor `x`, in f64, in
  /// row-major order (one sequential sum: the result does not depend on the
  /// thread count or the backend).
  Value addSumOfSquares(Value x, Value acc) {
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                   AffineMap::get(rank, 0, {}, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{x}, ValueRange{acc},
               maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value wide = arith::ExtFOp::create(nb, l, f64, args[0]);
                 Value square = arith::MulFOp::create(nb, l, wide, wide);
                 Value sum = arith::AddFOp::create(nb, l, args[1], square);
                 linalg::YieldOp::create(nb, l, sum);
               })
        .getResult(0);
  }

  /// acc, or acc + |amax| when the amax is not finite (+Inf or NaN): a
  /// finite amax must not change the sum, a non-finite one must poison it.
  Value foldAmax(Value amax, Value acc) {
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps(2, AffineMap::get(0, 0, {}, ctx));
    Value inf = constant(f32, std::numeric_limits<double>::infinity());
    return linalg::GenericOp::create(
               b, loc, TypeRange{acc.getType()}, ValueRange{amax},
               ValueRange{acc}, maps, ArrayRef<utils::IteratorType>{},
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 // |a| < +Inf is false for +Inf and (unordered) NaN.
                 Value magnitude = math::AbsFOp::create(nb, l, args[0]);
                 Value finite = arith::CmpFOp::create(
                     nb, l, arith::CmpFPredicate::OLT, magnitude, inf);
                 Value wide = arith::ExtFOp::create(nb, l, f64, magnitude);
                 Value poisoned = arith::AddFOp::create(nb, l, args[1], wide);
                 Value result =
                     arith::SelectOp::create(nb, l, finite, args[1], poisoned);
                 linalg::YieldOp::create(nb, l, result);
               })
        .getResults()
        .front();
  }

  /// (grad_norm, clip_coef, nonfinite) from the f64 sum of squares and the
  /// max_grad_norm argument, all 0-d f32. The coefficient is computed in f32
  /// as PyTorch does: min(1, max / (norm + 1e-6)); NaN propagates (as
  /// torch.clamp), and max <= 0 or NaN means no clipping (coefficient 1).
  std::tuple<Value, Value, Value> finish(Value sumOfSquares,
                                         Value maxGradNorm) {
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps(5, AffineMap::get(0, 0, {}, ctx));
    SmallVector<Value> outs;
    for (int i = 0; i < 3; ++i)
      outs.push_back(tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32));
    Value zero = constant(f32, 0.0), one = constant(f32, 1.0);
    Value eps = constant(f32, 1e-6);
    Value inf = constant(f32, std::numeric_limits<double>::infinity());
    auto stats = linalg::GenericOp::create(
        b, loc, TypeRange(ValueRange(outs)),
        ValueRange{sumOfSquares, maxGradNorm}, outs, maps,
        ArrayRef<utils::IteratorType>{},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value root = math::SqrtOp::create(nb, l, args[0]);
          Value norm = arith::TruncFOp::create(nb, l, f32, root);
          Value denominator = arith::AddFOp::create(nb, l, norm, eps);
          Value quotient = arith::DivFOp::create(nb, l, args[1], denominator);
          Value clamped = arith::MinimumFOp::create(nb, l, quotient, one);
          Value enabled = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::OGT, args[1], zero);
          Value coef = arith::SelectOp::create(nb, l, enabled, clamped, one);
          // Non-finite exactly when the norm is: |norm| < +Inf fails for
          // +Inf and NaN (unordered).
          Value magnitude = math::AbsFOp::create(nb, l, norm);
          Value finite = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT,
                                               magnitude, inf);
          Value flag = arith::SelectOp::create(nb, l, finite, zero, one);
          linalg::YieldOp::create(nb, l, ValueRange{norm, coef, flag});
        });
    return {stats.getResult(0), stats.getResult(1), stats.getResult(2)};
  }

  /// g * coef elementwise (coef a 0-d f32 tensor), into a new tensor.
  Value scale(Value grad, Value coef) {
    auto type = cast<RankedTensorType>(grad.getType());
    unsigned rank = type.getRank();
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, ctx),
        AffineMap::get(rank, 0, {}, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{grad, coef},
               ValueRange{empty}, maps, iterators,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 Value product = arith::MulFOp::create(nb, l, args[0], args[1]);
                 linalg::YieldOp::create(nb, l, product);
               })
        .getResult(0);
  }

private:
  /// A scalar constant, created once before the first op that captures it
  /// (every later op is after it, so it dominates them all).
  Value constant(Type type, double value) {
    for (auto [t, v, constant] : constants)
      if (t == type && v == value)
        return constant;
    Value constant =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
    constants.push_back({type, value, constant});
    return constant;
  }

  OpBuilder &b;
  Location loc;
  Type f32, f64;
  SmallVector<std::tuple<Type, double, Value>> constants;
};

struct MSAMPGradStatsPass
    : ::mlir::msamp::impl::MSAMPGradStatsBase<MSAMPGradStatsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// Checks an existing max_grad_norm argument and metric results. Returns
  /// true when the step already has all of them (nothing to do), false when
  /// it has none; signals failure on a partial or malformed set.
  FailureOr<bool> alreadyDone(func::FuncOp func);
};
} // namespace

/// Index of the result with msamp.role = "metric" and msamp.name = `name`.
static std::optional<unsigned> findMetric(func::FuncOp func, StringRef name) {
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (getResultRole(func, r) == kRoleMetric && getResultName(func, r) == name)
      return r;
  return std::nullopt;
}

FailureOr<bool> MSAMPGradStatsPass::alreadyDone(func::FuncOp func) {
  Type scalar = getScalarF32Type(func.getContext());
  std::optional<unsigned> arg = findArgument(func, kMaxGradNormName);
  std::optional<unsigned> norm = findMetric(func, kGradNormName);
  std::optional<unsigned> flag = findMetric(func, kNonFiniteName);
  if (!arg && !norm && !flag)
    return false;
  if (arg && (getArgRole(func, *arg) != kRoleHyperparam ||
              func.getArgument(*arg).getType() != scalar)) {
    emitError(func.getArgument(*arg).getLoc())
        << "--" << getArgument() << ": argument '" << kMaxGradNormName
        << "' must be the hyperparam tensor<f32> this pass adds; found role \""
        << getArgRole(func, *arg) << "\" and type "
        << func.getArgument(*arg).getType();
    return failure();
  }
  if (!arg || !norm || !flag) {
    func.emitError("--") << getArgument()
                         << ": the train step has only part of the gradient "
                         << "statistics (argument '" << kMaxGradNormName
                         << "': " << (arg ? "present" : "absent")
                         << ", metric '" << kGradNormName
                         << "': " << (norm ? "present" : "absent")
                         << ", metric '" << kNonFiniteName
                         << "': " << (flag ? "present" : "absent")
                         << "); it must have all of them or none";
    return failure();
  }
  return true;
}

void MSAMPGradStatsPass::runOnOperation() {
  ModuleOp module = getOperation();
  func::FuncOp func = getTrainStepOrError(module, getArgument());
  if (!func)
    return signalPassFailure();
  if (!func.getBody().hasOneBlock()) {
    func.emitError("--") << getArgument()
                         << ": the train step must have a single block";
    return signalPassFailure();
  }
  FailureOr<bool> done = alreadyDone(func);
  if (failed(done))
    return signalPassFailure();
  if (*done)
    return;

  // The updates, in program order. Every one must read its gradient after
  // all gradients exist: the coefficient depends on all of them.
  Block &entry = func.getBody().front();
  SmallVector<Update> updates;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    std::optional<Update> update = asOptimizerUpdate(op);
    if (!update)
      return WalkResult::advance();
    if (op->getBlock() != &entry) {
      op->emitError("--") << getArgument()
                          << ": an optimizer update inside a region is not "
                             "supported; updates must be in the body of "
                          << "@" << kTrainStepName;
      return WalkResult::interrupt();
    }
    updates.push_back(*update);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  // The recorded amax of every FP8/f16 gradient, once each.
  llvm::SetVector<Value> amaxes;
  for (const Update &u : updates) {
    if (!u.gradScaleInv)
      continue;
    if (Value amax = findRecordedAmax(u.grad, u.gradScaleInv)) {
      amaxes.insert(amax);
      continue;
    }
    remark::missed(u.op->getLoc(),
                   remarkOptions("grad-stats", "grad-overflow-undetected"))
        << remark::add("no amax recorded before the cast of the {0} gradient "
                       "of {1}",
                       getElementTypeOrSelf(u.grad.getType()),
                       describeParam(func, u.param))
        << remark::reason("an overflow saturated by that cast cannot be "
                          "detected; only NaN and Inf in its bytes are");
  }

  // The statistics go right after the last value they read. Synthesis
  // interleaves the updates with the gradient collectives (all-reduce g1,
  // update p1, all-reduce g2, ...); the updates before that point are moved
  // after the clipping, in order. They are Pure and their other operands
  // (params, state, lr, step) already dominate them, so only a reader of
  // their results in between would make that wrong.
  Operation *last = nullptr;
  auto noteDefinition = [&](Value v) {
    if (!v || isa<BlockArgument>(v))
      return;
    Operation *def = entry.findAncestorOpInBlock(*v.getDefiningOp());
    if (def && (!last || last->isBeforeInBlock(def)))
      last = def;
  };
  for (const Update &u : updates) {
    noteDefinition(u.grad);
    noteDefinition(u.gradScaleInv);
  }
  for (Value amax : amaxes)
    noteDefinition(amax);
  // O3 (msamp.zero): each rank holds the updates of the params it owns, so
  // `last` above differs between ranks, but the all-reduce of the partial
  // sums below must be issued at the same point of the collective sequence
  // on every rank: after the last gradient collective, which is the same
  // op on every rank.
  // Only the collectives before the first update are gradient collectives
  // (O3's flat shards all-reduce the new tensors' amaxes after them).
  const bool sharded = func->hasAttr(kZeroAttr);
  if (sharded)
    for (Operation &op : entry) {
      if (llvm::any_of(updates, [&](const Update &u) { return u.op == &op; }))
        break;
      if (isa<ReduceOp, AllReduceOp, ReduceScatterOp>(op))
        noteDefinition(op.getResult(0));
    }
  SmallVector<Operation *> toMove;
  for (const Update &u : updates) {
    if (!last || !u.op->isBeforeInBlock(last))
      continue;
    for (Operation *user : u.op->getUsers()) {
      Operation *reader = entry.findAncestorOpInBlock(*user);
      if (reader && !last->isBeforeInBlock(reader)) {
        InFlightDiagnostic diag =
            reader->emitError("--")
            << getArgument() << ": reads the result of the optimizer update "
            << "of " << describeParam(func, u.param)
            << " before every gradient exists; the clipping coefficient "
               "depends on all gradients, so no update may take effect "
               "before the last one is computed";
        diag.attachNote(last->getLoc()) << "the last gradient value is here";
        return signalPassFailure();
      }
    }
    toMove.push_back(u.op);
  }

  // The new argument, appended so that no msamp.updates index moves.
  MLIRContext *ctx = &getContext();
  Type scalar = getScalarF32Type(ctx);
  Value maxGradNorm =
      addStateArgument(func, scalar, kRoleHyperparam, kMaxGradNormName, "");

  OpBuilder b(&getContext());
  if (last)
    b.setInsertionPointAfter(last);
  else if (!updates.empty())
    b.setInsertionPoint(updates.front().op);
  else
    b.setInsertionPoint(entry.getTerminator());
  Location loc = func.getLoc();
  StatsBuilder stats(b, loc);

  // Sum of squares over the gradients the updates read, in update order.
  Value acc = stats.zeroAccumulator();
  for (const Update &u : updates) {
    Value real = u.grad;
    if (u.gradScaleInv) {
      auto type = cast<RankedTensorType>(u.grad.getType());
      real = DequantizeOp::create(b, u.op->getLoc(), type.clone(b.getF32Type()),
                                  u.grad, u.gradScaleInv);
    }
    acc = stats.addSumOfSquares(real, acc);
  }
  for (Value amax : amaxes)
    acc = stats.foldAmax(amax, acc);
  if (sharded) {
    // The owners' partial sums, summed over the group (in f32: the
    // collectives carry no f64; a sum above 3.4e38, a norm above 1.8e19,
    // then reads as non-finite).
    auto f32 = RankedTensorType::get({}, b.getF32Type());
    Value partial = arith::TruncFOp::create(b, loc, f32, acc);
    Value total =
        AllReduceOp::create(b, loc, ReduceKind::Sum, partial).getResult();
    acc = arith::ExtFOp::create(b, loc, acc.getType(), total);
  }
  auto [norm, coef, nonfinite] = stats.finish(acc, maxGradNorm);

  // Clip: one scaled tensor (or inverse scale) per distinct gradient value,
  // shared by every update that reads it.
  llvm::MapVector<Value, Value> clipped;
  for (const Update &u : updates) {
    Value source = u.gradScaleInv ? u.gradScaleInv : u.grad;
    Value &replacement = clipped[source];
    if (!replacement)
      replacement =
          u.gradScaleInv
              ? arith::MulFOp::create(b, loc, u.gradScaleInv, coef).getResult()
              : stats.scale(u.grad, coef);
    if (u.gradScaleInv)
      setGradScaleInv(u.op, replacement);
    else
      setGrad(u.op, replacement);
  }

  for (Operation *op : toMove)
    op->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());

  // The metrics, after the state results.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (auto [value, name] :
       {std::pair<Value, StringRef>{norm, kGradNormName},
        std::pair<Value, StringRef>{nonfinite, kNonFiniteName}}) {
    ret->insertOperands(ret.getNumOperands(), value);
    NamedAttribute attrs[] = {
        b.getNamedAttr(kNameAttr, b.getStringAttr(name)),
        b.getNamedAttr(kRoleAttr, b.getStringAttr(kRoleMetric))};
    (void)func.insertResult(func.getNumResults(), value.getType(),
                            b.getDictionaryAttr(attrs));
  }

  int64_t numLowPrecision =
      llvm::count_if(updates, [](const Update &u) { return u.gradScaleInv; });
  remark::passed(loc, remarkOptions("grad-stats", "grad-stats"))
      << remark::add("global gradient norm and clipping over {0} gradients "
                     "({1} FP8/f16, dequantized), {2} recorded amaxes "
                     "checked for overflow",
                     updates.size(), numLowPrecision, amaxes.size());
}
