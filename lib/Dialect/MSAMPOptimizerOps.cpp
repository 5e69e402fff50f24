//===- MSAMPOptimizerOps.cpp - msamp.adam_update / sgd_update ---*- C++ -*-===//
//
// The optimizer ops take each tensor together with its optional scale, so
// their assembly is written by hand: `param %w scale %s : tensor<..xf16>`.
// Result types follow from the operand types (a low-precision operand returns
// a new scale), which keeps the printed form short and impossible to get
// inconsistent.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::msamp;

namespace {
/// One `keyword %value [scaleKeyword %scale] : type` group of the assembly.
struct ScaledOperand {
  OpAsmParser::UnresolvedOperand value;
  std::optional<OpAsmParser::UnresolvedOperand> scale;
  Type type;
};
} // namespace

static ParseResult parseScaledOperand(OpAsmParser &parser, StringRef keyword,
                                      StringRef scaleKeyword,
                                      ScaledOperand &out) {
  if (parser.parseKeyword(keyword) || parser.parseOperand(out.value))
    return failure();
  if (succeeded(parser.parseOptionalKeyword(scaleKeyword))) {
    out.scale.emplace();
    if (parser.parseOperand(*out.scale))
      return failure();
  }
  return parser.parseColonType(out.type);
}

static void printScaledOperand(OpAsmPrinter &p, StringRef keyword,
                               StringRef scaleKeyword, Value value,
                               Value scale) {
  p << keyword << " " << value;
  if (scale)
    p << " " << scaleKeyword << " " << scale;
  p << " : " << value.getType();
}

static RankedTensorType scalarF32(Builder &b) {
  return RankedTensorType::get({}, b.getF32Type());
}

/// Resolves the groups in order, appending the resolved operands, and returns
/// the operand segment sizes (value, scale) per group.
static ParseResult resolveScaledOperands(OpAsmParser &parser,
                                         ArrayRef<ScaledOperand> groups,
                                         OperationState &result,
                                         SmallVectorImpl<int32_t> &segments) {
  auto scalar = scalarF32(parser.getBuilder());
  for (const ScaledOperand &g : groups) {
    if (parser.resolveOperand(g.value, g.type, result.operands))
      return failure();
    segments.push_back(1);
    if (g.scale && parser.resolveOperand(*g.scale, scalar, result.operands))
      return failure();
    segments.push_back(g.scale ? 1 : 0);
  }
  return success();
}

/// Checks that `value` carries a scale exactly when it is stored in low
/// precision, and that its shape matches the param's.
static LogicalResult verifyScaledOperand(Operation *op, StringRef name,
                                         Value value, Value scale,
                                         RankedTensorType paramType) {
  auto type = cast<RankedTensorType>(value.getType());
  Type elt = type.getElementType();
  if (elt.isF32() && scale)
    return op->emitOpError("'") << name << "' is f32 and takes no scale";
  if (!elt.isF32() && !scale)
    return op->emitOpError("'")
           << name << "' of element type " << elt << " needs its scale";
  if (type.getShape() != paramType.getShape())
    return op->emitOpError("'") << name << "' has type " << type
                                << " but 'param' has type " << paramType;
  return success();
}

