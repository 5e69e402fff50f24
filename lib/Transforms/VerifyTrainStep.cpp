//===- VerifyTrainStep.cpp - final check of a train step --------*- C++ -*-===//
//
// The last pass of every --msamp-oN pipeline. It re-checks, from the IR alone,
// what docs/TrainStep.md promises to the runtime, the memory report and the
// manifest, so that a bug in any earlier pass surfaces as a located error
// here instead of as a wrong checkpoint or silently wrong numerics:
//
//  * the signature: the public @train_step with msamp.level, every argument
//    with a known msamp.role and a unique msamp.name and a static tensor type,
//    every low-precision state argument with its `<name>.scale`, the loss as
//    result 0, and every other result either updating exactly one state
//    argument of the same type or being a named 0-d f32 "metric" (a per-step
//    value such as the gradient norm, which updates nothing);
//  * the numerics: FP8 values and scaled FP16 values (stored = real * scale)
//    are only read and written by msamp ops, which carry the scales and
//    accumulate in f32, and by pure data movement. Any other op touching them
//    would do FP8 arithmetic or treat scaled storage as real values.
//
// The pass is an analysis: it never changes the IR.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GradStats.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPVERIFYTRAINSTEP
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

static constexpr llvm::StringLiteral kPassName = "--msamp-verify-train-step";

/// Roles of persistent state: carried from step to step, checkpointed, and the
/// only arguments a result may update.
static bool isStateRole(StringRef role) {
  return llvm::is_contained({kRoleParam, kRoleMasterParam, kRoleOptState,
                             kRoleStep, kRoleScalingState, kRoleBuffer,
                             kRoleRngState, kRoleLossScale},
                            role);
}

/// Every argument role of docs/Interfaces.md 2.
static bool isKnownArgRole(StringRef role) {
  return isStateRole(role) ||
         llvm::is_contained(
             {kRoleHyperparam, kRoleRank, kRoleInput, kRoleTarget}, role);
}

/// FP8 (and any narrower float) element types: formats in which only msamp
/// ops may compute, because only they know the scale and accumulate in f32.
static bool isFP8(Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return floatType && floatType.getWidth() <= 8;
}

static bool isF16(Type type) { return getElementTypeOrSelf(type).isF16(); }

/// Ops that only move or re-view bytes: they may carry FP8 and scaled FP16
/// values because they compute nothing with them (a quantized operand that is
/// reshaped or transposed keeps its scale). tensor.empty only provides the
/// destination of such an op.
static bool isDataMovement(Operation *op) {
  if (isa<tensor::EmptyOp, tensor::CastOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::ExtractSliceOp,
          tensor::InsertSliceOp>(op))
    return true;
  // Matched by name to keep the heavy Linalg headers out of this file.
  return op->getName().getStringRef() == "linalg.transpose";
}

static bool isMSAMPOp(Operation *op) {
  return op->getName().getDialectNamespace() ==
         MSAMPDialect::getDialectNamespace();
}

namespace {
struct MSAMPVerifyTrainStepPass
    : ::mlir::msamp::impl::MSAMPVerifyTrainStepBase<MSAMPVerifyTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getTrainStepOrError(getOperation(), kPassName);
    if (!func)
      return signalPassFailure();
    // Later checks index the entry block and the return op.
    if (failed(verifyFunction(func)))
      return signalPassFailure();
    // Run every check so that one run reports every independent problem.
    bool ok = succeeded(verifyArguments(func));
    ok &= succeeded(verifyResults(func));
    ok &= succeeded(verifyBody(func));
    if (!ok)
      signalPassFailure();
  }

  LogicalResult verifyFunction(func::FuncOp func);
  LogicalResult verifyArguments(func::FuncOp func);
  LogicalResult verifyResults(func::FuncOp func);
  LogicalResult verifyBody(func::FuncOp func);
};
} // namespace

LogicalResult MSAMPVerifyTrainStepPass::verifyFunction(func::FuncOp func) {
  // The runtime looks the step up by this exact symbol.
  if (func.getSymName() != kTrainStepName || !func.isPublic())
    return func.emitError("the train step must be the public function @")
           << kTrainStepName << ", found "
           << (func.isPublic() ? "public" : "non-public") << " @"
           << func.getSymName();
  if (func.isExternal())
    return func.emitError("the train step @")
           << kTrainStepName << " has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError("the train step must have a single block");
  // The memory report and the manifest record the level.
  if (!func->getAttrOfType<StringAttr>(kLevelAttr))
    return func.emitError("the train step has no string attribute ")
           << kLevelAttr;
  return success();
}

