//===- ApproximateTanh.cpp - vectorizable f32 tanh ------------------------===//
//
// libm's tanhf is an opaque scalar call: LLVM's loop vectorizer widens the
// loop around it but then calls tanhf once per lane (its glibc vector
// library table has no tanhf). In a GELU transformer the tanh of the forward
// and of the backward were ~18% of the O0 step. MLIR's polynomial
// approximation is pure arith plus math.fma and vectorizes with the rest of
// the fused elementwise loop. It must run before convert-math-to-libm, which
// would otherwise turn those math.fma into scalar `fmaf` calls too: they are
// emitted as llvm.intr.fma here (the same correctly rounded result, one
// instruction on an FMA host).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPAPPROXIMATETANH
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

struct MSAMPApproximateTanhPass
    : ::mlir::msamp::impl::MSAMPApproximateTanhBase<MSAMPApproximateTanhPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Count f32 tanh only: the pattern leaves other element types to libm.
    int64_t before = 0;
    func.walk([&](math::TanhOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        ++before;
    });
    if (before == 0)
      return;
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
    int64_t after = 0;
    func.walk([&](math::TanhOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        ++after;
    });
    numApproximated += before - after;
    // Statistics are no-ops in a release LLVM (docs/Passes.md); the count is
    // also a remark.
    remark::passed(func.getLoc(), msamp::remarkOptions("approximate-tanh",
                                                       "tanh-approximated"))
        << remark::add("{0} f32 math.tanh in @{1} replaced by a vectorizable "
                       "rational approximation (within 4 ulp of libm tanhf)",
                       before - after, func.getSymName());
    func.walk([](math::FmaOp fma) {
      OpBuilder builder(fma);
      fma.replaceAllUsesWith(LLVM::FMAOp::create(builder, fma.getLoc(),
                                                 fma.getA(), fma.getB(),
                                                 fma.getC())
                                 .getResult());
      fma.erase();
    });
  }
};

} // namespace
