//===- FusedCastToRuntime.cpp - a just-in-time cast as one call -*- C++ -*-===//
//
// msamp-fp8-gemms quantizes an operand without scaling state (the weights at
// O2, every operand with scaling=jit) just in time:
//
//   %a = msamp.amax %x
//   %h = tensor.expand_shape %a [] : tensor<f32> into tensor<1xf32>
//   %s = msamp.compute_scale K most_recent %h, %prev for F
//   %q = msamp.quantize %x, %s : ... to ...xF
//   %i = arith.divf %one, %s            (the GEMM's scale_inv, 1.0 / %s)
//
// Separately that is three runtime calls (msamp_rt_amax, _compute_scale,
// _quantize) and a host division, and on the GPU every value crosses back
// to the host between them. When %a and %h have no other user, %s's other
// users come after %q and the scale is for %q's format, the chain becomes
//
//   msamp_rt_quantize_jit(%x, %prev, q, %x, s, i, dtypes, K, margin, 0)
//
// (docs/RuntimeABI.md 3.12; out_t, ignored without the transpose flag, is
// %x's buffer again; when a linalg.transpose reads %q's codes transposed,
// getCodesTranspose, its result is out_t and the flag is set), bit-identical to
// the three calls: the runtime composes the same functions. A lone `1.0 / %s`
// after %q (an arith.divf, or the 0-d linalg.generic
// convert-elementwise-to-linalg made of it) reads the call's scale_inv output
// instead (the same correctly rounded division).
//
// Chains that do not have this form are left to the per-op patterns, and
// when they nearly do, a missed remark (-remarks-filter=msamp, emitted
// before the walk, while the chains are intact) names why:
//
//  * delayed scaling (msamp-fp8-gemms' activations and gradients at O2):
//    the amax feeds msamp.update_amax_history, a state the next step reads,
//    the scale that quantizes is this step's state or a warm-up select of
//    it, and with reduce-amax the amax is all-reduced first; there the
//    quantize does not wait for its own amax, so there is nothing to fuse;
//  * an amax all-reduced between amax and scale (FP8 weight gradients): a
//    collective the call cannot contain;
//  * an amax or history that another op also reads, a scale read before the
//    quantize (the call is emitted at the quantize), or a scale for another
//    format than the quantize's.
//
// The amax and compute_scale patterns (ScalingToRuntime.cpp) skip an op
// that getFusedCastQuantize says this pattern will replace: the walk
// visits them first, in program order.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Remarks.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The ops of one just-in-time cast chain.
struct JitCastChain {
  AmaxOp amax;
  tensor::ExpandShapeOp history;
  ComputeScaleOp scale;
  QuantizeOp quantize;
};

/// Whether `user` (or the op of `block` it is nested in) comes after `op`.
bool isAfter(Operation *user, Operation *op) {
  Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
  return ancestor && op->isBeforeInBlock(ancestor);
}

/// The chain `q` ends, if `q`'s scale is a most_recent compute_scale of the
/// expanded amax of `q`'s own input: `chain` is filled and the result says
/// why it cannot be fused ("" when it can). std::nullopt when `q` is no
/// just-in-time cast at all (delayed scaling, a constant scale).
std::optional<std::string> matchChain(QuantizeOp q, JitCastChain &chain) {
  auto scale = q.getScale().getDefiningOp<ComputeScaleOp>();
  if (!scale || scale.getAlgo() != AmaxAlgo::MostRecent)
    return std::nullopt;
  auto history = scale.getAmaxHistory().getDefiningOp<tensor::ExpandShapeOp>();
  if (!history)
    return std::nullopt;
  Value amaxValue = history.getSrc();
  if (auto reduce = amaxValue.getDefiningOp<AllReduceOp>()) {
    auto amax = reduce.getInput().getDefiningOp<AmaxOp>();
    if (amax && amax.getInput() == q.getInput())
      return std::string("its amax is all-reduced over the data-parallel "
                         "group before the scale, a collective the fused "
                         "call cannot contain");
    return std::nullopt;
  }
  auto amax = amaxValue.getDefiningOp<AmaxOp>();
  if (!amax || amax.getInput() != q.getInput())
    return std::nullopt;
  chain = {amax, history, scale, q};
  Block *block = q->getBlock();
  if (amax->getBlock() != block || history->getBlock() != block ||
      scale->getBlock() != block)
    return std::string("the chain spans several blocks");
  if (!amax.getResult().hasOneUse() || !history.getResult().hasOneUse())
    return std::string("its amax is also read by another op");
  if (scale.getFormat() != q.getType().getElementType())
    return std::string("the scale is computed for another format than the "
                       "quantize's");
  for (Operation *user : scale.getResult().getUsers())
    if (user != q && !isAfter(user, q))
      return std::string("its scale is read before the quantize");
  return std::string();
}

/// The chain `q` ends when it can be fused, else null (and why in `why`).
std::optional<JitCastChain> fusableChain(QuantizeOp q,
                                         const MSAMPToRuntimeState &state,
                                         std::string *why = nullptr) {
  if (!state.fuseCasts)
    return std::nullopt;
  JitCastChain chain;
  std::optional<std::string> reason = matchChain(q, chain);
  if (!reason)
    return std::nullopt;
  if (!reason->empty()) {
    if (why)
      *why = *reason;
    return std::nullopt;
  }
  return chain;
}

} // namespace

/// Whether `value` is the constant 1.0 (a scalar or a splat tensor).
static bool isOne(Value value) {
  FloatAttr scalar;
  if (matchPattern(value, m_Constant(&scalar)))
    return scalar.getValue().isExactlyValue(1.0);
  DenseFPElementsAttr splat;
  return matchPattern(value, m_Constant(&splat)) && splat.isSplat() &&
         splat.getSplatValue<APFloat>().isExactlyValue(1.0);
}

