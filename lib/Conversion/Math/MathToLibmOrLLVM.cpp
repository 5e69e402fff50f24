//===- MathToLibmOrLLVM.cpp - host math: libm or LLVM, nothing left -------===//
//
// Upstream's convert-math-to-libm fails on every math op it has no libm
// function for (math.copysign, math.ctlz, math.absi, ...), and
// convert-math-to-llvm alone would compute expm1 as exp(x) - 1 and log1p
// from log(1 + x), losing the precision those functions exist for. This
// pass applies both pattern sets in one conversion: libm where libm has the
// function and LLVM's intrinsic is not exact, LLVM intrinsics otherwise
// (absf, copysign, fma, sqrt and the roundings are exact operations that
// codegen emits as instructions, and stay vectorizable). A math op that
// neither lowers is a located error: no math op reaches the object file.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPMATHTOLIBMORLLVM
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

struct MSAMPMathToLibmOrLLVMPass
    : msamp::impl::MSAMPMathToLibmOrLLVMBase<MSAMPMathToLibmOrLLVMPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Exact operations: the LLVM intrinsic, never a libm call.
    llvm::SmallDenseSet<OperationName> exact;
    for (StringRef name :
         {math::AbsFOp::getOperationName(),
          math::CopySignOp::getOperationName(), math::FmaOp::getOperationName(),
          math::SqrtOp::getOperationName(), math::FloorOp::getOperationName(),
          math::CeilOp::getOperationName(), math::TruncOp::getOperationName(),
          math::RoundOp::getOperationName(),
          math::RoundEvenOp::getOperationName()})
      exact.insert(OperationName(name, ctx));

    RewritePatternSet libm(ctx);
    // Benefit 2: where both sets match, libm's function wins.
    populateMathToLibmConversionPatterns(libm, /*benefit=*/2);
    RewritePatternSet patterns(ctx);
    for (std::unique_ptr<RewritePattern> &pattern : libm.getNativePatterns()) {
      std::optional<OperationName> root = pattern->getRootKind();
      if (root && exact.contains(*root))
        continue;
      patterns.add(std::move(pattern));
    }
    LLVMTypeConverter converter(ctx);
    populateMathToLLVMConversionPatterns(converter, patterns,
                                         /*approximateLog1p=*/false);

    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect, arith::ArithDialect,
                           func::FuncDialect, vector::VectorDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalDialect<math::MathDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
