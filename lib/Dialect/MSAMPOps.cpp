//===- MSAMPOps.cpp - msamp cast, scaling, GEMM and collective ops -*- C++
//-*-===//
//
// Verifiers and custom assembly of the msamp ops other than the optimizers
// (MSAMPOptimizerOps.cpp) and the folders (MSAMPFolders.cpp).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::msamp;

/// Prints a shape as `[4, 5]` (`?` for dynamic sizes) for diagnostics.
static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

//===----------------------------------------------------------------------===//
// ComputeScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeScaleOp::verify() {
  return verifyScaleParameters(*this, getFormat(), getMarginAttr(),
                               getAmaxHistory().getType());
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  auto aType = getA().getType();
  auto bType = getB().getType();
  auto rType = getResult().getType();
  int64_t rank = aType.getRank();
  if (rank != bType.getRank() || (rank != 2 && rank != 3))
    return emitOpError("operands must both be rank 2 or both rank 3, got ")
           << rank << " and " << bType.getRank();
  if (rType.getRank() != rank)
    return emitOpError("result must have rank ")
           << rank << " like its operands, got " << rType.getRank();
  if (isa<Float8E5M2Type>(aType.getElementType()) &&
      isa<Float8E5M2Type>(bType.getElementType()))
    return emitOpError("f8E5M2 x f8E5M2 is not supported (cuBLASLt has no "
                       "such kernel); one operand must be f8E4M3FN");

  ArrayRef<int64_t> a = aType.getShape(), b = bType.getShape();
  int64_t batch = rank - 2;
  int64_t m = getTransposeA() ? a[batch + 1] : a[batch];
  int64_t ka = getTransposeA() ? a[batch] : a[batch + 1];
  int64_t kb = getTransposeB() ? b[batch + 1] : b[batch];
  int64_t n = getTransposeB() ? b[batch] : b[batch + 1];
  if (!dimsCompatible(ka, kb))
    return emitOpError("contraction dimensions differ: a has K = ")
           << ka << ", b has K = " << kb;
  SmallVector<int64_t> expected;
  if (rank == 3) {
    if (!dimsCompatible(a[0], b[0]))
      return emitOpError("batch dimensions differ: ") << a[0] << " vs " << b[0];
    expected.push_back(ShapedType::isDynamic(a[0]) ? b[0] : a[0]);
  }
  expected.push_back(m);
  expected.push_back(n);
  for (auto [e, r] : llvm::zip(expected, rType.getShape()))
    if (!dimsCompatible(e, r))
      return emitOpError("result shape must be ")
             << shapeStr(expected) << ", got " << shapeStr(rType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

void AllReduceOp::build(OpBuilder &builder, OperationState &state,
                        ReduceKind kind, Value input) {
  build(builder, state, input.getType(), /*result_scale_inv=*/Type(), kind,
        input, /*scale_inv=*/Value());
}

void AllReduceOp::build(OpBuilder &builder, OperationState &state,
                        ReduceKind kind, Value input, Value scaleInv) {
  build(builder, state, input.getType(), scaleInv.getType(), kind, input,
        scaleInv);
}

/// msamp.all_reduce and msamp.reduce share their form:
///   <kind> %x [scale_inv %s] [root <N>] attr-dict : type
/// (`root` only for msamp.reduce).
template <typename OpTy>
static ParseResult parseReduction(OpAsmParser &parser, OperationState &result,
                                  bool withRoot) {
  StringRef kindStr;
  OpAsmParser::UnresolvedOperand input, scaleInv;
  bool hasScale = false;
  int64_t root = 0;
  Type type;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindStr))
    return failure();
  std::optional<ReduceKind> kind = symbolizeReduceKind(kindStr);
  if (!kind)
    return parser.emitError(kindLoc, "expected reduction sum, max or mean, "
                                     "got '")
           << kindStr << "'";
  if (parser.parseOperand(input))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("scale_inv"))) {
    hasScale = true;
    if (parser.parseOperand(scaleInv))
      return failure();
  }
  if (withRoot && (parser.parseKeyword("root") || parser.parseInteger(root)))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  Builder &b = parser.getBuilder();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  auto &props = result.getOrAddProperties<typename OpTy::Properties>();
  props.kind = ReduceKindAttr::get(b.getContext(), *kind);
  if constexpr (std::is_same_v<OpTy, ReduceOp>)
    props.root = b.getI64IntegerAttr(root);
  if (parser.resolveOperand(input, type, result.operands))
    return failure();
  if (hasScale && parser.resolveOperand(scaleInv, scalar, result.operands))
    return failure();
  result.addTypes(type);
  if (hasScale)
    result.addTypes(scalar);
  return success();
}

template <typename OpTy>
static void printReduction(OpAsmPrinter &p, OpTy op,
                           std::optional<int64_t> root) {
  p << " " << stringifyReduceKind(op.getKind()) << " " << op.getInput();
  if (op.getScaleInv())
    p << " scale_inv " << op.getScaleInv();
  if (root)
    p << " root " << *root;
  p.printOptionalAttrDict(op->getAttrs(), {"kind", "root"});
  p << " : " << op.getInput().getType();
}

template <typename OpTy>
static LogicalResult verifyReduction(OpTy op) {
  Type elt = op.getInput().getType().getElementType();
  bool isFP8 = isa<Float8E4M3FNType, Float8E5M2Type>(elt);
  if (isFP8 && !op.getScaleInv())
    return op.emitOpError("an FP8 payload needs its inverse scale (scale_inv)");
  if (!isFP8 && op.getScaleInv())
    return op.emitOpError("scale_inv is only allowed with an FP8 payload, got "
                          "element type ")
           << elt;
  if (static_cast<bool>(op.getScaleInv()) !=
      static_cast<bool>(op.getResultScaleInv()))
    return op.emitOpError("the FP8 form returns the reduced payload's inverse "
                          "scale, and only the FP8 form does");
  return success();
}

ParseResult AllReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseReduction<AllReduceOp>(parser, result, /*withRoot=*/false);
}

void AllReduceOp::print(OpAsmPrinter &p) {
  printReduction(p, *this, std::nullopt);
}

LogicalResult AllReduceOp::verify() { return verifyReduction(*this); }

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseReduction<ReduceOp>(parser, result, /*withRoot=*/true);
}

void ReduceOp::print(OpAsmPrinter &p) {
  printReduction(p, *this, static_cast<int64_t>(getRoot()));
}

LogicalResult ReduceOp::verify() { return verifyReduction(*this); }

#define GET_OP_CLASSES
#include "MSAMP/Dialect/MSAMPOps.cpp.inc"
