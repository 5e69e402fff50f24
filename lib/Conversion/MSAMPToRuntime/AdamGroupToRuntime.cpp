//===- AdamGroupToRuntime.cpp - many Adam updates, one runtime call -------===//
//
// A run of adjacent msamp.adam_update ops that msamp-gpu-group-adam-updates
// gave the same kAdamGroupAttr id becomes one msamp_rt_adam_update_multi
// call (docs/RuntimeABI.md 3.8a), in front of the run's last op:
//
//   %t = memref.alloca() : memref<Nx15xi64>
//   (per update r: the buffers msamp_rt_adam_update would take, their
//    addresses through memref.extract_aligned_pointer_as_index, stored in
//    row r after its element count; an absent scale is 0)
//   func.call @msamp_rt_adam_update_multi(%t', %lr', %step', dtypes...,
//                                         beta1, beta2, eps, wd, flags)
//
// Each update keeps its own in-place decision (its state is written in
// place when it is the last reader, as for a single call): the updates are
// adjacent, so no op between them can read a state the call writes. The
// pattern fires on the run's last op (walkAndApplyPatterns visits in
// order); AdamUpdateToRuntime leaves the earlier ones to it.
//
// The table lives on the host stack and holds addresses, which no buffer
// analysis follows; that is safe because the calls' buffers are freed only
// at the end of the step (the deallocation pipeline's placement,
// BufferPlan.cpp) and the stores and the call are adjacent.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::msamp;

/// The types of the values an update reads and writes, its optional
/// operands and results present or not: equal for updates of one call.
static SmallVector<Type> adamSignature(AdamUpdateOp op) {
  SmallVector<Type> types;
  auto add = [&](Value v) {
    types.push_back(v ? getElementTypeOrSelf(v.getType()) : Type());
  };
  for (Value v :
       {op.getParam(), op.getParamScale(), op.getGrad(), op.getGradScaleInv(),
        op.getExpAvg(), op.getExpAvgScale(), op.getExpAvgSq(),
        op.getExpAvgSqScale(), op.getNewParamScale(), op.getNewExpAvgScale(),
        op.getNewExpAvgSqScale()})
    add(v);
  return types;
}

bool mlir::msamp::canShareAdamCall(Operation *a, Operation *b) {
  auto x = dyn_cast<AdamUpdateOp>(a), y = dyn_cast<AdamUpdateOp>(b);
  if (!x || !y)
    return false;
  return x.getLr() == y.getLr() && x.getStep() == y.getStep() &&
         x.getBeta1() == y.getBeta1() && x.getBeta2() == y.getBeta2() &&
         x.getEps() == y.getEps() && x.getWeightDecay() == y.getWeightDecay() &&
         x.getDecoupled() == y.getDecoupled() &&
         x.getAdamMode() == y.getAdamMode() &&
         adamSignature(x) == adamSignature(y);
}

bool mlir::msamp::isAdamGroupPartner(Operation *op, Operation *other) {
  auto id = op->getAttrOfType<IntegerAttr>(kAdamGroupAttr);
  auto otherId =
      other ? other->getAttrOfType<IntegerAttr>(kAdamGroupAttr) : nullptr;
  return id && otherId == id && canShareAdamCall(op, other);
}

SmallVector<Operation *> mlir::msamp::getAdamGroupRun(Operation *op) {
  Operation *first = op;
  while (isAdamGroupPartner(op, first->getPrevNode()))
    first = first->getPrevNode();
  SmallVector<Operation *> run = {first};
  while (run.back() != op || isAdamGroupPartner(op, run.back()->getNextNode()))
    run.push_back(run.back()->getNextNode());
  return run;
}

namespace {
struct AdamGroupToRuntime : RuntimeCallPattern<AdamUpdateOp> {
  using RuntimeCallPattern::RuntimeCallPattern;

