//===- CollectiveToRuntime.cpp - collectives to runtime calls ---*- C++ -*-===//
//
// msamp.all_reduce, reduce, broadcast, reduce_scatter and all_gather become
// msamp_rt_all_reduce, _reduce, _broadcast, _reduce_scatter and _all_gather
// (docs/RuntimeABI.md 3.7, 3.7a, 3.7b, 3.7c, 3.7d), which run through the
// runtime's current collective.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"

using namespace mlir;
using namespace mlir::msamp;

// The dialect's reduction kinds are passed to the runtime as their values.
static_assert(static_cast<int>(ReduceKind::Sum) == MSAMP_RT_REDUCE_SUM &&
                  static_cast<int>(ReduceKind::Max) == MSAMP_RT_REDUCE_MAX &&
                  static_cast<int>(ReduceKind::Mean) == MSAMP_RT_REDUCE_MEAN,
              "msamp ReduceKind must match msamp_runtime.h");

/// The arguments msamp_rt_all_reduce and msamp_rt_reduce share: the payload
/// and its optional inverse scale, their outputs, dtype, kind and has_scale.
/// `op`'s results are the reduced payload and, with a scale, its new scale.
static SmallVector<Value> reduceArguments(RuntimeCall &call, Operation *op,
                                          Value input, Value scaleInv,
                                          ReduceKind kind) {
  Value result = op->getResult(0);
  Value resultScale = scaleInv ? op->getResult(1) : Value();
  return {call.input(input),
          call.optional(scaleInv),
          call.output(result.getType()),
          resultScale ? call.output(resultScale.getType()) : call.dummy(),
          call.i32(RuntimeCall::dtype(input)),
          call.i32(static_cast<int64_t>(kind)),
          call.i32(scaleInv ? 1 : 0)};
}

namespace {
struct AllReduceToRuntime : RuntimeCallPattern<AllReduceOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(AllReduceOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::AllReduce,
                   reduceArguments(call, op, op.getInput(), op.getScaleInv(),
                                   op.getKind()));
  }
};

/// ZeRO's reduce-to-owner: the all-reduce's arguments and the owner rank.
struct ReduceToRuntime : RuntimeCallPattern<ReduceOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(ReduceOp op, RuntimeCall &call) const override {
    SmallVector<Value> args = reduceArguments(call, op, op.getInput(),
                                              op.getScaleInv(), op.getKind());
    args.push_back(call.i32(static_cast<int64_t>(op.getRoot())));
    call.replaceOp(RuntimeFn::Reduce, args);
  }
};

struct BroadcastToRuntime : RuntimeCallPattern<BroadcastOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(BroadcastOp op, RuntimeCall &call) const override {
    // A rank that does not own the tensor receives into its state.
    Value result = call.stateOutput(op.getInput(), op.getResult());
    call.replaceOp(RuntimeFn::Broadcast,
                   {call.input(op.getInput()), result,
                    call.i32(RuntimeCall::dtype(op.getInput())),
                    call.i32(static_cast<int64_t>(op.getRoot()))});
  }
};

/// ZeRO's reduce-scatter of a flat bucket. An FP8 bucket is reduced as
/// codes: a placeholder scale in, and a scratch scale out that nothing reads.
struct ReduceScatterToRuntime : RuntimeCallPattern<ReduceScatterOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(ReduceScatterOp op, RuntimeCall &call) const override {
    const bool fp8 = !op.getInput().getType().getElementType().isF32();
    call.replaceOp(
        RuntimeFn::ReduceScatter,
        {call.input(op.getInput()), call.dummy(), call.output(op.getType()),
         fp8 ? call.scratch(getScalarF32Type(op.getContext())) : call.dummy(),
         call.i32(RuntimeCall::dtype(op.getInput())),
         call.i32(static_cast<int64_t>(op.getKind())), call.i32(fp8 ? 1 : 0)});
  }
};

/// ZeRO's all-gather of the new weights of a flat bucket.
struct AllGatherToRuntime : RuntimeCallPattern<AllGatherOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(AllGatherOp op, RuntimeCall &call) const override {
    call.replaceOp(RuntimeFn::AllGather,
                   {call.input(op.getInput()), call.output(op.getType()),
                    call.i32(RuntimeCall::dtype(op.getInput()))});
  }
};
} // namespace

void mlir::msamp::populateCollectiveToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<AllReduceToRuntime, ReduceToRuntime, BroadcastToRuntime,
               ReduceScatterToRuntime, AllGatherToRuntime>(
      patterns.getContext(), state);
}
