//===- GemmToRuntime.cpp - GEMMs to msamp_rt_gemm ---------------*- C++ -*-===//
//
// Every GEMM becomes msamp_rt_gemm (docs/RuntimeABI.md 3.6): the scaled FP8
// msamp.gemm, and the GEMMs left in high precision (linalg.matmul,
// batch_matmul and contraction generics, GemmMatcher.h), so that every GEMM
// at every level, O0 included, uses the runtime's optimized path.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCall.h"

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GemmMatcher.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
struct GemmToRuntime : RuntimeCallPattern<GemmOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  void lower(GemmOp op, RuntimeCall &call) const override {
    int32_t flags = (op.getTransposeA() ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                    (op.getTransposeB() ? MSAMP_RT_GEMM_TRANSPOSE_B : 0) |
                    (op.getFastAccum() ? MSAMP_RT_GEMM_FAST_ACCUM : 0) |
                    (op.getAmax() ? MSAMP_RT_GEMM_WRITE_AMAX : 0);
    Value result = call.output(op.getResult().getType());
    Value amax =
        op.getAmax() ? call.output(op.getAmax().getType()) : call.dummy();
    call.replaceOp(RuntimeFn::Gemm,
                   {call.input(op.getA()), call.input(op.getAScaleInv()),
                    call.input(op.getB()), call.input(op.getBScaleInv()),
                    result, amax, call.i32(RuntimeCall::dtype(op.getA())),
                    call.i32(RuntimeCall::dtype(op.getB())),
                    call.i32(RuntimeCall::dtype(op.getResult())),
                    call.i32(flags)});
  }
};

/// A GEMM left in high precision: the runtime's BLAS path with unit scales,
/// unless it accumulates into a non-zero init (then it stays a linalg loop
/// nest).
struct HighPrecisionGemmToRuntime
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  HighPrecisionGemmToRuntime(MLIRContext *ctx, MSAMPToRuntimeState &state)
      : OpInterfaceRewritePattern<linalg::LinalgOp>(ctx), state(state) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp linalgOp,
                                PatternRewriter &rewriter) const override {
    Operation *op = linalgOp;
    std::optional<GemmMatch> m = matchGemm(op);
    if (!m || !m->zeroInit)
      return failure();
    int32_t flags = (m->transposeLhs ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                    (m->transposeRhs ? MSAMP_RT_GEMM_TRANSPOSE_B : 0);
    RuntimeCall call(state, rewriter, op);
    Value result = call.output(op->getResult(0).getType());
    call.replaceOp(
        RuntimeFn::Gemm,
        {call.input(m->lhs), call.dummy(), call.input(m->rhs), call.dummy(),
         result, call.dummy(), call.i32(RuntimeCall::dtype(m->lhs)),
         call.i32(RuntimeCall::dtype(m->rhs)),
         call.i32(RuntimeCall::dtype(op->getResult(0))), call.i32(flags)});
    return success();
  }

private:
  MSAMPToRuntimeState &state;
};
} // namespace

void mlir::msamp::populateGemmToRuntimePatterns(RewritePatternSet &patterns,
                                                MSAMPToRuntimeState &state) {
  patterns.add<GemmToRuntime, HighPrecisionGemmToRuntime>(patterns.getContext(),
                                                          state);
}
