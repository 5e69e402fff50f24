//===- MSAMPToRuntime.cpp - msamp ops and GEMMs to runtime calls ---------===//
//
// The bridge between the tensor-level train step and the runtime ABI
// (docs/RuntimeABI.md). Runs before one-shot bufferization:
//
//   %r = msamp.quantize %x, %s : tensor<AxB xf32> to tensor<AxB xf8E4M3FN>
// becomes
//   %xb = bufferization.to_buffer %x read_only      (then cast to unranked)
//   %rb = memref.alloc() : memref<AxBxf8E4M3FN>
//   func.call @msamp_rt_quantize__0(%xb', %sb', %rb', %c0, %c3)
//   %r = bufferization.to_tensor %rb restrict writable
//
// so that one-shot bufferization sees ordinary buffers and the runtime sees
// one uniform calling convention (pointers to unranked descriptors; the
// typed declarations become the canonical memref<*xi8> ones after buffer
// deallocation, msamp-finalize-runtime-calls). This pass must run right
// before one-shot bufferization: to_buffer is Pure, and CSE would merge a
// later read into an earlier to_buffer of the same tensor. GEMMs in
// high precision go to the runtime too: every GEMM at every level, O0
// included, uses the same optimized path.
//
// Each op kind is one pattern, in a file per family (Scaling-, Gemm-,
// Collective-, Optimizer- and CheckToRuntime.cpp, built on RuntimeCall.h);
// this file holds the state they share, populateMSAMPToRuntimePatterns and
// the pass, which applies them and then writes the state back.
//
// The state contract changes here from "results marked msamp.updates" to
// "arguments updated in place": each updated state argument receives its new
// value with bufferization.materialize_in_destination (an optimizer or
// broadcast op that is the last reader of its state writes it directly and
// the materialize is then a self-copy; msamp-check-in-place-states checks
// after bufferization that it stayed so), the loss and then every "metric"
// result (--msamp-grad-stats: grad_norm, nonfinite), in result order, are
// written into trailing 0-d output arguments (roles "loss_output" and
// "metric_output"), and the function returns nothing.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/MSAMPToRuntime.h"
#include "BlockOrder.h"
#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "RuntimeCall.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_CONVERTMSAMPTORUNTIME
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

MSAMPToRuntimeState::MSAMPToRuntimeState(func::FuncOp step) : step(step) {
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i)
    if (auto updates = step.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr))
      stateResultArg[ret.getOperand(i)] = updates.getInt();
}

/// True when every use of `value` (through view-like ops) is before `op`,
/// apart from the uses by the ops in `sameCall` (lowered with `op`).
/// `visited` holds the values already checked: the walk follows every
/// tensor result downstream, and in a graph with many paths between two
/// values (residual connections) an unmemoized walk is exponential.
/// `order`, if not null, orders the ops of `op`'s block.
static bool allUsesBefore(Value value, Operation *op, const BlockOrder *order,
                          ArrayRef<Operation *> sameCall,
                          llvm::DenseSet<Value> &visited) {
  if (!visited.insert(value).second)
    return true;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user == op || llvm::is_contained(sameCall, user))
      continue;
    Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || !(order ? order->isBefore(ancestor, op)
                             : ancestor->isBeforeInBlock(op)))
      return false;
    for (Value r : user->getResults())
      if (isa<TensorType>(r.getType()) &&
          !allUsesBefore(r, op, order, sameCall, visited))
        return false;
  }
  return true;
}

BlockArgument
MSAMPToRuntimeState::getInPlaceTarget(Operation *op, Value operand,
                                      Value result,
                                      ArrayRef<Operation *> sameCall) const {
  auto arg = dyn_cast_or_null<BlockArgument>(operand);
  if (!arg || arg.getOwner() != &getStep().getBody().front())
    return nullptr;
  auto it = stateResultArg.find(result);
  if (it == stateResultArg.end() || it->second != arg.getArgNumber())
    return nullptr;
  llvm::DenseSet<Value> visited;
  if (!allUsesBefore(arg, op, order, sameCall, visited))
    return nullptr;
  return arg;
}

void MSAMPToRuntimeState::addInPlaceBuffer(Value buffer, BlockArgument arg) {
  inPlaceBuffers[buffer] = arg;
}

void MSAMPToRuntimeState::addInPlaceResult(Value tensor, Value buffer) {
  inPlaceResults[tensor] = buffer;
}

Value MSAMPToRuntimeState::lookupInPlaceBuffer(Value value,
                                               BlockArgument arg) const {
  Value buffer = inPlaceResults.lookup(value);
  if (buffer && inPlaceBuffers.lookup(buffer) != arg)
    return nullptr;
  return buffer;
}

namespace {
/// Erases an op whose results a call lowered before it already writes
/// (MSAMPToRuntimeState::replacedOps), when the walk reaches it.
struct EraseReplacedOps : RewritePattern {
  EraseReplacedOps(MLIRContext *ctx, MSAMPToRuntimeState &state)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/3, ctx), state(state) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!state.replacedOps.erase(op))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }

private:
  MSAMPToRuntimeState &state;
};
} // namespace

void mlir::msamp::populateMSAMPToRuntimePatterns(RewritePatternSet &patterns,
                                                 MSAMPToRuntimeState &state) {
  patterns.add<EraseReplacedOps>(patterns.getContext(), state);
  populateScalingToRuntimePatterns(patterns, state);
  populateGemmToRuntimePatterns(patterns, state);
  populateCollectiveToRuntimePatterns(patterns, state);
  populateOptimizerToRuntimePatterns(patterns, state);
  populateAdamGroupToRuntimePatterns(patterns, state);
  populateCheckToRuntimePatterns(patterns, state);
  populateFusedCastToRuntimePatterns(patterns, state);
  populateScaleUpdateToRuntimePatterns(patterns, state);
  populateQuantizeTransposeToRuntimePatterns(patterns, state);
}

