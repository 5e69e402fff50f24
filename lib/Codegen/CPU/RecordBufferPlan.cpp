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
    // What one static arena of the step would need (the GPU pipeline
    // places its buffers so; here the heap frees them at the deallocs).
    plan->placeInArena(
        [](const PlannedBuffer &buffer) {
          return BufferPlan::isPlaceable(buffer) ? 0 : -1;
        },
        /*numRegions=*/1, kArenaAlignment);
    plan->record(module, step, /*runsFromArenas=*/false);
    markAllAnalysesPreserved();
  }
};
} // namespace
