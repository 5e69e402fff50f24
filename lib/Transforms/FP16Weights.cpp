//===- FP16Weights.cpp - GEMM weights stored as scaled FP16 -----*- C++ -*-===//
//
// MS-AMP's O1/O2 weights (docs/Numerics.md 4.2): every Linear weight is kept as
// an FP16 ScalingTensor, stored = real * scale with a per-tensor power-of-two
// scale, and the optimizer writes the new FP16 value and its new scale. This
// pass gives every GEMM weight of @train_step that storage
// (docs/TrainStep.md 2 "O1"):
//
//   %w: tensor<5x3xf16>, %s: tensor<f32> {msamp.name = "fc1.weight.scale"}
//   %inv = arith.divf %one, %s : tensor<f32>
//   %wd  = msamp.dequantize %w, %inv : tensor<5x3xf16> to tensor<5x3xf32>
//   ... every former use of the f32 weight reads %wd ...
//   %w1, %s1, ... = msamp.adam_update param %w scale %s : tensor<5x3xf16>, ...
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/RebuildOptimizer.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Regex.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFP16WEIGHTS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

/// Replaces the results of `oldOp` by those of `newOp`, matched by ODS result
/// group (value, scale, value, scale, ...). A value whose storage type changed
/// is returned as is; any other user (none in the form synthesis produces)
/// reads it dequantized with the new scale, so it keeps seeing real values.
template <typename OpTy>
static void replaceResults(func::FuncOp func, OpTy oldOp, OpTy newOp) {
  unsigned numGroups = oldOp.getProperties().resultSegmentSizes.size();
  for (unsigned g = 0; g < numGroups; ++g) {
    auto oldResults = oldOp.getODSResults(g);
    if (oldResults.empty())
      continue;
    Value oldValue = oldResults.front();
    Value newValue = newOp.getODSResults(g).front();
    if (oldValue.getType() == newValue.getType()) {
      oldValue.replaceAllUsesWith(newValue);
      continue;
    }
    Value dequantized;
    for (OpOperand &use : llvm::make_early_inc_range(oldValue.getUses())) {
      if (isa<func::ReturnOp>(use.getOwner())) {
        use.set(newValue);
        continue;
      }
      if (!dequantized) {
        OpBuilder b(newOp->getContext());
        Value one = getOrCreateScalarOne(func);
        b.setInsertionPointAfter(newOp);
        Value newScale = newOp.getODSResults(g + 1).front();
        Value inv = arith::DivFOp::create(b, newOp.getLoc(), one, newScale);
        dequantized = DequantizeOp::create(b, newOp.getLoc(),
                                           oldValue.getType(), newValue, inv);
      }
      use.set(dequantized);
    }
  }
}

namespace {
struct MSAMPFP16WeightsPass
    : ::mlir::msamp::impl::MSAMPFP16WeightsBase<MSAMPFP16WeightsPass> {
  using Base::Base;

  // Passes.td declares no statistic for this pass; one is kept here for
  // --mlir-pass-statistics (a no-op in NDEBUG builds of LLVM, where the
  // optimization remark is the record).
  Statistic numFP16Weights{this, "num-fp16-weights",
                           "GEMM weights stored as scaled FP16"};

  void runOnOperation() override;

private:
  FailureOr<Operation *> findUpdate(StepSignature &signature, unsigned index);
  void convert(StepSignature &signature, unsigned index, Operation *update,
               Value one, OpBuilder &prologue);
};
} // namespace

void MSAMPFP16WeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Validate the option before looking at the IR, so that a typo is reported
  // even for a module the pass would not change.
  std::optional<llvm::Regex> excludeRe;
  if (!exclude.empty()) {
    excludeRe.emplace(exclude);
    std::string error;
    if (!excludeRe->isValid(error)) {
      module.emitError() << "invalid exclude regex '" << exclude << "' for --"
                         << getArgument() << ": " << error;
      return signalPassFailure();
    }
  }

  func::FuncOp func = getTrainStepOrError(module, getArgument());
  if (!func)
    return signalPassFailure();

  // Arguments are appended while converting (to one signature, written
  // once: StepSignature.h), and an error must leave the step as it was: find
  // and check every candidate first.
  StepSignature signature(func);
  SmallVector<std::pair<unsigned, Operation *>> candidates;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (getArgRole(func, i) != kRoleParam ||
        !func.getArgAttr(i, kGemmWeightAttr))
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    // Only f32 storage is converted: an f16 param was converted by an
    // earlier run (the pass is idempotent), anything else is another level's
    // storage and not ours to change.
    if (!type || !type.getElementType().isF32())
      continue;
    StringRef name = getArgName(func, i);
    if (excludeRe && excludeRe->match(name)) {
      // Say why on request: an f32 weight at O1 looks like a bug otherwise.
      remark::missed(func.getArgument(i).getLoc(),
                     remarkOptions("fp16-weights", "fp16-weight-excluded"))
          << remark::add("GEMM weight '{0}' kept in f32", name)
          << remark::reason("it matches exclude regex '{0}'",
                            std::string(exclude));
      continue;
    }
    FailureOr<Operation *> update = findUpdate(signature, i);
    if (failed(update))
      return signalPassFailure();
    candidates.emplace_back(i, *update);
  }
  if (candidates.empty())
    return;

  // The dequantized weights are read at the top of the body, in param order,
  // right after the constant `one`.
  Value one = getOrCreateScalarOne(func);
  OpBuilder prologue(func.getContext());
  prologue.setInsertionPointAfterValue(one);
  for (auto [index, update] : candidates)
    convert(signature, index, update, one, prologue);
}

