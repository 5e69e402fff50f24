//===- ScalingToRuntime.cpp - casts and scaling state to runtime calls ----===//
//
// msamp.quantize, dequantize, amax, compute_scale and update_amax_history
// become msamp_rt_quantize, _dequantize, _amax, _compute_scale and
// _update_amax_history (docs/RuntimeABI.md 3.1-3.5).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct QuantizeToRuntime : RuntimeCallPattern<QuantizeOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(QuantizeOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::Quantize,
                   {call.input(op.getInput()), call.input(op.getScale()),
                    call.output(op.getType()),
                    call.i32(RuntimeCall::dtype(op.getInput())),
                    call.i32(RuntimeCall::dtype(op.getResult()))});
  }
};

struct DequantizeToRuntime : RuntimeCallPattern<DequantizeOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(DequantizeOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::Dequantize,
                   {call.input(op.getInput()), call.input(op.getScaleInv()),
                    call.output(op.getType()),
                    call.i32(RuntimeCall::dtype(op.getInput())),
                    call.i32(RuntimeCall::dtype(op.getResult()))});
  }
};

struct AmaxToRuntime : RuntimeCallPattern<AmaxOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult match(AmaxOp op) const override {
    return failure(getFusedCastQuantize(op, state) != nullptr);
  }
  void lower(AmaxOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::Amax,
                   {call.input(op.getInput()), call.output(op.getType()),
                    call.i32(RuntimeCall::dtype(op.getInput()))});
  }
};

struct ComputeScaleToRuntime : RuntimeCallPattern<ComputeScaleOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult match(ComputeScaleOp op) const override {
    return failure(getFusedCastQuantize(op, state) != nullptr);
  }
  void lower(ComputeScaleOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::ComputeScale,
                   {call.input(op.getAmaxHistory()),
                    call.input(op.getPrevScale()), call.output(op.getType()),
                    call.i32(static_cast<int64_t>(op.getKind())),
                    call.i32(static_cast<int64_t>(op.getAlgo())),
                    call.i32(getRuntimeDTypeCode(op.getFormat())),
                    call.i32(op.getMarginAttr().getValue().getSExtValue())});
  }
};

struct UpdateAmaxHistoryToRuntime : RuntimeCallPattern<UpdateAmaxHistoryOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(UpdateAmaxHistoryOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::UpdateAmaxHistory,
                   {call.input(op.getAmaxHistory()), call.input(op.getAmax()),
                    call.stateOutput(op.getAmaxHistory(), op.getResult())});
  }
};
} // namespace

void mlir::msamp::populateScalingToRuntimePatterns(RewritePatternSet &patterns,
                                                   MSAMPToRuntimeState &state) {
  patterns.add<QuantizeToRuntime, DequantizeToRuntime, AmaxToRuntime,
               ComputeScaleToRuntime, UpdateAmaxHistoryToRuntime>(
      patterns.getContext(), state);
}
