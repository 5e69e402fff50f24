//===- BF16Activations.cpp - forward activations stored in bf16 -----------===//
//
// activations=bf16 (docs/Interfaces.md 3, docs/Levels.md): the tensors the
// forward ops of the train step hand to each other, and in particular those
// kept for the backward, are stored in bf16 while every op computes in f32:
// autocast's storage, as MS-AMP and Transformer Engine train under it
// (docs/Levels.md says where torch.autocast's op-by-op dtypes differ). Each
// covered value is rounded to nearest even once, right after its producer, and
// the bf16 tensor is the value that crosses op boundaries, so bufferization
// allocates bf16 buffers and the memory of the activations halves.
//
// Which values (the rule docs/Levels.md states):
// a ranked f32 result of a top-level op of @train_step that
//  * depends on the data (an input or target argument): not a parameter, a
//    dequantized weight or a scale;
//  * the loss depends on: a forward value, not a backward one, a gradient
//    or an optimizer update;
//  * is a forward GEMM's result or feeds a forward GEMM: the values after
//    the last forward GEMM (the loss function: log-softmax, the difference
//    of a mean-squared error, the per-token losses) stay f32, as autocast
//    runs its loss functions in f32;
//  * is not a statistic: the result of a non-GEMM reduction (a norm's mean
//    and variance, a softmax's max and sum) or a value computed from
//    statistics alone (the reciprocal standard deviation) stays f32, as the
//    mean and rstd that torch's norms save are in f32.
// Producers are linalg ops and GEMMs (reshapes are redone on the bf16 tensor;
// msamp's FP8 ops - amaxes, amax histories, scales - and state the step
// returns stay f32).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPBF16ACTIVATIONS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// Discardable attribute of the widening copies made for consumers that
/// cannot widen in their body: a distinct value on each, so that CSE never
/// merges two of them into one f32 copy living from the first to the last
/// consumer (often forward to backward).
constexpr llvm::StringLiteral kWidenAttr = "msamp.bf16_widen";

bool isReshape(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

bool isGemm(Operation *op) { return isa<GemmOp>(op) || op->hasAttr(kGemmAttr); }

/// A reduction that is no GEMM: its results are statistics.
bool isStatisticReduction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && !isGemm(op) && linalgOp.getNumReductionLoops() > 0;
}

bool isStaticF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() > 0 && type.hasStaticShape() &&
         type.getElementType().isF32();
}

struct MSAMPBF16ActivationsPass
    : ::mlir::msamp::impl::MSAMPBF16ActivationsBase<MSAMPBF16ActivationsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The covered values of `step`, in program order.
  SmallVector<Value> coveredValues();
  /// Makes `use` read the bf16 `narrow` in place of its f32 value.
  void widenUse(OpOperand &use, Value narrow);

  func::FuncOp step;
  Block *body = nullptr;
  int64_t widenings = 0;
  SmallVector<Operation *> conversions;
};

/// Calls `fn` on every value of `body` that `op` reads, in its regions too.
void forEachInput(Operation *op, Block *body, function_ref<void(Value)> fn) {
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (v.getParentBlock() == body)
        fn(v);
  });
}

SmallVector<Value> MSAMPBF16ActivationsPass::coveredValues() {
  llvm::DenseSet<Value> data, statistics, lossReads, gemmReads;
  for (BlockArgument arg : body->getArguments()) {
    StringRef role = getArgRole(step, arg.getArgNumber());
    if (role == kRoleInput || role == kRoleTarget)
      data.insert(arg);
  }
  // Forward: what the data reaches, and which of it is statistics.
  for (Operation &op : *body) {
    bool fromData = false, fromActivation = false;
    forEachInput(&op, body, [&](Value v) {
      if (!data.contains(v))
        return;
      fromData = true;
      fromActivation |= !statistics.contains(v);
    });
    if (!fromData)
      continue;
    bool statistic =
        isStatisticReduction(&op) || (!isGemm(&op) && !fromActivation);
    for (Value result : op.getResults()) {
      data.insert(result);
      if (statistic)
        statistics.insert(result);
    }
  }
  // Backward: what the loss and the forward GEMMs read.
  auto ret = cast<func::ReturnOp>(body->getTerminator());
  for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i)
    if (getResultRole(step, i) == kRoleLoss)
      lossReads.insert(ret.getOperand(i));
  for (Operation &op : llvm::reverse(*body)) {
    bool forward = llvm::any_of(op.getResults(), [&](Value result) {
      return lossReads.contains(result);
    });
    if (!forward)
      continue;
    bool feedsGemm = isGemm(&op) || llvm::any_of(op.getResults(), [&](Value r) {
                       return gemmReads.contains(r);
                     });
    forEachInput(&op, body, [&](Value v) {
      lossReads.insert(v);
      if (feedsGemm)
        gemmReads.insert(v);
    });
  }

  SmallVector<Value> covered;
  for (Operation &op : *body) {
    // The computing ops: msamp's other ops are the FP8 machinery (amaxes,
    // amax histories, scales, casts) and the optimizer.
    if (!isa<linalg::LinalgOp>(op) && !isa<GemmOp>(op))
      continue;
    for (Value result : op.getResults())
      if (isStaticF32Tensor(result) && data.contains(result) &&
          !llvm::any_of(
              result.getUsers(),
              [](Operation *user) { return isa<func::ReturnOp>(user); }) &&
          !statistics.contains(result) && lossReads.contains(result) &&
          (isGemm(&op) || gemmReads.contains(result)))
        covered.push_back(result);
  }
  return covered;
}

