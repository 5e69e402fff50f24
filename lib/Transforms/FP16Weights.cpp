//===- FP16Weights.cpp - MSAMPFP16Weights pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFP16WEIGHTS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPFP16WeightsPass : ::mlir::msamp::impl::MSAMPFP16WeightsBase<MSAMPFP16WeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPFP16Weights is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
