//===- RecordBufferPlan.cpp - --msamp-buffer-plan ---------------*- C++ -*-===//
//
// Runs the static buffer plan (Codegen/BufferPlan.h) on the bufferized
// @train_step and records its peak on the module, where msamp-compile reads
// it after the rest of the lowering: one pipeline run gives both the object
// and the plan.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPBUFFERPLAN
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPBufferPlanPass
    : ::mlir::msamp::impl::MSAMPBufferPlanBase<MSAMPBufferPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = findFunctionOfKind(module, kTrainStep);
    if (!step)
      return markAllAnalysesPreserved();
    FailureOr<BufferPlan> plan = BufferPlan::compute(step);
    if (failed(plan))
      return signalPassFailure();
    Builder b(module.getContext());
    Location at =
        plan->getPeakOp() ? plan->getPeakOp()->getLoc() : step.getLoc();
    module->setAttr(
        kBufferPlanAttr,
        b.getDictionaryAttr({
            b.getNamedAttr(kPlanPeakBytes,
                           b.getI64IntegerAttr(plan->getPeakBytes())),
            b.getNamedAttr(kPlanSessionBytes,
                           b.getI64IntegerAttr(plan->getArgumentBytes())),
            b.getNamedAttr(kPlanStepBytes,
                           b.getI64IntegerAttr(plan->getPeakStepBytes())),
            b.getNamedAttr(kPlanBuffers,
                           b.getI64IntegerAttr(static_cast<int64_t>(
                               plan->getBuffers().size()))),
            b.getNamedAttr(kPlanAt, at),
        }));
    markAllAnalysesPreserved();
  }
};
} // namespace
