//===- MSAMPFolders.cpp - exact constant folding of msamp ops ---*- C++ -*-===//
//
// Every folder here evaluates the op with the one FP8 numerics core that the
// runtime and the CUDA kernels use (MSAMP/Numerics), so a folded constant is
// bit-identical to what execution would have produced. Only exact rewrites
// are allowed: dequantize(quantize(x)) is never folded to x (it is lossy),
// while quantize(dequantize(q)) folds to q when the round trip is provably
// the identity.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::msamp;
namespace nx = ::msamp::numerics;

/// Folding materializes every element; beyond this size a constant would
/// bloat the IR more than folding saves.
static constexpr int64_t kMaxFoldedElements = 1 << 16;

static std::optional<nx::Format> toFormat(Type elementType) {
  if (isa<Float8E4M3FNType>(elementType))
    return nx::Format::E4M3;
  if (isa<Float8E5M2Type>(elementType))
    return nx::Format::E5M2;
  if (elementType.isF16())
    return nx::Format::F16;
  return std::nullopt;
}

/// Exact widening of any float up to f32.
static float toF32(APFloat value) {
  bool losesInfo = false;
  value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToFloat();
}

/// RNE narrowing of an f32 to `elementType` (f32, bf16 or f16).
static APFloat fromF32(float value, Type elementType) {
  APFloat result(value);
  bool losesInfo = false;
  result.convert(cast<FloatType>(elementType).getFloatSemantics(),
                 APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

static APFloat fromCode(uint16_t code, Type elementType) {
  unsigned width = cast<FloatType>(elementType).getWidth();
  return APFloat(cast<FloatType>(elementType).getFloatSemantics(),
                 APInt(width, code));
}

static std::optional<float> getScalar(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  if (!dense || !dense.isSplat() || !dense.getElementType().isF32())
    return std::nullopt;
  return dense.getSplatValue<float>();
}

static DenseFPElementsAttr getFoldableTensor(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  if (!dense)
    return nullptr;
  if (!dense.isSplat() && dense.getNumElements() > kMaxFoldedElements)
    return nullptr;
  return dense;
}

/// Applies `fn` elementwise (once for a splat) and builds the result.
static DenseElementsAttr mapElements(DenseFPElementsAttr input,
                                     ShapedType resultType,
                                     function_ref<APFloat(APFloat)> fn) {
  if (input.isSplat())
    return DenseElementsAttr::get(resultType,
                                  fn(input.getSplatValue<APFloat>()));
  SmallVector<APFloat> values;
  values.reserve(input.getNumElements());
  for (APFloat v : input.getValues<APFloat>())
    values.push_back(fn(v));
  return DenseElementsAttr::get(resultType, values);
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

OpFoldResult QuantizeOp::fold(FoldAdaptor adaptor) {
  auto input = getFoldableTensor(adaptor.getInput());
  std::optional<float> scale = getScalar(adaptor.getScale());
  Type outElt = getType().getElementType();
  std::optional<nx::Format> format = toFormat(outElt);
  if (!input || !scale || !format)
    return {};
  return mapElements(input, getType(), [&](APFloat v) {
    return fromCode(nx::quantize(*format, toF32(v), *scale), outElt);
  });
}

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
  auto input = getFoldableTensor(adaptor.getInput());
  std::optional<float> scaleInv = getScalar(adaptor.getScaleInv());
  std::optional<nx::Format> format =
      toFormat(getInput().getType().getElementType());
  if (!input || !scaleInv || !format)
    return {};
  Type outElt = getType().getElementType();
  return mapElements(input, getType(), [&](APFloat v) {
    auto code = static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
    return fromF32(nx::dequantize(*format, code, *scaleInv), outElt);
  });
}

namespace {
/// quantize(dequantize(q, s_inv), s) -> q when s and s_inv are constant
/// reciprocal powers of two and the format is unchanged: every stored value
/// times 2^k is exact in f32 for |k| <= 100 (FP8/FP16 magnitudes lie in
/// [2^-24, 2^16]), so the round trip reproduces each code bit for bit.
struct FoldQuantizeOfDequantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto deq = op.getInput().getDefiningOp<DequantizeOp>();
    if (!deq)
      return rewriter.notifyMatchFailure(op, "input is not a dequantize");
    if (deq.getInput().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "storage format changes");
    if (!deq.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "intermediate is not f32");
    DenseFPElementsAttr s, sInv;
    if (!matchPattern(op.getScale(), m_Constant(&s)) ||
        !matchPattern(deq.getScaleInv(), m_Constant(&sInv)))
      return rewriter.notifyMatchFailure(op, "scales are not constants");
    float scale = s.getSplatValue<float>();
    float scaleInv = sInv.getSplatValue<float>();
    int expScale = 0, expInv = 0;
    // frexp gives mantissa 0.5 exactly for powers of two.
    if (std::frexp(scale, &expScale) != 0.5f ||
        std::frexp(scaleInv, &expInv) != 0.5f)
      return rewriter.notifyMatchFailure(op, "scales are not powers of two");
    if (expScale - 1 != -(expInv - 1) || std::abs(expScale - 1) > 100)
      return rewriter.notifyMatchFailure(op, "scales are not reciprocal");
    rewriter.replaceOp(op, deq.getInput());
    return success();
  }
};
} // namespace

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldQuantizeOfDequantize>(context);
}

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  auto input = getFoldableTensor(adaptor.getInput());
  if (!input)
    return {};
  SmallVector<float> values;
  if (input.isSplat()) {
    values.push_back(toF32(input.getSplatValue<APFloat>()));
  } else {
    for (APFloat v : input.getValues<APFloat>())
      values.push_back(toF32(v));
  }
  if (input.getNumElements() == 0)
    values.clear();
  float result = nx::amax(values.data(), values.size());
  return DenseElementsAttr::get(getType(), APFloat(result));
}

static nx::ScaleKind toNumerics(ScaleKind kind) {
  return kind == ScaleKind::Pow2 ? nx::ScaleKind::Pow2 : nx::ScaleKind::Exact;
}

OpFoldResult ComputeScaleOp::fold(FoldAdaptor adaptor) {
  auto history = getFoldableTensor(adaptor.getAmaxHistory());
  std::optional<float> prev = getScalar(adaptor.getPrevScale());
  FailureOr<float> fpMax = getMaxFinite(getFormat());
  if (!history || !prev || failed(fpMax))
    return {};
  SmallVector<float> values(history.getValues<float>());
  float amax = nx::reduceAmaxHistory(values.data(), values.size(),
                                     getAlgo() == AmaxAlgo::Max
                                         ? nx::AmaxAlgo::Max
                                         : nx::AmaxAlgo::MostRecent);
  float scale = nx::computeScale(
      toNumerics(getKind()), amax, *prev, *fpMax,
      static_cast<int>(getMarginAttr().getValue().getSExtValue()));
  return DenseElementsAttr::get(getType(), APFloat(scale));
}

OpFoldResult UpdateAmaxHistoryOp::fold(FoldAdaptor adaptor) {
  auto history = getFoldableTensor(adaptor.getAmaxHistory());
  std::optional<float> amax = getScalar(adaptor.getAmax());
  if (!history || !amax)
    return {};
  SmallVector<float> values(history.getValues<float>());
  nx::updateAmaxHistory(values.data(), values.data(), values.size(), *amax);
  return DenseElementsAttr::get(getType(), ArrayRef<float>(values));
}