/// Formats a hyperparameter the way a user wrote it (0.9, not 9.000000e-01).
static std::string fmt(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

static LogicalResult verifyHyperparameter(Operation *op, StringRef name,
                                          double value, double lo, double hi,
                                          bool hiInclusive) {
  if (value >= lo && (hiInclusive ? value <= hi : value < hi))
    return success();
  return op->emitOpError(name)
         << " must be in [" << fmt(lo) << ", " << fmt(hi)
         << (hiInclusive ? "]" : ")") << ", got " << fmt(value);
}

//===----------------------------------------------------------------------===//
// AdamUpdateOp
//===----------------------------------------------------------------------===//

ParseResult AdamUpdateOp::parse(OpAsmParser &parser, OperationState &result) {
  ScaledOperand param, grad, m, v;
  OpAsmParser::UnresolvedOperand lr, step;
  if (parseScaledOperand(parser, "param", "scale", param) ||
      parser.parseComma() ||
      parseScaledOperand(parser, "grad", "scale_inv", grad) ||
      parser.parseComma() ||
      parseScaledOperand(parser, "exp_avg", "scale", m) ||
      parser.parseComma() ||
      parseScaledOperand(parser, "exp_avg_sq", "scale", v) ||
      parser.parseComma() || parser.parseKeyword("lr") ||
      parser.parseOperand(lr) || parser.parseComma() ||
      parser.parseKeyword("step") || parser.parseOperand(step) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();

  Builder &b = parser.getBuilder();
  SmallVector<int32_t> segments;
  if (resolveScaledOperands(parser, {param, grad, m, v}, result, segments) ||
      parser.resolveOperand(lr, scalarF32(b), result.operands) ||
      parser.resolveOperand(step,
                            RankedTensorType::get({}, b.getIntegerType(64)),
                            result.operands))
    return failure();
  segments.append({1, 1});
  auto &props = result.getOrAddProperties<Properties>();
  llvm::copy(segments, props.operandSegmentSizes.begin());

  SmallVector<int32_t> resultSegments;
  for (const ScaledOperand *g : {&param, &m, &v}) {
    result.addTypes(g->type);
    if (g->scale)
      result.addTypes(scalarF32(b));
    resultSegments.append({1, g->scale ? 1 : 0});
  }
  llvm::copy(resultSegments, props.resultSegmentSizes.begin());
  return success();
}

void AdamUpdateOp::print(OpAsmPrinter &p) {
  p << " ";
  printScaledOperand(p, "param", "scale", getParam(), getParamScale());
  p << ", ";
  printScaledOperand(p, "grad", "scale_inv", getGrad(), getGradScaleInv());
  p << ", ";
  printScaledOperand(p, "exp_avg", "scale", getExpAvg(), getExpAvgScale());
  p << ", ";
  printScaledOperand(p, "exp_avg_sq", "scale", getExpAvgSq(),
                     getExpAvgSqScale());
  p << ", lr " << getLr() << ", step " << getStep();
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"operandSegmentSizes", "resultSegmentSizes"});
}

