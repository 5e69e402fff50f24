//===- FP8Gemms.cpp - MSAMPFP8Gemms pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFP8GEMMS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPFP8GemmsPass : ::mlir::msamp::impl::MSAMPFP8GemmsBase<MSAMPFP8GemmsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPFP8Gemms is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
