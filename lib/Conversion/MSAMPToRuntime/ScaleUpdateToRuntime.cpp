//===- ScaleUpdateToRuntime.cpp - msamp.scale_update to one call ----------===//
//
// msamp.scale_update (made by msamp-gpu-fuse-scale-updates) becomes
// msamp_rt_scale_update (docs/RuntimeABI.md 3.13). The rolled history and
// the next scale are written in place into their state arguments when the
// op is the last reader of each (as msamp_rt_update_amax_history and
// msamp_rt_compute_scale were); the scale and its inverse get fresh
// buffers, which the quantize and the GEMMs read after the call.
//
// A delayed-scaling cast, the update followed by the quantize of the same
// input with the scale it chose,
//
//   %h, %s, %si, %n = msamp.scale_update K A %x, %hist, %prev [use_jit %w]
//   %q = msamp.quantize %x, %s        (and maybe %q's codes transposed)
//
// becomes one msamp_rt_quantize_scale_update (RuntimeABI.md 3.15) at the
// quantize (GPU pipeline only: the CPU target has no msamp.scale_update), so
// that a device backend reads %x once: it takes the amax inside the cast with
// %prev, the scale a delayed cast uses; in MS-AMP's warm-up (%w set, decided on
// the device) it casts again with the just-in-time scale. The call computes
// what the two calls did, bit for bit (the CPU backend composes them). A
// just_in_time update is left alone: its scale needs the amax before the cast
// (two reads either way). So is a pair with something between the two ops that
// reads the update's results or its states (the call, at the quantize, writes
// the states in place).
//
//===----------------------------------------------------------------------===//

#include "BlockOrder.h"
#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

/// How far apart (ops in between) an update and its quantize may be; the
/// recipe writes them next to each other.
static constexpr int kMaxOpsBetween = 32;

QuantizeOp mlir::msamp::getAmaxFusedQuantize(ScaleUpdateOp op,
                                             const MSAMPToRuntimeState &state) {
  if (op.getJustInTime())
    return nullptr;
  // The walk's order (isBeforeInBlock would renumber the step after every
  // call it inserts).
  auto before = [&](Operation *a, Operation *b) {
    return state.order ? state.order->isBefore(a, b) : a->isBeforeInBlock(b);
  };
  // Without warm-up the cast uses the state %prev, and msamp-gpu-fuse-
  // scale-updates puts the update at the next scale, possibly after the
  // quantize; only a quantize after the update is taken.
  Value scale = op.getUseJit() ? op.getScale() : op.getPrevScale();
  Value input = op.getInput();
  Block *block = op->getBlock();
  QuantizeOp quantize;
  for (Operation *user : scale.getUsers()) {
    auto q = dyn_cast<QuantizeOp>(user);
    if (q && q.getInput() == input && q.getScale() == scale &&
        q->getBlock() == block && before(op, q) &&
        (!quantize || before(q, quantize)))
      quantize = q;
  }
  if (!quantize)
    return nullptr;
  // Nothing in between reads the update's results or its states.
  int between = 0;
  for (Operation *it = op->getNextNode(); it != quantize.getOperation();
       it = it->getNextNode()) {
    if (++between > kMaxOpsBetween)
      return nullptr;
    bool reads = false;
    it->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (operand.getDefiningOp() == op.getOperation() ||
            operand == op.getAmaxHistory() || operand == op.getPrevScale())
          reads = true;
    });
    if (reads)
      return nullptr;
  }
  return quantize;
}

namespace {

struct ScaleUpdateToRuntime : RuntimeCallPattern<ScaleUpdateOp> {
  using RuntimeCallPattern::RuntimeCallPattern;

  /// A cast that reads the input once takes this op (QuantizeScaleUpdate).
  LogicalResult match(ScaleUpdateOp op) const override {
    return success(!getAmaxFusedQuantize(op, state));
  }

