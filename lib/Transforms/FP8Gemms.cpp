//===- FP8Gemms.cpp - run eligible GEMMs in FP8 -------------------*- C++
//-*-===//
//
// Rewrites the classified GEMMs of @train_step into msamp.quantize of both
// operands plus msamp.gemm (f32 accumulation), MS-AMP's recipe by default:
//
//  * formats: E4M3 for forward operands (activations, weights), E5M2 for
//    output gradients (fp8-format=hybrid) or E4M3 everywhere (e4m3);
//  * weights are scaled just in time from their current amax (delayed
//    like the others with delayed-weights, Transformer Engine's recipe);
//  * activations and output gradients use delayed scaling: an amax history
//    and a scale are persistent state; the scale used at step t was derived
//    at step t-1 from the history, and while the history fills (the first
//    amax-history-len steps) the scale is just-in-time (MS-AMP's warm-up);
//  * scaling=current makes every scale just-in-time (no state).
//
// One quantization serves every GEMM that reads the same value in the same
// format: a transposed use only flips msamp.gemm's transpose flag, exactly as
// MS-AMP reuses the forward casts (and their scales) in the backward GEMMs.
// A GEMM left in high precision gets a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GemmMatcher.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/GemmTable.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPFP8GEMMS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// A value quantized once, shared by every GEMM that reads it.
struct Quantized {
  Value data;     // FP8 tensor
  Value scaleInv; // 0-d f32
};

struct MSAMPFP8GemmsPass
    : ::mlir::msamp::impl::MSAMPFP8GemmsBase<MSAMPFP8GemmsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult parseOptions(ModuleOp module);
  /// Why `op` stays in high precision, or "" when it is converted.
  std::string whyHighPrecision(Operation *op, DictionaryAttr info,
                               const std::optional<GemmMatch> &match,
                               StringRef matchFailure);
  Value scalar(OpBuilder &b, Location loc, float value);
  Value stepNumber(OpBuilder &b, Location loc);
  Quantized quantizeJustInTime(OpBuilder &b, Location loc, Value x,
                               Type format);
  Quantized quantizeDelayed(OpBuilder &b, Location loc, Value x, Type format,
                            StringRef name);
  std::string uniqueName(StringRef base);
  void keptInHighPrecision(Operation *op, StringRef why);
  void selectKeptLayers(ArrayRef<Operation *> gemms);

  func::FuncOp step;
  /// The step's signature while the pass runs: the delayed scales'
  /// arguments and results are written once (StepSignature.h).
  StepSignature *signature = nullptr;
  unsigned stepArg = 0; // the "step" argument (completed steps)
  ScaleKind kind = ScaleKind::Pow2;
  AmaxAlgo algo = AmaxAlgo::Max;
  // Per-run state; shared_ptr keeps the pass copyable (clonePass).
  std::shared_ptr<llvm::Regex> excludeRegex;
  llvm::StringSet<> usedNames;
  // Linear layers keep-first-last / dim-multiple keep in high precision,
  // with the reason.
  llvm::StringMap<std::string> keptLayers;
};

LogicalResult MSAMPFP8GemmsPass::parseOptions(ModuleOp module) {
  auto bad = [&](StringRef option, StringRef value, StringRef expected) {
    return module.emitError("invalid msamp-fp8-gemms option ")
           << option << "=" << value << ": expected " << expected;
  };
  // fp8-format, scaling, scale-kind and amax-compute-algo are enums: the
  // option parser has refused any other spelling (RecipeEnums.h).
  kind = scaleKind;
  algo = amaxComputeAlgo;
  if (amaxHistoryLen < 1)
    return bad("amax-history-len", std::to_string(amaxHistoryLen),
               "a positive length");
  if (margin < 0)
    return bad("margin", std::to_string(margin), "a non-negative integer");
  if (interval < 1)
    return bad("interval", std::to_string(interval), "a positive integer");
  if (dimMultiple < 0)
    return bad("dim-multiple", std::to_string(dimMultiple),
               "a non-negative integer");
  if (!exclude.empty()) {
    excludeRegex = std::make_shared<llvm::Regex>(exclude);
    std::string error;
    if (!excludeRegex->isValid(error))
      return bad("exclude", exclude, "a valid regex (" + error + ")");
  }
  return success();
}

