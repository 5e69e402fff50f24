//===- OptimizerToRuntime.cpp - optimizer updates to runtime calls -------===//
//
// msamp.adam_update and sgd_update become msamp_rt_adam_update and
// _sgd_update (docs/RuntimeABI.md 3.8, 3.9). An update that is the last
// reader of its state writes it in place; an absent scale is a dummy.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct AdamUpdateToRuntime : RuntimeCallPattern<AdamUpdateOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  /// An update grouped with its neighbours is AdamGroupToRuntime's.
  LogicalResult match(AdamUpdateOp op) const override {
    return success(!isAdamGroupPartner(op, op->getPrevNode()) &&
                   !isAdamGroupPartner(op, op->getNextNode()));
  }
  void lower(AdamUpdateOp op, RuntimeCall &call) const override {
    SmallVector<Value> args = {
        call.input(op.getParam()),    call.optional(op.getParamScale()),
        call.input(op.getGrad()),     call.optional(op.getGradScaleInv()),
        call.input(op.getExpAvg()),   call.optional(op.getExpAvgScale()),
        call.input(op.getExpAvgSq()), call.optional(op.getExpAvgSqScale()),
        call.input(op.getLr()),       call.input(op.getStep())};
    // Each new state value and its new scale (a dummy when unscaled).
    for (const AdamState &state : adamStates(op)) {
      args.push_back(call.stateOutput(state.operand, state.result));
      args.push_back(state.newScale
                         ? call.stateOutput(state.scale, state.newScale)
                         : call.dummy());
    }
    appendAdamSettings(call, op, args);
    call.replaceOp(RuntimeFn::AdamUpdate, args);
  }
};

struct SGDUpdateToRuntime : RuntimeCallPattern<SGDUpdateOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(SGDUpdateOp op, RuntimeCall &call) const override {
    SmallVector<Value> args = {call.input(op.getParam()),
                               call.optional(op.getParamScale()),
                               call.input(op.getGrad()),
                               call.optional(op.getGradScaleInv()),
                               call.optional(op.getMomentumBuffer()),
                               call.input(op.getLr()),
                               call.input(op.getStep())};
    args.push_back(call.stateOutput(op.getParam(), op.getNewParam()));
    args.push_back(
        op.getNewParamScale()
            ? call.stateOutput(op.getParamScale(), op.getNewParamScale())
            : call.dummy());
    args.push_back(op.getNewMomentumBuffer()
                       ? call.stateOutput(op.getMomentumBuffer(),
                                          op.getNewMomentumBuffer())
                       : call.dummy());
    int32_t flags =
        (op.getNesterov() ? MSAMP_RT_SGD_NESTEROV : 0) |
        (op.getMomentumBuffer() ? MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER : 0);
    args.append({call.i32(RuntimeCall::dtype(op.getParam())),
                 call.i32(RuntimeCall::dtype(op.getGrad())),
                 call.f64(op.getMomentum().convertToDouble()),
                 call.f64(op.getWeightDecay().convertToDouble()),
                 call.i32(flags)});
    call.replaceOp(RuntimeFn::SGDUpdate, args);
  }
};
} // namespace

std::array<AdamState, 3> mlir::msamp::adamStates(AdamUpdateOp op) {
  return {AdamState{op.getParam(), op.getNewParam(), op.getParamScale(),
                    op.getNewParamScale()},
          AdamState{op.getExpAvg(), op.getNewExpAvg(), op.getExpAvgScale(),
                    op.getNewExpAvgScale()},
          AdamState{op.getExpAvgSq(), op.getNewExpAvgSq(),
                    op.getExpAvgSqScale(), op.getNewExpAvgSqScale()}};
}

void mlir::msamp::appendAdamSettings(RuntimeCall &call, AdamUpdateOp op,
                                     SmallVectorImpl<Value> &args) {
  int32_t flags = (op.getDecoupled() ? MSAMP_RT_ADAM_DECOUPLED : 0) |
                  (op.getAdamMode().value_or(0) == 1 ? MSAMP_RT_ADAM_MODE1 : 0);
  args.append({call.i32(RuntimeCall::dtype(op.getParam())),
               call.i32(RuntimeCall::dtype(op.getGrad())),
               call.i32(RuntimeCall::dtype(op.getExpAvg())),
               call.i32(RuntimeCall::dtype(op.getExpAvgSq())),
               call.f64(op.getBeta1().convertToDouble()),
               call.f64(op.getBeta2().convertToDouble()),
               call.f64(op.getEps().convertToDouble()),
               call.f64(op.getWeightDecay().convertToDouble()),
               call.i32(flags)});
}

void mlir::msamp::populateOptimizerToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<AdamUpdateToRuntime, SGDUpdateToRuntime>(patterns.getContext(),
                                                        state);
}
