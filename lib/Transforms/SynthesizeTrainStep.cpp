//===- SynthesizeTrainStep.cpp - MSAMPSynthesizeTrainStep pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSYNTHESIZETRAINSTEP
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPSynthesizeTrainStepPass : ::mlir::msamp::impl::MSAMPSynthesizeTrainStepBase<MSAMPSynthesizeTrainStepPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPSynthesizeTrainStep is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