std::string
MSAMPFP8GemmsPass::whyHighPrecision(Operation *op, DictionaryAttr info,
                                    const std::optional<GemmMatch> &match,
                                    StringRef matchFailure) {
  if (!info)
    return "it was not classified (run --msamp-classify-gemms before "
           "synthesizing the train step)";
  StringRef gemmKind = "other";
  if (auto k = info.getAs<StringAttr>("kind"))
    gemmKind = k.getValue();
  if (gemmKind == "other")
    return "it is neither a Linear GEMM nor an attention GEMM";
  if (gemmKind.starts_with("attention") && !fp8Attention)
    return "it is an activation x activation (attention) GEMM; pass "
           "fp8-attention=true to run it in FP8";
  if (gemmKind == "fprop" && fpropHp)
    return "fprop-hp=true keeps forward GEMMs in high precision";
  if (gemmKind == "dgrad" && dgradHp)
    return "dgrad-hp=true keeps data-gradient GEMMs in high precision";
  if (gemmKind == "wgrad" && wgradHp)
    return "wgrad-hp=true keeps weight-gradient GEMMs in high precision";
  if (auto layer = info.getAs<StringAttr>("layer")) {
    auto kept = keptLayers.find(layer.getValue());
    if (kept != keptLayers.end())
      return kept->second;
  }
  if (excludeRegex) {
    for (StringRef key : {"weight", "layer"}) {
      auto name = info.getAs<StringAttr>(key);
      if (name && excludeRegex->match(name.getValue()))
        return ("its " + key + " '" + name.getValue() +
                "' matches exclude=" + exclude)
            .str();
    }
    // A wgrad has no weight operand: match the weight it produces a gradient
    // for, so excluding "^head\." keeps all three GEMMs of the head.
    if (auto layer = info.getAs<StringAttr>("layer"))
      if (excludeRegex->match((layer.getValue() + ".weight").str()))
        return ("its weight '" + layer.getValue() +
                ".weight' matches exclude=" + exclude)
            .str();
  }
  if (!match)
    return ("its contraction is not supported: " + matchFailure).str();
  if (!match->zeroInit)
    return "it accumulates into a non-zero init";
  auto roles = info.getAs<ArrayAttr>("operand_roles");
  if (!roles || roles.size() != op->getNumOperands() - 1)
    return "its msamp.gemm attribute has no operand_roles for every input";
  return whyOperandsNotStaticF32(*match);
}

Value MSAMPFP8GemmsPass::scalar(OpBuilder &b, Location loc, float value) {
  auto type = getScalarF32Type(b.getContext());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

Value MSAMPFP8GemmsPass::stepNumber(OpBuilder &b, Location loc) {
  // The step number of this update, 1 at the first step; CSE merges it with
  // the optimizer's copy.
  auto type = RankedTensorType::get({}, b.getI64Type());
  Value one = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(1)));
  return arith::AddIOp::create(b, loc, step.getArgument(stepArg), one);
}

Quantized MSAMPFP8GemmsPass::quantizeJustInTime(OpBuilder &b, Location loc,
                                                Value x, Type format) {
  MLIRContext *ctx = b.getContext();
  auto x1 = RankedTensorType::get({1}, Float32Type::get(ctx));
  Value one = scalar(b, loc, 1.0f);
  Value amax = AmaxOp::create(b, loc, x);
  Value history = tensor::ExpandShapeOp::create(
      b, loc, x1, amax, ArrayRef<ReassociationIndices>{});
  Value scale = ComputeScaleOp::create(b, loc, kind, AmaxAlgo::MostRecent,
                                       history, one, format, margin);
  auto qType = RankedTensorType::get(
      cast<RankedTensorType>(x.getType()).getShape(), format);
  Value q = QuantizeOp::create(b, loc, qType, x, scale);
  Value scaleInv = arith::DivFOp::create(b, loc, one, scale);
  return {q, scaleInv};
}

