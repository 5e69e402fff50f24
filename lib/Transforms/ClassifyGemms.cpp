//===- ClassifyGemms.cpp - MSAMPClassifyGemms pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPCLASSIFYGEMMS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPClassifyGemmsPass : ::mlir::msamp::impl::MSAMPClassifyGemmsBase<MSAMPClassifyGemmsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPClassifyGemms is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
