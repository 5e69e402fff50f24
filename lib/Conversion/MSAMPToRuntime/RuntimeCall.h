//===- RuntimeCall.h - one op becomes one runtime call ----------*- C++ -*-===//
//
// What every pattern of convert-msamp-to-runtime does around its call
// (docs/RuntimeABI.md 2): tensors handed to the runtime as unranked buffers,
// fresh or in-place output buffers, scalar arguments, and the outputs
// wrapped back into tensors that replace the op's results. A pattern lists
// the arguments in the entry point's order and calls `replaceOp`:
//
//   struct AmaxToRuntime : RuntimeCallPattern<AmaxOp> {
//     using RuntimeCallPattern::RuntimeCallPattern;
//     void lower(AmaxOp op, RuntimeCall &call) const override {
//       call.replaceOp(RuntimeFn::Amax,
//                      {call.input(op.getInput()), call.output(op.getType()),
//                       call.i32(RuntimeCall::dtype(op.getInput()))});
//     }
//   };
//
// The arguments are created in the order they are listed (a braced list
// evaluates left to right), which keeps the emitted IR in argument order.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_CONVERSION_MSAMPTORUNTIME_RUNTIMECALL_H
#define MSAMP_LIB_CONVERSION_MSAMPTORUNTIME_RUNTIMECALL_H

#include "MSAMP/Conversion/MSAMPToRuntime.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/IR/PatternMatch.h"

#include <array>

namespace mlir::msamp {

/// The call that replaces one op, built in front of it.
class RuntimeCall {
public:
  /// Builds the call in front of `op`.
  RuntimeCall(MSAMPToRuntimeState &state, PatternRewriter &rewriter,
              Operation *op);

  /// A tensor handed to the runtime for reading.
  Value input(Value tensor);
  /// `input(tensor)`, or `dummy()` for an absent optional operand.
  Value optional(Value tensor);
  /// The placeholder for an absent tensor (a scale, an amax output): a 0-d
  /// 1.0 the runtime ignores.
  Value dummy();

  /// A fresh buffer for the op's next result of type `tensorType`.
  Value output(Type tensorType);
  /// The same for the next result of `owner`, another op the call replaces
  /// too (replaceOps).
  Value output(Operation *owner, Type tensorType);
  /// A fresh buffer whose tensor replaces `replaced`, a result of another op
  /// than the one lowered (a fused call's intermediate value, e.g. the scale
  /// of a just-in-time cast); the caller erases that op.
  Value outputFor(Value replaced);
  /// A fresh buffer the runtime writes and nothing reads (an output the
  /// entry point requires but the op has no result for).
  Value scratch(Type tensorType);
  /// The buffer for `result`, the new value of state `operand`: the state
  /// argument's own buffer when the op is its last reader (written in
  /// place), a fresh one otherwise.
  Value stateOutput(Value operand, Value result);
  /// The same for a result of `owner`, another op the call replaces too
  /// (a call for several ops: replaceOps); `sameCall` are the call's other
  /// ops, whose reads of `operand` are the call's own
  /// (MSAMPToRuntimeState::getInPlaceTarget).
  Value stateOutput(Operation *owner, Value operand, Value result,
                    ArrayRef<Operation *> sameCall = {});

  Value i32(int64_t value);
  Value i64(int64_t value);
  Value f64(double value);
  /// The runtime's dtype code of `value`'s element type (msamp_rt_dtype).
  static int32_t dtype(Value value);

  /// The rewriter, at the call's position (for operands built first).
  PatternRewriter &getRewriter() { return rewriter; }

  /// Emits the call of `fn` with `args`, wraps each output back into a
  /// tensor that replaces the op's next result of its type (outputs are
  /// created in result order) and erases the op.
  void replaceOp(RuntimeFn fn, ValueRange args);
  /// Emits the call of `fn` in front of the last of `ops` (the op this
  /// RuntimeCall was built for) and replaces the results of every op with
  /// the outputs created for it, in order.
  void replaceOps(RuntimeFn fn, ValueRange args, ArrayRef<Operation *> ops);

private:
  /// Ranked buffer -> unranked buffer of the same element type.
  Value erase(Value buffer);

