//===- MSAMPToRuntime.h - msamp ops to runtime calls ------------*- C++ -*-===//
//
// The patterns of convert-msamp-to-runtime (lib/Conversion/MSAMPToRuntime):
// one per op kind, each replacing its op by one call of a runtime entry point
// (RuntimeSymbols.h, msamp_entry_points.h). They share one
// MSAMPToRuntimeState with the pass, which applies them to @train_step in
// one walk and then writes the updated state back in place.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CONVERSION_MSAMPTORUNTIME_H
#define MSAMP_CONVERSION_MSAMPTORUNTIME_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::msamp {

class BlockOrder;

/// What the patterns and the pass share while one train step is lowered:
/// which state argument each returned value updates (from msamp.updates),
/// and the state buffers that runtime calls have written in place so far.
class MSAMPToRuntimeState {
public:
  explicit MSAMPToRuntimeState(func::FuncOp step);

  func::FuncOp getStep() const { return step; }

  /// The state argument `result` will be written back to, if `operand` is
  /// that argument and `op` is its last reader (so writing it in place is
  /// invisible to the rest of the step); null otherwise. `sameCall` are the
  /// other ops one call replaces together with `op`: their reads happen in
  /// that call, so they do not count as later readers.
  BlockArgument getInPlaceTarget(Operation *op, Value operand, Value result,
                                 ArrayRef<Operation *> sameCall = {}) const;

  /// Records that a runtime call writes `buffer`, the to_buffer of state
  /// argument `arg`, in place.
  void addInPlaceBuffer(Value buffer, BlockArgument arg);
  /// Records that `tensor` wraps the in-place `buffer` after its call.
  void addInPlaceResult(Value tensor, Value buffer);
  /// The buffer of `arg` that a runtime call wrote `value` into, or null.
  Value lookupInPlaceBuffer(Value value, BlockArgument arg) const;

  /// Counts for the pass's statistics.
  unsigned numCalls = 0;
  unsigned numInPlace = 0;
  unsigned numFusedCasts = 0;

  /// Whether just-in-time cast chains become one msamp_rt_quantize_jit call
  /// (the pass's fuse-casts option; FusedCastToRuntime.cpp).
  bool fuseCasts = true;
  /// Ops after the one being lowered whose results its call writes (the
  /// `1 / scale` a fused cast's scale_inv replaces, the transpose of codes a
  /// quantize writes as out_t): erased when the walk reaches them, since an
  /// op after the visited one must not be erased during the walk
  /// (populateMSAMPToRuntimePatterns' EraseReplacedOps).
  llvm::SmallPtrSet<Operation *, 8> replacedOps;
  /// The order of the step's ops, kept by the walk's listener (BlockOrder.h):
  /// getInPlaceTarget's "before" queries in constant time. Null: they use
  /// isBeforeInBlock.
  const BlockOrder *order = nullptr;

private:
  func::FuncOp step;
  llvm::DenseMap<Value, unsigned> stateResultArg;      // returned value -> arg
  llvm::DenseMap<Value, BlockArgument> inPlaceBuffers; // buffer -> arg
  llvm::DenseMap<Value, Value> inPlaceResults;         // tensor -> buffer
};

/// The discardable i64 attribute msamp-gpu-group-adam-updates puts on the
/// msamp.adam_update ops it groups: a run of adjacent updates with the same
/// id (and canShareAdamCall) becomes one msamp_rt_adam_update_multi call.
constexpr llvm::StringLiteral kAdamGroupAttr = "msamp.adam_group";

/// Whether two msamp.adam_update ops can be rows of one
/// msamp_rt_adam_update_multi call: the same lr and step values,
/// hyper-parameters and mode, the same dtypes and the same optional scales.
bool canShareAdamCall(Operation *a, Operation *b);

/// Whether `other` (null allowed) is a row of `op`'s group call when the
/// two are adjacent: the same kAdamGroupAttr id and canShareAdamCall.
bool isAdamGroupPartner(Operation *op, Operation *other);

/// The run of adjacent updates that `op`'s group call lowers, in order
/// (just `op` when it has no kAdamGroupAttr or no partner next to it).
/// Linear in the run: the patterns' matches look at the neighbours only.
SmallVector<Operation *> getAdamGroupRun(Operation *op);

/// Whether `user` computes `1.0 / scale`, the inverse scale a GEMM reads: an
/// `arith.divf` on the 0-d tensor or, once convert-elementwise-to-linalg has
/// run, the 0-d `linalg.generic` made of it (FusedCastToRuntime.cpp).
bool isScaleInverse(Operation *user, Value scale);

/// The msamp.quantize whose codes `value` holds as [rows, cols] (cols the
/// quantize's last dimension), the layout whose transpose
/// msamp_rt_quantize_transpose and msamp_rt_quantize_jit write as out_t:
/// a rank-2 quantize's result, or a tensor.collapse_shape (in the
/// quantize's block) of a quantize's result to rank 2 that keeps its last
/// dimension. Null otherwise
/// (QuantizeTransposeToRuntime.cpp).
Operation *getQuantizeOfRowsCols(Value value);

/// The linalg.transpose (permutation [1, 0], in the quantize's block) of
/// `quantize`'s codes as [rows, cols] (getQuantizeOfRowsCols) whose result
/// the quantize's call writes as out_t, or null.
Operation *getCodesTranspose(Operation *quantize);

/// Adds the patterns that lower every msamp op, and every GEMM left in high
/// precision, inside `state`'s step to runtime calls. They are written for
/// walkAndApplyPatterns (one visit per op, in order, nothing folded): a
/// pattern decides in place updates from the uses before and after its op.
void populateMSAMPToRuntimePatterns(RewritePatternSet &patterns,
                                    MSAMPToRuntimeState &state);

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_MSAMPTORUNTIME_H