/// The optimizer op whose `param` is argument `index`, found before any use
/// of the param is rewritten, after checking that the step returns its new
/// value as the param's update.
FailureOr<Operation *>
MSAMPFP16WeightsPass::findUpdate(StepSignature &signature, unsigned index) {
  func::FuncOp func = signature.getFunc();
  BlockArgument param = func.getArgument(index);
  StringRef name = getArgName(func, index);
  Operation *update = nullptr;
  for (Operation *user : param.getUsers()) {
    Value updated;
    if (auto adam = dyn_cast<AdamUpdateOp>(user))
      updated = adam.getParam();
    else if (auto sgd = dyn_cast<SGDUpdateOp>(user))
      updated = sgd.getParam();
    if (updated != param || user == update)
      continue;
    if (update) {
      // Report at the later op, independently of the use-list order.
      Operation *first = update, *second = user;
      if (first->getBlock() == second->getBlock() &&
          second->isBeforeInBlock(first))
        std::swap(first, second);
      InFlightDiagnostic diag = second->emitError()
                                << "GEMM weight '" << name
                                << "' is updated by more than one optimizer op";
      diag.attachNote(first->getLoc()) << "the other update is here";
      return failure();
    }
    update = user;
  }
  if (!update)
    return emitError(param.getLoc())
           << "GEMM weight '" << name
           << "' is not the param of any msamp.adam_update or "
              "msamp.sgd_update; cannot store it as scaled FP16";
  // The weight's new value must be what the step returns for it, or the
  // result would keep the f32 type while the argument becomes f16.
  std::optional<unsigned> result = signature.findUpdatingResult(index);
  Value returned =
      result ? func.getBody().front().getTerminator()->getOperand(*result)
             : Value();
  if (!returned || returned != update->getResult(0))
    return update->emitError() << "the result updating GEMM weight '" << name
                               << "' must be the new param of its optimizer op";
  return update;
}

void MSAMPFP16WeightsPass::convert(StepSignature &signature, unsigned index,
                                   Operation *update, Value one,
                                   OpBuilder &prologue) {
  func::FuncOp func = signature.getFunc();
  MLIRContext *ctx = func.getContext();
  BlockArgument param = func.getArgument(index);
  StringRef name = signature.getArgName(index);
  auto f32Type = cast<RankedTensorType>(param.getType());

  // Storage: f16 of the same shape, plus the scale (stored = real * scale).
  // "from_param": the runtime derives the initial scale from the f32 initial
  // value, 2^floor(log2(65504 / amax)) as MS-AMP's just-in-time cast does.
  signature.setType(index, f32Type.clone(Float16Type::get(ctx)));
  BlockArgument scale =
      signature.addArgument(getScalarF32Type(ctx), kRoleScalingState,
                            (name + ".scale").str(), kInitFromParam);

  // Every other reader sees the real value, dequantized before any use.
  Location loc = param.getLoc();
  Value inv = arith::DivFOp::create(prologue, loc, one, scale);
  auto dequantize = DequantizeOp::create(prologue, loc, f32Type, param, inv);
  SmallPtrSet<Operation *, 2> keep = {dequantize, update};
  param.replaceAllUsesExcept(dequantize, keep);

  // The optimizer reads and writes the scaled FP16 value itself: it returns
  // the new FP16 weight and its new just-in-time scale.
  OpBuilder b(ctx);
  OptimizerOverrides overrides;
  overrides.param = ScaledOperand{param, scale};
  Operation *newUpdate = rebuildOptimizerOp(b, update, overrides);
  if (auto adam = dyn_cast<AdamUpdateOp>(update)) {
    auto newAdam = cast<AdamUpdateOp>(newUpdate);
    replaceResults(func, adam, newAdam);
    signature.setResult(index, newAdam.getNewParam());
    signature.addResult(newAdam.getNewParamScale(), scale.getArgNumber());
  } else {
    auto newSgd = cast<SGDUpdateOp>(newUpdate);
    replaceResults(func, cast<SGDUpdateOp>(update), newSgd);
    signature.setResult(index, newSgd.getNewParam());
    signature.addResult(newSgd.getNewParamScale(), scale.getArgNumber());
  }
  update->erase();
  ++numFP16Weights;
  remark::passed(loc, remarkOptions("fp16-weights", "fp16-weight"))
      << remark::add("GEMM weight '{0}' stored as scaled f16 with scale "
                     "argument '{0}.scale'",
                     name);
}
