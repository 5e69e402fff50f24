//===- StridedCopiesToLoops.cpp - memref.copy without memrefCopy ----------===//
//
// finalize-memref-to-llvm lowers a memref.copy between contiguous buffers to
// the llvm.memcpy intrinsic and every other one to a call of `memrefCopy`,
// a function of MLIR's C runner utilities that the msamp runtime does not
// provide: the compiled step then fails to load. Strided copies come from
// views of one buffer along an inner dimension (a fused QKV projection split
// into q, k and v, the concatenation of their gradients, a transpose-split
// of attention heads). Here they become loops of loads and stores; the
// contiguous copies stay memcpy.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPSTRIDEDCOPIESTOLOOPS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The same test finalize-memref-to-llvm applies before choosing memcpy.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

struct StridedCopyToLoops : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    Value source = copy.getSource(), target = copy.getTarget();
    if (isContiguous(source.getType()) && isContiguous(target.getType()))
      return rewriter.notifyMatchFailure(copy, "memcpy handles it");
    auto sourceType = dyn_cast<MemRefType>(source.getType());
    auto targetType = dyn_cast<MemRefType>(target.getType());
    if (!sourceType || !targetType)
      return rewriter.notifyMatchFailure(copy, "unranked");
    Location loc = copy.getLoc();
    // One scf.for per dimension, outermost first, so that the innermost
    // loop walks the last (usually unit-stride) dimension.
    SmallVector<Value> indices;
    OpBuilder::InsertionGuard guard(rewriter);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (int64_t dim = 0; dim < sourceType.getRank(); ++dim) {
      Value size = memref::DimOp::create(rewriter, loc, source, dim);
      auto loop = scf::ForOp::create(rewriter, loc, zero, size, one);
      indices.push_back(loop.getInductionVar());
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    Value element = memref::LoadOp::create(rewriter, loc, source, indices);
    memref::StoreOp::create(rewriter, loc, element, target, indices);
    rewriter.eraseOp(copy);
    return success();
  }
};

struct MSAMPStridedCopiesToLoopsPass
    : msamp::impl::MSAMPStridedCopiesToLoopsBase<
          MSAMPStridedCopiesToLoopsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLoops>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An unranked strided copy would still call memrefCopy: say so here,
    // where the op is known, rather than when the step fails to load.
    WalkResult walk = getOperation().walk([](memref::CopyOp copy) {
      if (isContiguous(copy.getSource().getType()) &&
          isContiguous(copy.getTarget().getType()))
        return WalkResult::advance();
      copy.emitError("msamp-strided-copies-to-loops: cannot lower a copy of "
                     "unranked buffers (it would need MLIR's memrefCopy, "
                     "which the msamp runtime does not provide)");
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