Quantized MSAMPFP8GemmsPass::quantizeDelayed(OpBuilder &b, Location loc,
                                             Value x, Type format,
                                             StringRef name) {
  MLIRContext *ctx = b.getContext();
  auto scalarType = getScalarF32Type(ctx);
  auto historyType = RankedTensorType::get({amaxHistoryLen}, b.getF32Type());
  BlockArgument scaleArg = signature->addArgument(
      scalarType, kRoleScalingState, (name + ".scale").str(), kInitOnes);
  BlockArgument historyArg =
      signature->addArgument(historyType, kRoleScalingState,
                             (name + ".amax_history").str(), kInitZeros);
  ++numDelayed;

  Value amax = AmaxOp::create(b, loc, x);
  // Delayed scaling state is persistent: reducing the amax over the
  // data-parallel group keeps it identical on every rank (TE's reduce_amax),
  // so replicas and checkpoints agree byte for byte.
  if (reduceAmax)
    amax = AllReduceOp::create(b, loc, ReduceKind::Max, amax).getResult();
  Value history = UpdateAmaxHistoryOp::create(b, loc, historyArg, amax);
  Value used = scaleArg;
  Value t;
  if (warmup || interval > 1)
    t = stepNumber(b, loc);
  if (warmup) {
    // MS-AMP: just-in-time from this step's amax until the window is full.
    Value jit = ComputeScaleOp::create(b, loc, kind, AmaxAlgo::MostRecent,
                                       history, scaleArg, format, margin);
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    Value window = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(i64, b.getI64IntegerAttr(amaxHistoryLen)));
    Value warming =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, t, window);
    used = arith::SelectOp::create(b, loc, warming, jit, scaleArg);
  }
  auto qType = RankedTensorType::get(
      cast<RankedTensorType>(x.getType()).getShape(), format);
  Value q = QuantizeOp::create(b, loc, qType, x, used);
  Value scaleInv = arith::DivFOp::create(b, loc, scalar(b, loc, 1.0f), used);

  // The scale for the next step, from the window that includes this step.
  Value next =
      ComputeScaleOp::create(b, loc, kind, algo, history, used, format, margin);
  if (interval > 1) {
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    Value n = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(i64, b.getI64IntegerAttr(interval)));
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(i64, b.getI64IntegerAttr(0)));
    Value rem = arith::RemSIOp::create(b, loc, t, n);
    Value due =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
    next = arith::SelectOp::create(b, loc, due, next, used);
  }
  signature->addResult(next, scaleArg.getArgNumber());
  signature->addResult(history, historyArg.getArgNumber());
  return {q, scaleInv};
}

void MSAMPFP8GemmsPass::keptInHighPrecision(Operation *op, StringRef why) {
  ++numHighPrecision;
  // The reason as data, for gemms.json.
  recordGemmKeptReason(op, why);
  // An optimization remark (MLIR's remark engine), shown with
  // --remarks-filter=msamp: silent in a normal compile, explicit on demand.
  remark::missed(op->getLoc(),
                 remarkOptions("fp8-gemms", "GemmKeptInHighPrecision"))
      << ("GEMM kept in high precision: " + why).str();
}

std::string MSAMPFP8GemmsPass::uniqueName(StringRef base) {
  std::string name = base.str();
  for (int i = 1; usedNames.contains(name); ++i)
    name = (base + "." + std::to_string(i)).str();
  usedNames.insert(name);
  return name;
}

/// The suffix naming an operand's quantized tensor in its GEMM.
static std::string operandSuffix(StringRef role, bool sameRoles, bool isLhs) {
  std::string suffix = role == "grad_output" ? "grad_output"
                       : role == "weight"    ? "weight"
                                             : "input";
  if (sameRoles)
    suffix += isLhs ? ".lhs" : ".rhs";
  return suffix;
}