namespace {
struct ConvertMSAMPToRuntimePass
    : ::mlir::msamp::impl::ConvertMSAMPToRuntimeBase<
          ConvertMSAMPToRuntimePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// Writes every updated state argument in place, the loss and the metrics
  /// into trailing output arguments, and makes the step return nothing.
  LogicalResult writeResultsInPlace(MSAMPToRuntimeState &state);
};
} // namespace

/// Erases the step's ops left without uses and without side effects.
static void eraseDeadTensorOps(func::FuncOp step) {
  // What the calls made dead, chiefly the zero init of a GEMM the runtime
  // overwrites: one-shot bufferization, next with nothing folding in
  // between, bufferizes an unused op like any other, and a dead fill into
  // a view of an empty that later ops share zeroed a buffer for nobody (on
  // the issue's LM a 403 MB fill kernel per step, issue 23). From the back,
  // so that a chain (fill, expand_shape, empty) goes in one sweep.
  Block &entry = step.getBody().front();
  for (Operation *op = entry.getTerminator()->getPrevNode(); op;) {
    Operation *prev = op->getPrevNode();
    if (isOpTriviallyDead(op))
      op->erase();
    op = prev;
  }
}

void ConvertMSAMPToRuntimePass::runOnOperation() {
  func::FuncOp step =
      getTrainStepOrError(getOperation(), "--convert-msamp-to-runtime");
  if (!step)
    return signalPassFailure();
  MSAMPToRuntimeState state(step);
  state.fuseCasts = fuseCasts;
  remarkUnfusedJitCasts(step, state);
  RewritePatternSet patterns(&getContext());
  populateMSAMPToRuntimePatterns(patterns, state);
  // One visit per op in program order: each pattern sees the ops before it
  // already lowered and those after it not yet, which its in-place
  // decisions rely on; no folding, so the step keeps its form. The patterns
  // erase only through the rewriter, which BlockOrder requires.
  BlockOrder order(step.getBody().front());
  state.order = &order;
  walkAndApplyPatterns(step, std::move(patterns), &order);
  state.order = nullptr;
  numCalls += state.numCalls;
  numInPlace += state.numInPlace;
  numFusedCasts += state.numFusedCasts;

  WalkResult unlowered = step.walk([](Operation *op) {
    if (!isa<MSAMPDialect>(op->getDialect()))
      return WalkResult::advance();
    op->emitError("no runtime lowering for this op");
    return WalkResult::interrupt();
  });
  if (unlowered.wasInterrupted() || failed(writeResultsInPlace(state)))
    return signalPassFailure();
  eraseDeadTensorOps(step);
}

LogicalResult
ConvertMSAMPToRuntimePass::writeResultsInPlace(MSAMPToRuntimeState &state) {
  func::FuncOp step = state.getStep();
  Block &entry = step.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  Value loss;
  SmallVector<std::pair<Value, StringRef>> metrics; // result order
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    Value value = ret.getOperand(i);
    auto updates = step.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr);
    if (!updates) {
      StringRef role = getResultRole(step, i);
      if (role == kRoleLoss && !loss) {
        loss = value;
      } else if (role == kRoleMetric) {
        metrics.push_back({value, getResultName(step, i)});
      } else {
        // The runtime would have nowhere to find it.
        step.emitError("result #")
            << i << " (role \"" << role
            << "\") is neither the loss, nor a metric, nor a state update; "
               "the runtime ABI cannot return it";
        return failure();
      }
      continue;
    }
    BlockArgument arg = step.getArgument(updates.getInt());
    if (value == arg)
      continue;
    // A value a runtime call already wrote into the argument's buffer is
    // materialized into that same buffer value: a fresh to_buffer of the
    // argument here would read its value from before the call, and one-shot
    // bufferization would then copy every such argument before its call.
    // The materialize still reads `value` at the end, so no later op may
    // reuse its buffer; should bufferization nevertheless write the call's
    // output out of place, msamp-check-in-place-states copies it back.
    Value dest = state.lookupInPlaceBuffer(value, arg);
    if (!dest)
      createStateBuffer(b, loc, arg, dest);
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, value, dest, /*restrict=*/true,
        /*writable=*/true);
  }
  if (!loss) {
    step.emitError("the train step has no loss result");
    return failure();
  }
  // The runtime's descriptor table: the N arguments of the manifest, the
  // loss, then the metrics in manifest "outputs" order (= result order).
  auto writeOutput = [&](Value value, StringRef role, StringRef name) {
    BlockArgument out = addStateArgument(step, value.getType(), role, name, "");
    Value dest;
    createStateBuffer(b, loc, out, dest);
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, value, dest, /*restrict=*/true,
        /*writable=*/true);
  };
  writeOutput(loss, "loss_output", "loss");
  for (auto [value, name] : metrics)
    writeOutput(value, "metric_output", name);
  func::ReturnOp::create(b, loc, ValueRange{});
  ret.erase();
  llvm::BitVector allResults(step.getNumResults(), true);
  (void)step.eraseResults(allResults);
  // The C wrapper passes every memref as a pointer to its descriptor, which
  // the packed entry point (msamp-emit-entry-point) forwards generically.
  step->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(&getContext()));
  return success();
}
