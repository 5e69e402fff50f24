//===- StepFloor.cpp - the tensor-level inputs of the cost floor ----------===//
//
// Part of the msamp project.
//
// The floor of gpu_cost.json must not depend on how the step is split into
// kernels, so its bytes are counted on the tensor-level step, where a value
// is a value and not a buffer some pass chose: state read and written once,
// inputs read once, and every value kept for backward written and read once.
// "Kept for backward" is a forward value (one the loss depends on) that a
// non-forward op (the backward or the optimizer) also reads.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSTEPFLOOR
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

std::optional<int64_t> tensorBytes(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  return getStaticMemRefBytes(
      MemRefType::get(shaped.getShape(), shaped.getElementType()));
}

/// A reshape names its source's storage: the value whose bytes it is.
Value storageOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto cast = dyn_cast<tensor::CastOp>(def))
      value = cast.getSource();
    else
      break;
  }
  return value;
}

struct StepFloorPass : msamp::impl::MSAMPGPUStepFloorBase<StepFloorPass> {
  void runOnOperation() override {
    func::FuncOp step = findFunctionOfKind(getOperation(), kTrainStep);
    if (!step || step.isExternal())
      return;
    int64_t stateBytes = 0, inputBytes = 0, keptBytes = 0;
    for (BlockArgument arg : step.getArguments()) {
      auto role =
          step.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kRoleAttr);
      std::optional<msamp_role_kind> kind =
          role ? getRoleKind(role.getValue()) : std::nullopt;
      std::optional<int64_t> bytes = tensorBytes(arg.getType());
      if (!kind || !bytes)
        continue;
      if (*kind == MSAMP_ROLE_KIND_STATE)
        stateBytes += *bytes;
      else if (*kind == MSAMP_ROLE_KIND_INPUT)
        inputBytes += *bytes;
    }

    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss;
    for (unsigned i = 0; i < step.getNumResults(); ++i)
      if (auto role = step.getResultAttrOfType<StringAttr>(i, kRoleAttr))
        if (role.getValue() == kRoleLoss)
          loss = ret.getOperand(i);
    if (!loss) {
      step.emitError("msamp-gpu-step-floor: the train step has no result "
                     "with role \"loss\"");
      return signalPassFailure();
    }
    // The forward: every top-level op the loss depends on.
    llvm::SetVector<Operation *> forward;
    SmallVector<Value> worklist{loss};
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      if (!def)
        continue;
      def = body.findAncestorOpInBlock(*def);
      if (!def || !forward.insert(def))
        continue;
      llvm::append_range(worklist, def->getOperands());
      visitUsedValuesDefinedAbove(def->getRegions(), [&](OpOperand *use) {
        worklist.push_back(use->get());
      });
    }
    llvm::SetVector<Value> kept;
    for (Operation *op : forward) {
      if (isa<tensor::EmptyOp>(op) || op->hasTrait<OpTrait::ConstantLike>())
        continue;
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top && !forward.contains(top) && !isa<func::ReturnOp>(top))
            kept.insert(storageOf(result));
        }
    }
    for (Value value : kept)
      if (!isa<BlockArgument>(value))
        if (std::optional<int64_t> bytes = tensorBytes(value.getType()))
          keptBytes += *bytes;

    Builder b(&getContext());
    step->setAttr(
        gpucost::kStepFloorAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("state_bytes", b.getI64IntegerAttr(stateBytes)),
             b.getNamedAttr("input_bytes", b.getI64IntegerAttr(inputBytes)),
             b.getNamedAttr("kept_bytes", b.getI64IntegerAttr(keptBytes))}));
  }
};

} // namespace
