//===- AMPGemms.cpp - GEMMs with 16-bit operands (the AMP levels) ---------===//
//
// The GEMMs of PyTorch autocast (bf16 or fp16 "mixed precision", the FP16
// AMP row of MS-AMP's level table): each operand of a GEMM is rounded to
// nearest even to the 16-bit type and the products are accumulated in f32
// (msamp.gemm with 16-bit operands and unit inverse scales). Products of two
// bf16 or two fp16 values are exact in f32 (at most 2 x 11 significand
// bits), so the CPU runtime's f32 BLAS over the exactly widened operands
// computes cuBLAS's products bit for bit; only the accumulation order is
// the BLAS's (NUMERICS.md 3).
//
// The rounding is a linalg.generic of arith.truncf, so it fuses with the
// producer of the operand. bf16's truncf is expanded here into integer
// arithmetic (upstream's RNE expansion with NaN kept quiet): LLVM lowers a
// float -> bfloat truncation to the libcall __truncsfbf2 on hosts without
// AVX512-BF16, and a compiled step may reference nothing but the runtime,
// libc and libm. fp16's truncf is an instruction (F16C on x86-64, native on
// AArch64 and on the GPU).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/Transforms/GemmMatcher.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPAMPGEMMS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

struct MSAMPAMPGemmsPass
    : ::mlir::msamp::impl::MSAMPAMPGemmsBase<MSAMPAMPGemmsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// `x` (f32) rounded to `half`, right after its definition so that every
  /// GEMM reading it is dominated by the one rounding.
  Value round(Value x, Type half);
  /// Why `op` keeps f32 operands, or "" when it is converted.
  static std::string whyKeptF32(const std::optional<GemmMatch> &match,
                                StringRef matchFailure);

  func::FuncOp step;
  SmallVector<Operation *> roundings;
};

Value MSAMPAMPGemmsPass::round(Value x, Type half) {
  OpBuilder b(x.getContext());
  if (Operation *def = x.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(&step.getBody().front());
  Location loc = x.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  auto halfType = RankedTensorType::get(type.getShape(), half);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), half);
  auto map = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, halfType, ValueRange{x}, ValueRange{init},
      ArrayRef<AffineMap>{map, map}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = arith::TruncFOp::create(nb, nloc, half, args[0]);
        linalg::YieldOp::create(nb, nloc, r);
      });
  roundings.push_back(generic);
  return generic.getResult(0);
}

std::string MSAMPAMPGemmsPass::whyKeptF32(const std::optional<GemmMatch> &match,
                                          StringRef matchFailure) {
  if (!match)
    return ("its contraction is not supported: " + matchFailure).str();
  if (!match->zeroInit)
    return "it accumulates into a non-zero init";
  for (Value v : {match->lhs, match->rhs}) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32())
      return "its operands are not f32 tensors";
    if (!type.hasStaticShape())
      return "its operands have dynamic shapes";
  }
  return "";
}

void MSAMPAMPGemmsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (dtype != "bf16" && dtype != "fp16") {
    module.emitError("invalid msamp-amp-gemms option dtype=")
        << dtype << ": expected bf16 or fp16";
    return signalPassFailure();
  }
  step = getTrainStepOrError(module, "--msamp-amp-gemms");
  if (!step)
    return signalPassFailure();
  Type half = dtype == "bf16" ? Type(BFloat16Type::get(ctx))
                              : Type(Float16Type::get(ctx));

  // Every matched GEMM, classified or not: autocast runs every matmul of
  // the model in 16 bit, attention's included.
  SmallVector<Operation *> gemms;
  step.walk([&](Operation *op) {
    if (isa<linalg::LinalgOp>(op) && op->getNumResults() == 1)
      gemms.push_back(op);
  });

  llvm::DenseMap<Value, Value> rounded;
  auto roundOnce = [&](Value v) {
    auto [it, inserted] = rounded.try_emplace(v, Value());
    if (inserted)
      it->second = round(v, half);
    return it->second;
  };
  OpBuilder b(ctx);
  for (Operation *op : gemms) {
    std::string matchFailure;
    std::optional<GemmMatch> match = matchGemm(op, &matchFailure);
    // Only contractions concern this pass; an elementwise op is no GEMM.
    if (!match && !op->hasAttr(kGemmAttr))
      continue;
    std::string why = whyKeptF32(match, matchFailure);
    Location loc = op->getLoc();
    if (!why.empty()) {
      remark::missed(loc, remarkOptions("amp-gemms", "GemmKeptInF32"))
          << ("GEMM kept in f32: " + why);
      continue;
    }
    b.setInsertionPoint(op);
    Value one = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(getScalarF32Type(ctx), b.getF32FloatAttr(1.0f)));
    Value lhs = roundOnce(match->lhs), rhs = roundOnce(match->rhs);
    auto gemm = GemmOp::create(b, loc, op->getResult(0).getType(),
                               /*amax=*/Type(), lhs, one, rhs, one);
    if (match->transposeLhs)
      gemm.setTransposeA(true);
    if (match->transposeRhs)
      gemm.setTransposeB(true);
    if (auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr))
      gemm->setAttr(kGemmAttr, info);
    op->getResult(0).replaceAllUsesWith(gemm.getResult());
    op->erase();
    remark::passed(loc, remarkOptions("amp-gemms", "GemmIn16Bit"))
        << ("GEMM with " + dtype + " operands, f32 accumulation");
  }

  if (half.isBF16()) {
    RewritePatternSet patterns(ctx);
    arith::populateExpandBFloat16Patterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (Operation *generic : roundings)
      if (failed(applyPatternsGreedily(generic, frozen)))
        return signalPassFailure();
  }
}

} // namespace
