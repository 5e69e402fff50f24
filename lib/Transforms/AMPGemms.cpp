//===- AMPGemms.cpp - GEMMs with 16-bit operands (the AMP levels) ---------===//
//
// The GEMMs of PyTorch autocast (bf16 or fp16 "mixed precision", the FP16
// AMP row of MS-AMP's level table): each operand of a GEMM is rounded to
// nearest even to the 16-bit type and the products are accumulated in f32
// (msamp.gemm with 16-bit operands and unit inverse scales). Products of two
// bf16 or two fp16 values are exact in f32 (at most 2 x 11 significand
// bits), so the CPU runtime's f32 BLAS over the exactly widened operands
// computes cuBLAS's products bit for bit; only the accumulation order is
// the BLAS's (docs/Numerics.md 3).
//
// The rounding is a linalg.generic of arith.truncf, so it fuses with the
// producer of the operand. bf16's truncf is expanded here into integer
// arithmetic (upstream's RNE expansion with NaN kept quiet): LLVM lowers a
// float -> bfloat truncation to the libcall __truncsfbf2 on hosts without
// AVX512-BF16, and a compiled step may reference nothing but the runtime,
// libc and libm. fp16's truncf is an instruction (F16C on x86-64, native on
// AArch64 and on the GPU).
//
// fp16 with loss-scale=true is AMP with torch.amp.GradScaler: the output
// gradient operands are multiplied by the loss scale before their rounding
// (so small gradients survive fp16's range) and each such GEMM divides the
// scale out through its inverse-scale operand. AMP scales the loss instead,
// so that every backward value carries the factor; the two agree because
// every op but the fp16 casts is f32, where a power-of-two factor is exact,
// and the backward is linear in the incoming gradient. An fp16 overflow
// (|g * scale| > 65504) becomes Inf exactly as in AMP, reaches the
// gradients, and msamp-loss-scale skips the step (LossScale.h).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GemmMatcher.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/GemmTable.h"
#include "MSAMP/Transforms/LossScale.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

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
  /// `x` (f32) rounded to `half` (times `scale`, a 0-d f32 tensor, when
  /// given), right after its definition so that every GEMM reading it is
  /// dominated by the one rounding.
  Value round(Value x, Type half, Value scale);
  /// Why `op` keeps f32 operands, or "" when it is converted.
  static std::string whyKeptF32(const std::optional<GemmMatch> &match,
                                StringRef matchFailure);

  func::FuncOp step;
  SmallVector<Operation *> roundings;
};

Value MSAMPAMPGemmsPass::round(Value x, Type half, Value scale) {
  OpBuilder b(x.getContext());
  Operation *def = x.getDefiningOp();
  Operation *scaleDef = scale ? scale.getDefiningOp() : nullptr;
  // After both the value and the scale (computed at the top of the step).
  if (def && !(scaleDef && def->getBlock() == scaleDef->getBlock() &&
               def->isBeforeInBlock(scaleDef)))
    b.setInsertionPointAfter(def);
  else if (scaleDef)
    b.setInsertionPointAfter(scaleDef);
  else
    b.setInsertionPointToStart(&step.getBody().front());
  auto generic = buildElementwiseConvert(b, x.getLoc(), x, half, scale);
  roundings.push_back(generic);
  return generic.getResult(0);
}

std::string MSAMPAMPGemmsPass::whyKeptF32(const std::optional<GemmMatch> &match,
                                          StringRef matchFailure) {
  if (!match)
    return ("its contraction is not supported: " + matchFailure).str();
  if (!match->zeroInit)
    return "it accumulates into a non-zero init";
  return whyOperandsNotStaticF32(*match);
}

void MSAMPAMPGemmsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  step = getTrainStepOrError(module, "--msamp-amp-gemms");
  if (!step)
    return signalPassFailure();
  // dtype is an enum option: the parser has refused any other spelling.
  Type half = dtype == AMPDtype::BF16 ? Type(BFloat16Type::get(ctx))
                                      : Type(Float16Type::get(ctx));
  if (lossScale && dtype != AMPDtype::FP16) {
    module.emitError("msamp-amp-gemms: loss-scale=true needs dtype=fp16 "
                     "(bf16 has f32's exponent range)");
    return signalPassFailure();
  }
  int exponent = 0;
  if (lossScale && !(initScale > 0 && std::isfinite(initScale) &&
                     std::frexp(initScale, &exponent) == 0.5)) {
    module.emitError("invalid msamp-amp-gemms option init-scale=")
        << initScale << ": expected a power of two";
    return signalPassFailure();
  }

  // GradScaler's state and the scale of this step, with its inverse (the
  // inverse-scale operand of every GEMM with a scaled operand).
  Value scale, scaleInv;
  if (lossScale) {
    auto f32 = getScalarF32Type(ctx);
    BlockArgument state =
        addStateArgument(step, f32, kRoleLossScale, kLossScaleName, kInitZeros);
    BlockArgument tracker = addStateArgument(
        step, RankedTensorType::get({}, IntegerType::get(ctx, 64)),
        kRoleLossScale, kGrowthTrackerName, kInitZeros);
    // Unchanged until msamp-loss-scale updates them.
    addStateResult(step, state, state.getArgNumber());
    addStateResult(step, tracker, tracker.getArgNumber());
    OpBuilder top(ctx);
    top.setInsertionPointToStart(&step.getBody().front());
    scale = buildLossScaleInUse(top, step.getLoc(), state, initScale);
    Value one = arith::ConstantOp::create(
        top, step.getLoc(),
        DenseElementsAttr::get(f32, top.getF32FloatAttr(1.0f)));
    scaleInv = arith::DivFOp::create(top, step.getLoc(), one, scale);
  }

  // Every matched GEMM, classified or not: autocast runs every matmul of
  // the model in 16 bit, attention's included.
  SmallVector<Operation *> gemms;
  step.walk([&](Operation *op) {
    if (isa<linalg::LinalgOp>(op) && op->getNumResults() == 1)
      gemms.push_back(op);
  });

  // (value, scaled) -> its one rounding.
  llvm::DenseMap<std::pair<Value, unsigned>, Value> rounded;
  auto roundOnce = [&](Value v, bool scaled) {
    auto [it, inserted] =
        rounded.try_emplace({v, static_cast<unsigned>(scaled)}, Value());
    if (inserted)
      it->second = round(v, half, scaled ? scale : Value());
    return it->second;
  };
  // Whether operand `index` of `op` is an output gradient (scaled by the
  // loss scale in AMP).
  auto isGradOutput = [&](Operation *op, unsigned index) {
    auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
    auto roles = info ? info.getAs<ArrayAttr>("operand_roles") : ArrayAttr();
    if (!roles || index >= roles.size())
      return false;
    auto role = dyn_cast<StringAttr>(roles[index]);
    return role && role.getValue() == "grad_output";
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
      recordGemmKeptReason(op, why);
      remark::missed(loc, remarkOptions("amp-gemms", "GemmKeptInF32"))
          << ("GEMM kept in f32: " + why);
      continue;
    }
    b.setInsertionPoint(op);
    Value one = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(getScalarF32Type(ctx), b.getF32FloatAttr(1.0f)));
    bool scaleLhs = scale && isGradOutput(op, match->lhsOperandIndex);
    bool scaleRhs = scale && isGradOutput(op, match->rhsOperandIndex);
    Value lhs = roundOnce(match->lhs, scaleLhs);
    Value rhs = roundOnce(match->rhs, scaleRhs);
    auto gemm = GemmOp::create(b, loc, op->getResult(0).getType(),
                               /*amax=*/Type(), lhs, scaleLhs ? scaleInv : one,
                               rhs, scaleRhs ? scaleInv : one);
    if (match->transposeLhs)
      gemm.setTransposeA(true);
    if (match->transposeRhs)
      gemm.setTransposeB(true);
    if (auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr))
      gemm->setAttr(kGemmAttr, info);
    op->getResult(0).replaceAllUsesWith(gemm.getResult());
    op->erase();
    remark::passed(loc, remarkOptions("amp-gemms", "GemmIn16Bit"))
        << ("GEMM with " + stringifyEnum(dtype.getValue()) +
            " operands, f32 accumulation")
               .str();
  }

  if (half.isBF16() && failed(expandBF16Conversions(roundings)))
    return signalPassFailure();
}

} // namespace