  void lower(ScaleUpdateOp op, RuntimeCall &call) const override {
    int32_t flags = 0;
    if (op.getReduceAmax())
      flags |= MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX;
    if (op.getUseJit())
      flags |= MSAMP_RT_SCALE_UPDATE_SELECT_JIT;
    if (op.getJustInTime())
      flags |= MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME;
    // Outputs in result order: history, scale, scale_inv, next scale.
    call.replaceOp(RuntimeFn::ScaleUpdate,
                   {call.input(op.getInput()), call.input(op.getAmaxHistory()),
                    call.input(op.getPrevScale()),
                    call.optional(op.getUseJit()),
                    call.stateOutput(op.getAmaxHistory(), op.getNewHistory()),
                    call.output(op.getScale().getType()),
                    call.output(op.getScaleInv().getType()),
                    call.stateOutput(op.getPrevScale(), op.getNextScale()),
                    call.i32(RuntimeCall::dtype(op.getInput())),
                    call.i32(static_cast<int64_t>(op.getKind())),
                    call.i32(static_cast<int64_t>(op.getAlgo())),
                    call.i32(getRuntimeDTypeCode(op.getFormat())),
                    call.i32(op.getMarginAttr().getValue().getSExtValue()),
                    call.i32(flags)});
  }
};

/// The update and its quantize (and the codes' transpose) as one call.
struct QuantizeScaleUpdateToRuntime : RuntimeCallPattern<QuantizeOp> {
  // Benefit 4: before QuantizeTransposeToRuntime (2), whose layout this call
  // writes too; FusedCastToRuntime (3) takes only just-in-time chains.
  QuantizeScaleUpdateToRuntime(MLIRContext *ctx, MSAMPToRuntimeState &state)
      : RuntimeCallPattern(ctx, state, /*benefit=*/4) {}

  ScaleUpdateOp updateOf(QuantizeOp op) const {
    for (Operation *user : op.getInput().getUsers())
      if (auto update = dyn_cast<ScaleUpdateOp>(user))
        if (getAmaxFusedQuantize(update, state) == op)
          return update;
    return nullptr;
  }

  LogicalResult match(QuantizeOp op) const override {
    return success(updateOf(op) != nullptr);
  }

  void lower(QuantizeOp op, RuntimeCall &call) const override {
    ScaleUpdateOp update = updateOf(op);
    Operation *transpose = getCodesTranspose(op);
    int32_t flags = 0;
    if (update.getReduceAmax())
      flags |= MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX;
    if (update.getUseJit())
      flags |= MSAMP_RT_SCALE_UPDATE_SELECT_JIT;
    if (transpose)
      flags |= MSAMP_RT_SCALE_UPDATE_TRANSPOSE;
    // The states first: whether the call may write them in place is asked
    // of the update, whose state operands must have no reader after it but
    // this call. The call sits at the quantize, after the update, so the
    // to_buffers it makes for its own reads of the states (call.input) would
    // be such readers, and so is the quantize when it casts with %prev (no
    // warm-up): both read inside this call, before it writes (RuntimeABI.md
    // 3.15 lets the outputs alias these inputs). Without this the history
    // and next scale went to fresh buffers and bufferization copied each
    // back: a copy and a scalar kernel per delayed cast.
    Value newHistory = call.stateOutput(update, update.getAmaxHistory(),
                                        update.getNewHistory(), {op});
    Value scale = call.output(update, update.getScale().getType());
    Value scaleInv = call.output(update, update.getScaleInv().getType());
    Value nextScale = call.stateOutput(update, update.getPrevScale(),
                                       update.getNextScale(), {op});
    // The update's outputs in its result order (history, scale, scale_inv,
    // next scale; made above in that order), the quantize's codes, the
    // transpose's result.
    SmallVector<Value> args = {
        call.input(update.getInput()),
        call.input(update.getAmaxHistory()),
        call.input(update.getPrevScale()),
        call.optional(update.getUseJit()),
        call.output(op.getType()),
        transpose ? call.outputFor(transpose->getResult(0)) : call.dummy(),
        newHistory,
        scale,
        scaleInv,
        nextScale,
        call.i32(RuntimeCall::dtype(update.getInput())),
        call.i32(RuntimeCall::dtype(op.getResult())),
        call.i32(static_cast<int64_t>(update.getKind())),
        call.i32(static_cast<int64_t>(update.getAlgo())),
        call.i32(getRuntimeDTypeCode(update.getFormat())),
        call.i32(update.getMarginAttr().getValue().getSExtValue()),
        call.i32(flags)};
    call.replaceOps(RuntimeFn::QuantizeScaleUpdate, args, {update, op});
    if (transpose)
      state.replacedOps.insert(transpose);
  }
};

} // namespace

void mlir::msamp::populateScaleUpdateToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<ScaleUpdateToRuntime, QuantizeScaleUpdateToRuntime>(
      patterns.getContext(), state);
}
