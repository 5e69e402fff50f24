//===- MemoryReport.cpp - MSAMPMemoryReport pass (skeleton) ---------------------*- C++ -*-===//
//
// SKELETON: not implemented yet.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/Passes.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPMEMORYREPORT
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct MSAMPMemoryReportPass : ::mlir::msamp::impl::MSAMPMemoryReportBase<MSAMPMemoryReportPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("MSAMPMemoryReport is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