LogicalResult MSAMPVerifyTrainStepPass::verifyArguments(func::FuncOp func) {
  bool ok = true;
  llvm::StringMap<unsigned> byName;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    BlockArgument arg = func.getArgument(i);
    StringRef role = getArgRole(func, i);
    StringRef name = getArgName(func, i);
    if (role.empty()) {
      emitError(arg.getLoc()) << "argument #" << i << " has no " << kRoleAttr;
      ok = false;
    } else if (!isKnownArgRole(role)) {
      emitError(arg.getLoc())
          << "argument #" << i << " has unknown " << kRoleAttr << " \"" << role
          << "\"; expected param, master_param, opt_state, step, "
             "scaling_state, buffer, hyperparam, rank, input or target";
      ok = false;
    }
    if (name.empty()) {
      emitError(arg.getLoc()) << "argument #" << i << " has no " << kNameAttr;
      ok = false;
      continue;
    }
    // Names are the checkpoint's tensor names and the manifest's keys.
    auto [it, inserted] = byName.try_emplace(name, i);
    if (!inserted) {
      emitError(arg.getLoc())
          << "argument #" << i << " has the same " << kNameAttr << " \"" << name
          << "\" as argument #" << it->second;
      ok = false;
    }
    // The runtime allocates every argument from the manifest's shapes.
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape()) {
      emitError(arg.getLoc())
          << "argument '" << name << "' has type " << arg.getType()
          << "; train step arguments must be statically shaped tensors";
      ok = false;
    }
  }
  if (!ok)
    return failure();

  // A low-precision state tensor is meaningless without its scale (stored =
  // real * scale): the scale must travel with it as state of its own.
  StepSignature signature(func); // indexes the arguments by name
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    Type type = func.getArgument(i).getType();
    StringRef role = getArgRole(func, i);
    if (!isStateRole(role) || role == kRoleScalingState ||
        !(isFP8(type) || isF16(type)))
      continue;
    std::string scaleName = (getArgName(func, i) + ".scale").str();
    std::optional<unsigned> scale =
        signature.findArgument(scaleName, kRoleScalingState);
    if (!scale || func.getArgument(*scale).getType() !=
                      getScalarF32Type(func.getContext())) {
      emitError(func.getArgument(i).getLoc())
          << "argument '" << getArgName(func, i) << "' is stored as "
          << getElementTypeOrSelf(type)
          << " but has no scaling_state argument '" << scaleName
          << "' of type tensor<f32>";
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult MSAMPVerifyTrainStepPass::verifyResults(func::FuncOp func) {
  unsigned numResults = func.getNumResults();
  if (numResults == 0)
    return func.emitError("the train step returns nothing; result #0 must be "
                          "the loss");
  bool ok = true;
  Type loss = func.getResultTypes()[0];
  if (getResultRole(func, 0) != kRoleLoss ||
      loss != getScalarF32Type(func.getContext()) ||
      func.getResultAttr(0, kUpdatesAttr)) {
    func.emitError("result #0 must be the loss: ")
        << kRoleAttr << " = \"loss\", type tensor<f32> and no " << kUpdatesAttr
        << "; found role \"" << getResultRole(func, 0) << "\" and type "
        << loss;
    ok = false;
  }

  llvm::DenseMap<int64_t, unsigned> updaterOf;
  llvm::StringMap<unsigned> metricNamed;
  for (unsigned r = 1; r < numResults; ++r) {
    Attribute attr = func.getResultAttr(r, kUpdatesAttr);
    // A metric is read by the runtime after the step (by name, from the
    // manifest) and never fed back: one f32 scalar, no state behind it.
    if (getResultRole(func, r) == kRoleMetric) {
      StringRef name = getResultName(func, r);
      Type type = func.getResultTypes()[r];
      if (attr || type != getScalarF32Type(func.getContext()) || name.empty()) {
        func.emitError("result #")
            << r << " has " << kRoleAttr << " = \"" << kRoleMetric
            << "\" and must then be a named tensor<f32> without "
            << kUpdatesAttr << "; found name \"" << name << "\", type " << type
            << (attr ? " and an msamp.updates" : "");
        ok = false;
        continue;
      }
      auto [it, inserted] = metricNamed.try_emplace(name, r);
      if (!inserted) {
        func.emitError("results #")
            << it->second << " and #" << r << " are both the metric \"" << name
            << "\"";
        ok = false;
      }
      continue;
    }
    auto index = dyn_cast_or_null<IntegerAttr>(attr);
    if (!index) {
      func.emitError("result #")
          << r << " has no integer " << kUpdatesAttr
          << "; every result after the loss is the new value of a state "
             "argument or a \""
          << kRoleMetric << "\"";
      ok = false;
      continue;
    }
    int64_t a = index.getInt();
    if (a < 0 || a >= static_cast<int64_t>(func.getNumArguments())) {
      func.emitError("result #")
          << r << " has " << kUpdatesAttr << " = " << a << ", out of range for "
          << func.getNumArguments() << " arguments";
      ok = false;
      continue;
    }
    unsigned arg = static_cast<unsigned>(a);
    StringRef argRole = getArgRole(func, arg);
    if (!isStateRole(argRole)) {
      func.emitError("result #")
          << r << " updates argument #" << arg << " ('" << getArgName(func, arg)
          << "') of role \"" << argRole << "\", which is not persistent state";
      ok = false;
      continue;
    }
    Type resultType = func.getResultTypes()[r];
    if (resultType != func.getArgument(arg).getType()) {
      func.emitError("result #")
          << r << " of type " << resultType << " updates argument #" << arg
          << " ('" << getArgName(func, arg) << "') of type "
          << func.getArgument(arg).getType();
      ok = false;
    }
    // Role and name are copied from the argument (addStateResult); a
    // mismatch means a pass renamed one side only.
    StringRef resultRole = getResultRole(func, r);
    StringRef resultName = getResultName(func, r);
    if ((!resultRole.empty() && resultRole != argRole) ||
        (!resultName.empty() && resultName != getArgName(func, arg))) {
      func.emitError("result #")
          << r << " (role \"" << resultRole << "\", name \"" << resultName
          << "\") updates argument #" << arg << " (role \"" << argRole
          << "\", name \"" << getArgName(func, arg) << "\")";
      ok = false;
    }
    auto [it, inserted] = updaterOf.try_emplace(a, r);
    if (!inserted) {
      func.emitError("results #")
          << it->second << " and #" << r << " both update argument #" << arg
          << " ('" << getArgName(func, arg) << "')";
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult MSAMPVerifyTrainStepPass::verifyBody(func::FuncOp func) {
  // Values holding scaled FP16 storage. Their element type looks like an
  // ordinary f16, so they are tracked from their sources: f16 arguments with
  // a `<name>.scale` sibling and the f16 results of msamp ops that produce
  // scaled storage, through data movement.
  llvm::DenseSet<Value> scaled;
  StepSignature signature(func); // indexes the arguments by name
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (isF16(func.getArgument(i).getType()) &&
        signature.findArgument((getArgName(func, i) + ".scale").str(),
                               kRoleScalingState))
      scaled.insert(func.getArgument(i));

  auto propagate = [&](Operation *op) {
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return scaled.contains(v); }))
      for (Value result : op->getResults())
        if (isF16(result.getType()))
          scaled.insert(result);
  };

  bool ok = true;
  func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if (isMSAMPOp(op)) {
      if (isa<QuantizeOp, AdamUpdateOp, SGDUpdateOp>(op)) {
        // New scaled storage (a quantized value, an updated FP16 param or
        // second moment), returned together with its scale.
        for (Value result : op->getResults())
          if (isF16(result.getType()))
            scaled.insert(result);
      } else if (isa<AllReduceOp, ReduceOp, BroadcastOp>(op)) {
        propagate(op);
      }
      return WalkResult::advance();
    }
    if (isa<func::ReturnOp>(op))
      return WalkResult::advance();
    if (isDataMovement(op)) {
      propagate(op);
      // The body of linalg.transpose only yields its FP8 element.
      return WalkResult::skip();
    }

    bool bad = false;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (isFP8(value.getType())) {
        op->emitOpError("reads the FP8 value of type ")
            << value.getType() << " (operand #" << operand.getOperandNumber()
            << "); only msamp ops may compute with FP8 values (no FP8 "
               "arithmetic or accumulation outside msamp ops)";
        bad = true;
        break;
      }
      if (scaled.contains(value)) {
        op->emitOpError("reads the scaled FP16 value of type ")
            << value.getType() << " (operand #" << operand.getOperandNumber()
            << ") as a real value; use msamp.dequantize with its inverse "
               "scale, or an msamp op that takes the scale";
        bad = true;
        break;
      }
    }
    if (!bad)
      for (OpResult result : op->getResults()) {
        if (!isFP8(result.getType()))
          continue;
        op->emitOpError("produces the FP8 value of type ")
            << result.getType() << " (result #" << result.getResultNumber()
            << "); FP8 values must come from msamp ops that carry their "
               "scale";
        bad = true;
        break;
      }
    if (!bad)
      return WalkResult::advance();
    ok = false;
    // The op's body (e.g. a linalg.generic's scalar FP8 arithmetic) would
    // only repeat the same error.
    return WalkResult::skip();
  });
  return success(ok);
}