/// torchao's Float8Linear as Accelerate applies it
/// (filter_first_and_last_linear_layers): the first and the last Linear
/// layer, and every one whose weight has a dimension that is not a multiple
/// of 16 (torch._scaled_mm's alignment), stay nn.Linear. A layer's place is
/// that of its forward GEMM in the step, which runs the forward in graph
/// order.
void MSAMPFP8GemmsPass::selectKeptLayers(ArrayRef<Operation *> gemms) {
  keptLayers.clear();
  SmallVector<std::pair<StringRef, Operation *>> linear;
  for (Operation *op : gemms) {
    auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
    auto kind = info ? info.getAs<StringAttr>("kind") : StringAttr();
    auto layer = info ? info.getAs<StringAttr>("layer") : StringAttr();
    if (kind && layer && kind.getValue() == "fprop")
      linear.emplace_back(layer.getValue(), op);
  }
  if (dimMultiple > 0) {
    for (auto &[layer, op] : linear) {
      auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
      auto roles = info.getAs<ArrayAttr>("operand_roles");
      for (unsigned i = 0, e = roles ? roles.size() : 0; i < e; ++i) {
        auto role = dyn_cast<StringAttr>(roles[i]);
        auto type = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
        if (!role || role.getValue() != "weight" || !type)
          continue;
        for (int64_t dim : type.getShape())
          if (ShapedType::isDynamic(dim) || dim % dimMultiple != 0) {
            keptLayers[layer] = ("the weight of its layer " + layer +
                                 " has a dimension that is not a multiple of "
                                 "dim-multiple=" +
                                 std::to_string(dimMultiple))
                                    .str();
            break;
          }
      }
    }
  }
  if (keepFirstLast && !linear.empty()) {
    keptLayers[linear.front().first] =
        ("its layer " + linear.front().first +
         " is the first Linear layer in graph order (keep-first-last)")
            .str();
    keptLayers[linear.back().first] =
        ("its layer " + linear.back().first +
         " is the last Linear layer in graph order (keep-first-last)")
            .str();
  }
}