/// `1.0 / scale`, the inverse scale a GEMM reads: an `arith.divf` on the
/// 0-d tensor, or, once convert-elementwise-to-linalg has run (both
/// lowerings), the 0-d `linalg.generic` it became.
bool mlir::msamp::isScaleInverse(Operation *user, Value scale) {
  if (auto div = dyn_cast<arith::DivFOp>(user))
    return div.getRhs() == scale && isOne(div.getLhs());
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumResults() != 1 || generic.getNumLoops() != 0 ||
      generic.getDpsInputOperand(0)->get() != scale)
    return false;
  Block &body = generic.getRegion().front();
  auto div = dyn_cast<arith::DivFOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return div && &body.front() == yield->getPrevNode() &&
         yield.getOperand(0) == div.getResult() &&
         div.getRhs() == body.getArgument(0) && isOne(div.getLhs());
}

namespace {

struct FusedCastToRuntime : RuntimeCallPattern<QuantizeOp> {
  // Benefit 3: tried before QuantizeTransposeToRuntime and
  // QuantizeToRuntime.
  FusedCastToRuntime(MLIRContext *ctx, MSAMPToRuntimeState &state)
      : RuntimeCallPattern(ctx, state, /*benefit=*/3) {}

  LogicalResult match(QuantizeOp op) const override {
    return success(fusableChain(op, state).has_value());
  }

  void lower(QuantizeOp op, RuntimeCall &call) const override {
    JitCastChain chain = *fusableChain(op, state);
    Value scale = chain.scale.getResult();
    // One `1 / scale` reads the call's scale_inv; several keep dividing.
    Operation *inverse = nullptr;
    unsigned inverses = 0;
    for (Operation *user : scale.getUsers())
      if (isScaleInverse(user, scale)) {
        inverse = user;
        ++inverses;
      }
    if (inverses != 1)
      inverse = nullptr;
    auto scalarType = getScalarF32Type(op.getContext());
    // The codes read transposed (QuantizeTransposeToRuntime.cpp) are out_t.
    Operation *transpose = getCodesTranspose(op);
    call.replaceOp(
        RuntimeFn::QuantizeJit,
        {call.input(op.getInput()), call.input(chain.scale.getPrevScale()),
         call.output(op.getType()),
         // out_t, not looked at without the transpose flag: the input's
         // buffer again (a dummy() would be a constant copied into a fresh
         // buffer on every step).
         transpose ? call.outputFor(transpose->getResult(0))
                   : call.input(op.getInput()),
         call.outputFor(scale),
         inverse ? call.outputFor(inverse->getResult(0))
                 : call.scratch(scalarType),
         call.i32(RuntimeCall::dtype(op.getInput())),
         call.i32(RuntimeCall::dtype(op.getResult())),
         call.i32(static_cast<int64_t>(chain.scale.getKind())),
         call.i32(chain.scale.getMarginAttr().getValue().getSExtValue()),
         call.i32(transpose ? MSAMP_RT_QUANTIZE_JIT_TRANSPOSE : 0)});
    PatternRewriter &rewriter = call.getRewriter();
    rewriter.eraseOp(chain.scale);
    rewriter.eraseOp(chain.history);
    rewriter.eraseOp(chain.amax);
    if (inverse)
      state.replacedOps.insert(inverse);
    if (transpose)
      state.replacedOps.insert(transpose);
    ++state.numFusedCasts;
  }
};

} // namespace

Operation *mlir::msamp::getFusedCastQuantize(Operation *amaxOrScale,
                                             const MSAMPToRuntimeState &state) {
  if (!state.fuseCasts)
    return nullptr;
  Value amaxValue;
  if (auto amax = dyn_cast<AmaxOp>(amaxOrScale)) {
    amaxValue = amax.getResult();
  } else if (auto scale = dyn_cast<ComputeScaleOp>(amaxOrScale)) {
    auto history =
        scale.getAmaxHistory().getDefiningOp<tensor::ExpandShapeOp>();
    if (!history)
      return nullptr;
    amaxValue = history.getSrc();
  }
  // Follow the chain forward: amax -> expand_shape -> compute_scale ->
  // the quantize of the amax's input.
  if (!amaxValue || !amaxValue.hasOneUse())
    return nullptr;
  auto history = dyn_cast<tensor::ExpandShapeOp>(*amaxValue.user_begin());
  if (!history || !history.getResult().hasOneUse())
    return nullptr;
  auto scale = dyn_cast<ComputeScaleOp>(*history.getResult().user_begin());
  if (!scale)
    return nullptr;
  for (Operation *user : scale.getResult().getUsers())
    if (auto q = dyn_cast<QuantizeOp>(user))
      if (q.getScale() == scale.getResult())
        if (std::optional<JitCastChain> chain = fusableChain(q, state))
          if (chain->scale == scale)
            return q;
  return nullptr;
}

void mlir::msamp::remarkUnfusedJitCasts(func::FuncOp step,
                                        const MSAMPToRuntimeState &state) {
  if (!state.fuseCasts)
    return;
  step.walk([&](QuantizeOp q) {
    std::string why;
    if (!fusableChain(q, state, &why) && !why.empty())
      remark::missed(q.getLoc(), remarkOptions("convert-msamp-to-runtime",
                                               "JitCastNotFused"))
          << ("just-in-time cast left as separate calls: " + why);
  });
}

void mlir::msamp::populateFusedCastToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<FusedCastToRuntime>(patterns.getContext(), state);
}