  MSAMPToRuntimeState &state;
  PatternRewriter &rewriter;
  Operation *op;
  Location loc;
  struct Output {
    Value buffer;
    Type tensorType;
    bool inPlace;
    Operation *owner;         ///< the op whose result the buffer becomes
    Value replaced = nullptr; ///< set by outputFor: replaces this value
  };
  /// The outputs, in result order.
  SmallVector<Output> outputs;
  /// The in-place outputs: the call operand and its state argument.
  SmallVector<std::pair<Value, BlockArgument>> inPlaceHandles;
};

/// A pattern that lowers every op of one kind to one runtime call: a
/// subclass lists the entry point's arguments in `lower`, which ends with
/// `call.replaceOp`.
template <typename OpTy>
struct RuntimeCallPattern : OpRewritePattern<OpTy> {
  RuntimeCallPattern(MLIRContext *ctx, MSAMPToRuntimeState &state,
                     PatternBenefit benefit = 1)
      : OpRewritePattern<OpTy>(ctx, benefit), state(state) {}

  virtual void lower(OpTy op, RuntimeCall &call) const = 0;
  /// Whether this pattern lowers `op` (before anything is built).
  virtual LogicalResult match(OpTy op) const { return success(); }

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    if (failed(match(op)))
      return failure();
    RuntimeCall call(state, rewriter, op);
    lower(op, call);
    return success();
  }

protected:
  MSAMPToRuntimeState &state;
};

/// The patterns by op family (one file each).
void populateScalingToRuntimePatterns(RewritePatternSet &patterns,
                                      MSAMPToRuntimeState &state);
void populateGemmToRuntimePatterns(RewritePatternSet &patterns,
                                   MSAMPToRuntimeState &state);
void populateCollectiveToRuntimePatterns(RewritePatternSet &patterns,
                                         MSAMPToRuntimeState &state);
void populateOptimizerToRuntimePatterns(RewritePatternSet &patterns,
                                        MSAMPToRuntimeState &state);
void populateAdamGroupToRuntimePatterns(RewritePatternSet &patterns,
                                        MSAMPToRuntimeState &state);
void populateCheckToRuntimePatterns(RewritePatternSet &patterns,
                                    MSAMPToRuntimeState &state);
void populateFusedCastToRuntimePatterns(RewritePatternSet &patterns,
                                        MSAMPToRuntimeState &state);
void populateScaleUpdateToRuntimePatterns(RewritePatternSet &patterns,
                                          MSAMPToRuntimeState &state);
void populateQuantizeTransposeToRuntimePatterns(RewritePatternSet &patterns,
                                                MSAMPToRuntimeState &state);

/// Emits a missed remark at each just-in-time cast chain of `step` that
/// cannot be fused, saying why (before the patterns run).
void remarkUnfusedJitCasts(func::FuncOp step, const MSAMPToRuntimeState &state);

/// The msamp.quantize that ends a just-in-time cast chain starting at `amax`
/// which one msamp_rt_quantize_jit call replaces (FusedCastToRuntime.cpp),
/// or null: the amax and compute_scale patterns leave such a chain to it.
Operation *getFusedCastQuantize(Operation *amaxOrScale,
                                const MSAMPToRuntimeState &state);

/// The msamp.quantize of a delayed-scaling `op`'s input with the scale it
/// chose that one msamp_rt_quantize_scale_update replaces together with
/// `op` (ScaleUpdateToRuntime.cpp), or null.
QuantizeOp getAmaxFusedQuantize(ScaleUpdateOp op,
                                const MSAMPToRuntimeState &state);

/// The to_buffer of state argument `arg` at `b`'s position, writable, and
/// its unranked cast (what an in-place output hands to the runtime).
Value createStateBuffer(OpBuilder &b, Location loc, BlockArgument arg,
                        Value &buffer);

/// One in-place state of an Adam update: the operand, its new value, and
/// its scale and new scale (null when unscaled).
struct AdamState {
  Value operand, result, scale, newScale;
};

/// The param, exp_avg and exp_avg_sq states of `op`, in the ABI's order of
/// outputs (the same for msamp_rt_adam_update and each row of
/// msamp_rt_adam_update_multi).
std::array<AdamState, 3> adamStates(AdamUpdateOp op);

/// Appends the entry point's trailing arguments of an Adam update, the same
/// for one tensor (msamp_rt_adam_update) and a group
/// (msamp_rt_adam_update_multi, where `op` is the group's first): the four
/// dtypes, beta1, beta2, eps, weight decay and the flags.
void appendAdamSettings(RuntimeCall &call, AdamUpdateOp op,
                        SmallVectorImpl<Value> &args);

} // namespace mlir::msamp

#endif // MSAMP_LIB_CONVERSION_MSAMPTORUNTIME_RUNTIMECALL_H
