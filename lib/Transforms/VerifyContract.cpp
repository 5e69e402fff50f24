//===- VerifyContract.cpp - MSAMPVerifyContract pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPVERIFYCONTRACT
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPVerifyContractPass : ::mlir::msamp::impl::MSAMPVerifyContractBase<MSAMPVerifyContractPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPVerifyContract is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
