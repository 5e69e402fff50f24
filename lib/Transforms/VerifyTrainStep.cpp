//===- VerifyTrainStep.cpp - MSAMPVerifyTrainStep pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPVERIFYTRAINSTEP
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPVerifyTrainStepPass : ::mlir::msamp::impl::MSAMPVerifyTrainStepBase<MSAMPVerifyTrainStepPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPVerifyTrainStep is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
