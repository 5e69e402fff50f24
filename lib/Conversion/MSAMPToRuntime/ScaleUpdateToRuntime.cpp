//===- ScaleUpdateToRuntime.cpp - msamp.scale_update to one call ----------===//
//
// msamp.scale_update (made by msamp-gpu-fuse-scale-updates) becomes
// msamp_rt_scale_update (docs/RuntimeABI.md 3.13). The rolled history and
// the next scale are written in place into their state arguments when the
// op is the last reader of each (as msamp_rt_update_amax_history and
// msamp_rt_compute_scale were); the scale and its inverse get fresh
// buffers, which the quantize and the GEMMs read after the call.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct ScaleUpdateToRuntime : RuntimeCallPattern<ScaleUpdateOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
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
} // namespace

void mlir::msamp::populateScaleUpdateToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<ScaleUpdateToRuntime>(patterns.getContext(), state);
}
