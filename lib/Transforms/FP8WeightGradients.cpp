//===- FP8WeightGradients.cpp - MSAMPFP8WeightGradients pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFP8WEIGHTGRADIENTS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPFP8WeightGradientsPass : ::mlir::msamp::impl::MSAMPFP8WeightGradientsBase<MSAMPFP8WeightGradientsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPFP8WeightGradients is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