void MSAMPBF16ActivationsPass::widenUse(OpOperand &use, Value narrow) {
  Operation *owner = use.getOwner();
  Operation *top = body->findAncestorOpInBlock(*owner);
  auto narrowType = cast<RankedTensorType>(narrow.getType());
  Type f32 = Float32Type::get(&getContext());
  OpBuilder b(&getContext());
  if (top == owner) {
    // A generic widens in its body: no f32 tensor at all.
    auto generic = dyn_cast<linalg::GenericOp>(owner);
    if (generic && generic.isDpsInput(&use)) {
      BlockArgument arg = generic.getMatchingBlockArgument(&use);
      use.set(narrow);
      arg.setType(narrowType.getElementType());
      b.setInsertionPointToStart(generic.getBody());
      auto wide = arith::ExtFOp::create(b, owner->getLoc(), f32, arg);
      arg.replaceAllUsesExcept(wide, wide);
      conversions.push_back(generic);
      return;
    }
    // The FP8 amax and cast read bf16 themselves (widened exactly, the
    // same values as the widened copy: RuntimeABI.md 3.1, 3.3).
    if (isa<AmaxOp>(owner) ||
        (isa<QuantizeOp>(owner) && use.getOperandNumber() == 0)) {
      use.set(narrow);
      return;
    }
    // A reshape is redone on the bf16 tensor, and its readers read that.
    if (isReshape(owner)) {
      b.setInsertionPoint(owner);
      Operation *clone = b.clone(*owner);
      clone->setOperand(0, narrow);
      auto oldType = cast<RankedTensorType>(owner->getResult(0).getType());
      clone->getResult(0).setType(oldType.clone(narrowType.getElementType()));
      SmallVector<OpOperand *> uses;
      for (OpOperand &u : owner->getResult(0).getUses())
        uses.push_back(&u);
      for (OpOperand *u : uses)
        widenUse(*u, clone->getResult(0));
      owner->erase();
      return;
    }
  }
  // Anything else (an f32 GEMM, a named reduction, another msamp op) reads
  // its own widened copy, made right before it.
  b.setInsertionPoint(top);
  auto wide = buildElementwiseConvert(b, owner->getLoc(), narrow, f32);
  wide->setAttr(kWidenAttr, b.getI64IntegerAttr(widenings++));
  conversions.push_back(wide);
  use.set(wide.getResult(0));
}

void MSAMPBF16ActivationsPass::runOnOperation() {
  ModuleOp module = getOperation();
  step = getTrainStepOrError(module, "--msamp-bf16-activations");
  if (!step)
    return signalPassFailure();
  auto level = step->getAttrOfType<StringAttr>(kLevelAttr);
  if (level && level.getValue() == stringifyEnum(TrainStepLevel::O0)) {
    step.emitError("activations=bf16 is not available at O0, the all-f32 "
                   "baseline: use a mixed-precision level (O1, O2, O3, "
                   "amp-bf16, amp-fp16 or te)");
    return signalPassFailure();
  }
  body = &step.getBody().front();
  Type bf16 = BFloat16Type::get(&getContext());
  for (Value value : coveredValues()) {
    Operation *producer = value.getDefiningOp();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      uses.push_back(&use);
    auto narrowType = cast<RankedTensorType>(value.getType()).clone(bf16);
    Value narrow;
    auto gemm = dyn_cast<GemmOp>(producer);
    if (gemm && !gemm.getAmax()) {
      // The GEMM rounds its f32 accumulation to nearest even itself
      // (RuntimeABI.md 3.6): the same bf16 values, no f32 output buffer.
      value.setType(narrowType);
      narrow = value;
    } else {
      OpBuilder b(producer);
      b.setInsertionPointAfter(producer);
      auto rounding = buildElementwiseConvert(b, value.getLoc(), value, bf16);
      conversions.push_back(rounding);
      narrow = rounding.getResult(0);
    }
    for (OpOperand *use : uses)
      widenUse(*use, narrow);
    remark::passed(value.getLoc(),
                   remarkOptions("bf16-activations", "ActivationInBF16"))
        << "activation stored in bf16";
  }
  step->setAttr(kActivationsAttr, StringAttr::get(&getContext(), "bf16"));
  if (failed(expandBF16Conversions(conversions)))
    return signalPassFailure();
}

} // namespace