LogicalResult AdamUpdateOp::verify() {
  Operation *op = getOperation();
  auto paramType = getParam().getType();
  if (failed(verifyScaledOperand(op, "param", getParam(), getParamScale(),
                                 paramType)) ||
      failed(verifyScaledOperand(op, "grad", getGrad(), getGradScaleInv(),
                                 paramType)) ||
      failed(verifyScaledOperand(op, "exp_avg", getExpAvg(), getExpAvgScale(),
                                 paramType)) ||
      failed(verifyScaledOperand(op, "exp_avg_sq", getExpAvgSq(),
                                 getExpAvgSqScale(), paramType)))
    return failure();
  // Results mirror the operands they update.
  auto same = [&](Value operand, Value scale, Value res, Value resScale,
                  StringRef name) -> LogicalResult {
    if (operand.getType() != res.getType())
      return emitOpError("result for '")
             << name << "' must have type " << operand.getType() << ", got "
             << res.getType();
    if (static_cast<bool>(scale) != static_cast<bool>(resScale))
      return emitOpError("result for '")
             << name << "' must return a new scale exactly when '" << name
             << "' has one";
    return success();
  };
  if (failed(same(getParam(), getParamScale(), getNewParam(),
                  getNewParamScale(), "param")) ||
      failed(same(getExpAvg(), getExpAvgScale(), getNewExpAvg(),
                  getNewExpAvgScale(), "exp_avg")) ||
      failed(same(getExpAvgSq(), getExpAvgSqScale(), getNewExpAvgSq(),
                  getNewExpAvgSqScale(), "exp_avg_sq")))
    return failure();
  if (failed(verifyHyperparameter(op, "beta1", getBeta1().convertToDouble(),
                                  0.0, 1.0, false)) ||
      failed(verifyHyperparameter(op, "beta2", getBeta2().convertToDouble(),
                                  0.0, 1.0, false)))
    return failure();
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive, got ")
           << fmt(getEps().convertToDouble());
  if (!(getWeightDecay().convertToDouble() >= 0.0))
    return emitOpError("weight_decay must be non-negative, got ")
           << fmt(getWeightDecay().convertToDouble());
  if (std::optional<uint64_t> mode = getAdamMode()) {
    if (*mode != 0 && *mode != 1)
      return emitOpError("adam_mode must be 0 (PyTorch AdamW) or 1 (Hugging "
                         "Face / ONNX Runtime mode 1), got ")
             << static_cast<int64_t>(*mode);
    if (*mode == 1 && !getDecoupled())
      return emitOpError("adam_mode = 1 is an AdamW variant and needs "
                         "'decoupled'");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SGDUpdateOp
//===----------------------------------------------------------------------===//

ParseResult SGDUpdateOp::parse(OpAsmParser &parser, OperationState &result) {
  ScaledOperand param, grad;
  std::optional<OpAsmParser::UnresolvedOperand> buffer;
  Type bufferType;
  OpAsmParser::UnresolvedOperand lr, step;
  if (parseScaledOperand(parser, "param", "scale", param) ||
      parser.parseComma() ||
      parseScaledOperand(parser, "grad", "scale_inv", grad) ||
      parser.parseComma())
    return failure();
  if (succeeded(parser.parseOptionalKeyword("momentum_buffer"))) {
    buffer.emplace();
    if (parser.parseOperand(*buffer) || parser.parseColonType(bufferType) ||
        parser.parseComma())
      return failure();
  }
  if (parser.parseKeyword("lr") || parser.parseOperand(lr) ||
      parser.parseComma() || parser.parseKeyword("step") ||
      parser.parseOperand(step) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();

  Builder &b = parser.getBuilder();
  SmallVector<int32_t> segments;
  if (resolveScaledOperands(parser, {param, grad}, result, segments))
    return failure();
  if (buffer && parser.resolveOperand(*buffer, bufferType, result.operands))
    return failure();
  if (parser.resolveOperand(lr, scalarF32(b), result.operands) ||
      parser.resolveOperand(step,
                            RankedTensorType::get({}, b.getIntegerType(64)),
                            result.operands))
    return failure();
  segments.append({buffer ? 1 : 0, 1, 1});
  auto &props = result.getOrAddProperties<Properties>();
  llvm::copy(segments, props.operandSegmentSizes.begin());

  result.addTypes(param.type);
  if (param.scale)
    result.addTypes(scalarF32(b));
  if (buffer)
    result.addTypes(bufferType);
  int32_t resultSegments[] = {1, param.scale ? 1 : 0, buffer ? 1 : 0};
  llvm::copy(resultSegments, props.resultSegmentSizes.begin());
  return success();
}

void SGDUpdateOp::print(OpAsmPrinter &p) {
  p << " ";
  printScaledOperand(p, "param", "scale", getParam(), getParamScale());
  p << ", ";
  printScaledOperand(p, "grad", "scale_inv", getGrad(), getGradScaleInv());
  if (getMomentumBuffer())
    p << ", momentum_buffer " << getMomentumBuffer() << " : "
      << getMomentumBuffer().getType();
  p << ", lr " << getLr() << ", step " << getStep();
  // Default-valued hyperparameters are not printed.
  SmallVector<StringRef, 4> elided = {"operandSegmentSizes",
                                      "resultSegmentSizes"};
  if (getMomentum().isZero())
    elided.push_back(getMomentumAttrName());
  if (getWeightDecay().isZero())
    elided.push_back(getWeightDecayAttrName());
  p.printOptionalAttrDict((*this)->getAttrs(), elided);
}

LogicalResult SGDUpdateOp::verify() {
  Operation *op = getOperation();
  auto paramType = getParam().getType();
  if (failed(verifyScaledOperand(op, "param", getParam(), getParamScale(),
                                 paramType)) ||
      failed(verifyScaledOperand(op, "grad", getGrad(), getGradScaleInv(),
                                 paramType)))
    return failure();
  if (getNewParam().getType() != paramType)
    return emitOpError("result for 'param' must have type ")
           << paramType << ", got " << getNewParam().getType();
  if (static_cast<bool>(getParamScale()) !=
      static_cast<bool>(getNewParamScale()))
    return emitOpError("result for 'param' must return a new scale exactly "
                       "when 'param' has one");
  double momentum = getMomentum().convertToDouble();
  if (failed(verifyHyperparameter(op, "momentum", momentum, 0.0, 1.0, true)))
    return failure();
  if (!(getWeightDecay().convertToDouble() >= 0.0))
    return emitOpError("weight_decay must be non-negative, got ")
           << fmt(getWeightDecay().convertToDouble());
  if (getNesterov() && momentum == 0.0)
    return emitOpError("nesterov requires a non-zero momentum");
  if ((momentum != 0.0) != static_cast<bool>(getMomentumBuffer()))
    return emitOpError(momentum != 0.0
                           ? "a non-zero momentum needs a momentum_buffer"
                           : "a momentum_buffer needs a non-zero momentum");
  if (getMomentumBuffer()) {
    if (getMomentumBuffer().getType().getShape() != paramType.getShape())
      return emitOpError("'momentum_buffer' has type ")
             << getMomentumBuffer().getType() << " but 'param' has type "
             << paramType;
    if (!getNewMomentumBuffer() ||
        getNewMomentumBuffer().getType() != getMomentumBuffer().getType())
      return emitOpError("must return the updated momentum_buffer");
  } else if (getNewMomentumBuffer()) {
    return emitOpError("returns a momentum_buffer it was not given");
  }
  return success();
}
