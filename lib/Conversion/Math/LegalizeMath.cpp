//===- LegalizeMath.cpp - math ops in forms both targets lower ------------===//
//
// The CPU target lowers math ops to libm calls and LLVM intrinsics, the GPU
// target to libdevice calls and NVVM; some ops have neither: libm has no
// rsqrtf (train_step.so would fail to load), no lowering handles
// math.ipowi, math.isinf or math.isnormal, and math.clampf and math.fpowi
// are lowered by neither library. This pass rewrites exactly those ops,
// for both targets alike, into ops that every target lowers, so that both
// compute the same thing.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPLEGALIZEMATH
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The classification ops as comparisons of |x| (every one is false for a
/// NaN but isnan): isnan = x unordered x, isinf = |x| == inf,
/// isfinite = |x| < inf, isnormal = smallest normal <= |x| < inf.
template <typename Op>
struct ClassifyByCompare : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    auto floatType = cast<FloatType>(getElementTypeOrSelf(x.getType()));
    auto constant = [&](const APFloat &value) -> Value {
      TypedAttr attr = rewriter.getFloatAttr(floatType, value);
      if (auto shaped = dyn_cast<ShapedType>(x.getType()))
        attr = DenseElementsAttr::get(shaped, value);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    if constexpr (std::is_same_v<Op, math::IsNaNOp>) {
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::UNO,
                                                 x, x);
      return success();
    }
    Value abs = math::AbsFOp::create(rewriter, loc, x);
    Value inf = constant(APFloat::getInf(floatType.getFloatSemantics()));
    if constexpr (std::is_same_v<Op, math::IsInfOp>) {
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::OEQ,
                                                 abs, inf);
    } else if constexpr (std::is_same_v<Op, math::IsFiniteOp>) {
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::OLT,
                                                 abs, inf);
    } else {
      Value normal = constant(
          APFloat::getSmallestNormalized(floatType.getFloatSemantics()));
      Value finite = arith::CmpFOp::create(rewriter, loc,
                                           arith::CmpFPredicate::OLT, abs, inf);
      Value large = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OGE, abs, normal);
      rewriter.replaceOpWithNewOp<arith::AndIOp>(op, finite, large);
    }
    return success();
  }
};

/// math.sincos -> math.sin and math.cos: libdevice and the GPU lowering have
/// no sincos, and the CPU computes the same values either way.
struct SplitSinCos : OpRewritePattern<math::SincosOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::SincosOp op,
                                PatternRewriter &rewriter) const override {
    Value sin = math::SinOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    Value cos = math::CosOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    rewriter.replaceOp(op, {sin, cos});
    return success();
  }
};

/// Scalar math.ipowi by square-and-multiply over the exponent's bits (a
/// loop of bit-width iterations; wraps around on overflow like the
/// integer multiplication it is). A negative exponent gives the integer
/// part of 1 / b^-e: 1 for b = 1, +-1 for b = -1 (the sign of b^e), else 0
/// (b = 0 included, where the real result is infinite: no trap).
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<IntegerType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a scalar (elementwise "
                                             "conversion to linalg first)");
    Location loc = op.getLoc();
    Value base = op.getLhs(), exponent = op.getRhs();
    auto intConst = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, type, value);
    };
    Value zero = intConst(0), one = intConst(1), minusOne = intConst(-1);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper =
        arith::ConstantIndexOp::create(rewriter, loc, type.getWidth());
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, step, ValueRange{one, base, exponent},
        [&](OpBuilder &b, Location loc, Value, ValueRange args) {
          Value acc = args[0], power = args[1], bits = args[2];
          Value bit = arith::AndIOp::create(b, loc, bits, one);
          Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            bit, zero);
          Value times = arith::MulIOp::create(b, loc, acc, power);
          Value nextAcc = arith::SelectOp::create(b, loc, odd, times, acc);
          Value nextPower = arith::MulIOp::create(b, loc, power, power);
          Value nextBits = arith::ShRUIOp::create(b, loc, bits, one);
          scf::YieldOp::create(b, loc,
                               ValueRange{nextAcc, nextPower, nextBits});
        });
    Value positive = loop.getResult(0);
    Value isOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        base, one);
    Value isMinusOne = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, base, minusOne);
    Value oddExponent = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, exponent, one), zero);
    Value minusOnePower =
        arith::SelectOp::create(rewriter, loc, oddExponent, minusOne, one);
    Value negative = arith::SelectOp::create(
        rewriter, loc, isOne, one,
        arith::SelectOp::create(rewriter, loc, isMinusOne, minusOnePower,
                                zero));
    Value isNegative = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, exponent, zero);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isNegative, negative,
                                                 positive);
    return success();
  }
};

struct MSAMPLegalizeMathPass
    : msamp::impl::MSAMPLegalizeMathBase<MSAMPLegalizeMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Upstream's expansions: rsqrt -> 1 / sqrt (what PyTorch computes too),
    // clampf -> minimumf / maximumf, fpowi -> powf of the converted
    // exponent (C's pow is exact in sign for an integral exponent).
    math::populateExpansionPatterns(patterns, {"rsqrt", "clampf", "fpowi"});
    patterns
        .add<ClassifyByCompare<math::IsNaNOp>, ClassifyByCompare<math::IsInfOp>,
             ClassifyByCompare<math::IsFiniteOp>,
             ClassifyByCompare<math::IsNormalOp>, SplitSinCos, ExpandIPowI>(
            &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
