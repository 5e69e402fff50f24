//===- CheckToRuntime.cpp - index checks to runtime calls -------*- C++ -*-===//
//
// msamp.check_index becomes msamp_rt_check_computed_index (docs/
// RuntimeABI.md 3.11). The location travels as a constant i8 buffer (one
// global per site).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct CheckIndexToRuntime : RuntimeCallPattern<CheckIndexOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(CheckIndexOp op, RuntimeCall &call) const override {
    PatternRewriter &rewriter = call.getRewriter();
    StringRef site = op.getSite();
    auto siteType = RankedTensorType::get({static_cast<int64_t>(site.size())},
                                          rewriter.getI8Type());
    Value siteBytes = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(
            siteType,
            ArrayRef<int8_t>(reinterpret_cast<const int8_t *>(site.data()),
                             site.size())));
    std::optional<int64_t> ignore = op.getIgnoreIndex();
    call.replaceOp(RuntimeFn::CheckComputedIndex,
                   {call.input(op.getIndices()), call.input(siteBytes),
                    call.i32(RuntimeCall::dtype(op.getIndices())),
                    call.i64(op.getUpper()), call.i64(ignore.value_or(0)),
                    call.i32(ignore ? 1 : 0)});
  }
};
} // namespace

void mlir::msamp::populateCheckToRuntimePatterns(RewritePatternSet &patterns,
                                                 MSAMPToRuntimeState &state) {
  patterns.add<CheckIndexToRuntime>(patterns.getContext(), state);
}