  /// Only the last op of a run of two or more (AdamUpdateToRuntime declines
  /// every op of such a run).
  LogicalResult match(AdamUpdateOp op) const override {
    return success(isAdamGroupPartner(op, op->getPrevNode()) &&
                   !isAdamGroupPartner(op, op->getNextNode()));
  }

  void lower(AdamUpdateOp last, RuntimeCall &call) const override {
    SmallVector<Operation *> run = getAdamGroupRun(last);
    PatternRewriter &b = call.getRewriter();
    Location loc = last.getLoc();
    // The outputs first: each update's in-place decision looks at the uses
    // of its state as they are, before the reads below add any after it.
    // replaceOps then moves each in-place to_buffer right before its first
    // user, the table store below every read (one-shot bufferization must
    // see an argument's old value read before the to_buffer that writes).
    SmallVector<SmallVector<Value>> outputs;
    for (Operation *member : run) {
      auto op = cast<AdamUpdateOp>(member);
      SmallVector<Value> &out = outputs.emplace_back();
      for (const AdamState &state : adamStates(op)) {
        out.push_back(call.stateOutput(op, state.operand, state.result));
        out.push_back(state.newScale
                          ? call.stateOutput(op, state.scale, state.newScale)
                          : Value());
      }
    }
    // Then the reads; a row is the columns after numel, in the ABI's order.
    SmallVector<SmallVector<Value>> rows;
    for (auto [member, out] : llvm::zip_equal(run, outputs)) {
      auto op = cast<AdamUpdateOp>(member);
      auto optional = [&](Value v) { return v ? call.input(v) : Value(); };
      SmallVector<Value> &row = rows.emplace_back();
      row = {call.input(op.getParam()),    optional(op.getParamScale()),
             call.input(op.getGrad()),     optional(op.getGradScaleInv()),
             call.input(op.getExpAvg()),   optional(op.getExpAvgScale()),
             call.input(op.getExpAvgSq()), optional(op.getExpAvgSqScale())};
      row.append(out.begin(), out.end());
    }

    auto tableType = MemRefType::get(
        {static_cast<int64_t>(run.size()), MSAMP_RT_ADAM_TABLE_COLUMNS},
        b.getI64Type());
    Value table = memref::AllocaOp::create(b, loc, tableType);
    // One constant per index (the walk driver folds nothing).
    SmallVector<Value> indices;
    auto index = [&](int64_t i) {
      while (static_cast<int64_t>(indices.size()) <= i)
        indices.push_back(arith::ConstantIndexOp::create(
            b, loc, static_cast<int64_t>(indices.size())));
      return indices[i];
    };
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    for (auto [r, member] : llvm::enumerate(run)) {
      auto type = cast<RankedTensorType>(
          cast<AdamUpdateOp>(member).getParam().getType());
      Value numel =
          arith::ConstantIntOp::create(b, loc, type.getNumElements(), 64);
      memref::StoreOp::create(b, loc, numel, table, {index(r), index(0)});
      for (auto [c, handle] : llvm::enumerate(rows[r])) {
        Value address = zero;
        if (handle) {
          Value pointer =
              memref::ExtractAlignedPointerAsIndexOp::create(b, loc, handle);
          address = arith::IndexCastOp::create(b, loc, b.getI64Type(), pointer);
        }
        memref::StoreOp::create(b, loc, address, table,
                                {index(r), index(c + 1)});
      }
    }

    auto first = cast<AdamUpdateOp>(run.front());
    Value tableHandle = memref::CastOp::create(
        b, loc, UnrankedMemRefType::get(b.getI64Type(), Attribute()), table);
    SmallVector<Value> args = {tableHandle, call.input(first.getLr()),
                               call.input(first.getStep())};
    appendAdamSettings(call, first, args);
    call.replaceOps(RuntimeFn::AdamUpdateMulti, args, run);
  }
};
} // namespace

void mlir::msamp::populateAdamGroupToRuntimePatterns(
    RewritePatternSet &patterns, MSAMPToRuntimeState &state) {
  patterns.add<AdamGroupToRuntime>(patterns.getContext(), state);
}
