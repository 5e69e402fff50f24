//===- LowPrecisionOptimizer.cpp - MSAMPLowPrecisionOptimizer pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPLOWPRECISIONOPTIMIZER
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPLowPrecisionOptimizerPass : ::mlir::msamp::impl::MSAMPLowPrecisionOptimizerBase<MSAMPLowPrecisionOptimizerPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPLowPrecisionOptimizer is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