void MSAMPFP8GemmsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(parseOptions(module)))
    return signalPassFailure();
  step = getTrainStepOrError(module, "--msamp-fp8-gemms");
  if (!step)
    return signalPassFailure();
  MLIRContext *ctx = &getContext();
  Builder attrBuilder(ctx);
  std::optional<unsigned> stepIndex;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    usedNames.insert(getArgName(step, i));
    if (getArgRole(step, i) == kRoleStep)
      stepIndex = i;
  }
  // Warm-up and intervals count steps.
  if (scaling == ScalingMode::Delayed && (warmup || interval > 1) &&
      !stepIndex) {
    step.emitError("delayed scaling with warm-up or an interval needs the "
                   "step counter argument (msamp.role = \"step\")");
    return signalPassFailure();
  }
  stepArg = stepIndex.value_or(0);

  Type e4m3 = Float8E4M3FNType::get(ctx);
  Type e5m2 = Float8E5M2Type::get(ctx);
  bool delayed = scaling == ScalingMode::Delayed;

  StepSignature stepSignature(step);
  signature = &stepSignature;
  SmallVector<Operation *> gemms;
  step.walk([&](Operation *op) {
    if (op->hasAttr(kGemmAttr))
      gemms.push_back(op);
  });
  selectKeptLayers(gemms);

  // (value, format) -> its one quantization.
  llvm::DenseMap<std::pair<Value, Type>, Quantized> cache;
  for (Operation *op : gemms) {
    auto info = op->getAttrOfType<DictionaryAttr>(kGemmAttr);
    std::string matchFailure;
    std::optional<GemmMatch> match = matchGemm(op, &matchFailure);
    std::string why = whyHighPrecision(op, info, match, matchFailure);
    if (!why.empty()) {
      keptInHighPrecision(op, why);
      continue;
    }
    auto roles = info.getAs<ArrayAttr>("operand_roles");
    StringRef lhsRole =
        cast<StringAttr>(roles[match->lhsOperandIndex]).getValue();
    StringRef rhsRole =
        cast<StringAttr>(roles[match->rhsOperandIndex]).getValue();
    auto formatOf = [&](StringRef role) {
      return role == "grad_output" && fp8Format == FP8Format::Hybrid ? e5m2
                                                                     : e4m3;
    };
    Type lhsFormat = formatOf(lhsRole), rhsFormat = formatOf(rhsRole);
    if (lhsFormat == e5m2 && rhsFormat == e5m2) {
      keptInHighPrecision(op, "both operands are output gradients and E5M2 x "
                              "E5M2 has no FP8 kernel");
      continue;
    }

    StringRef gemmKind = info.getAs<StringAttr>("kind").getValue();
    std::string layer = "gemm";
    if (auto l = info.getAs<StringAttr>("layer"))
      layer = l.getValue().str();
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto quantizeOperand = [&](Value v, StringRef role, Type format,
                               bool isLhs) -> Quantized {
      auto key = std::make_pair(v, format);
      auto it = cache.find(key);
      if (it != cache.end())
        return it->second;
      // Quantize right after the value is defined (or at the top of the
      // step for arguments) so that every later GEMM reading it is
      // dominated by the one quantization.
      OpBuilder qb(ctx);
      if (Operation *def = v.getDefiningOp())
        qb.setInsertionPointAfter(def);
      else
        qb.setInsertionPointToStart(&step.getBody().front());
      Quantized q;
      if ((role == "weight" && !delayedWeights) || !delayed) {
        q = quantizeJustInTime(qb, loc, v, format);
      } else {
        std::string name =
            uniqueName((layer + "." + gemmKind + "." +
                        operandSuffix(role, lhsRole == rhsRole, isLhs))
                           .str());
        q = quantizeDelayed(qb, loc, v, format, name);
      }
      cache[key] = q;
      return q;
    };
    Quantized lhs = quantizeOperand(match->lhs, lhsRole, lhsFormat, true);
    Quantized rhs = quantizeOperand(match->rhs, rhsRole, rhsFormat, false);

    auto gemm = GemmOp::create(b, loc, op->getResult(0).getType(),
                               /*amax=*/Type(), lhs.data, lhs.scaleInv,
                               rhs.data, rhs.scaleInv);
    if (match->transposeLhs)
      gemm.setTransposeA(true);
    if (match->transposeRhs)
      gemm.setTransposeB(true);
    // Reduced-precision accumulation only where MS-AMP and Transformer
    // Engine allow it: forward GEMMs.
    if (gemmKind == "fprop" || gemmKind == "attention_fwd")
      gemm.setFastAccum(true);
    gemm->setAttr(kGemmAttr, info);
    op->getResult(0).replaceAllUsesWith(gemm.getResult());
    op->erase();
    ++numFP8Gemms;
    remark::passed(loc, remarkOptions("fp8-gemms", "GemmInFP8"))
        << (gemmKind + " GEMM of " + layer +
            " in FP8: " + (lhsFormat == e5m2 ? "f8E5M2" : "f8E4M3FN") + " x " +
            (rhsFormat == e5m2 ? "f8E5M2" : "f8E4M3FN"))
               .str();
  }

  // The recipe, recorded for the manifest and for humans reading the IR.
  SmallVector<NamedAttribute> recipe = {
      attrBuilder.getNamedAttr(
          "fp8_format",
          attrBuilder.getStringAttr(stringifyEnum(fp8Format.getValue()))),
      attrBuilder.getNamedAttr(
          "scaling",
          attrBuilder.getStringAttr(stringifyEnum(scaling.getValue()))),
      attrBuilder.getNamedAttr(
          "scale_kind",
          attrBuilder.getStringAttr(stringifyEnum(scaleKind.getValue()))),
      attrBuilder.getNamedAttr("amax_history_len",
                               attrBuilder.getI64IntegerAttr(amaxHistoryLen)),
      attrBuilder.getNamedAttr(
          "amax_compute_algo",
          attrBuilder.getStringAttr(stringifyEnum(amaxComputeAlgo.getValue()))),
      attrBuilder.getNamedAttr("margin", attrBuilder.getI64IntegerAttr(margin)),
      attrBuilder.getNamedAttr("interval",
                               attrBuilder.getI64IntegerAttr(interval)),
      attrBuilder.getNamedAttr("warmup", attrBuilder.getBoolAttr(warmup)),
      attrBuilder.getNamedAttr("reduce_amax",
                               attrBuilder.getBoolAttr(reduceAmax)),
      attrBuilder.getNamedAttr("fp8_attention",
                               attrBuilder.getBoolAttr(fp8Attention)),
      attrBuilder.getNamedAttr("delayed_weights",
                               attrBuilder.getBoolAttr(delayedWeights))};
  step->setAttr(kRecipeAttr, attrBuilder.getDictionaryAttr(recipe));
  stepSignature.commit();
  signature = nullptr;
}

} // namespace
