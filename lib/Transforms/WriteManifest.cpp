//===- WriteManifest.cpp - MSAMPWriteManifest pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPWRITEMANIFEST
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPWriteManifestPass : ::mlir::msamp::impl::MSAMPWriteManifestBase<MSAMPWriteManifestPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPWriteManifest is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
