//===- ScalarOps.cpp - scalar bodies of elementwise lowerings -------------===//

#include "ScalarOps.h"
#include "TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::msamp::onnx;

static bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
static Value cst(OpBuilder &b, Location l, Value like, double v) {
  return TensorBuilder::scalar(b, l, like.getType(), v);
}

Value scalar_ops::add(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::AddFOp::create(b, l, x, y);
  return arith::AddIOp::create(b, l, x, y);
}

Value scalar_ops::sub(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::SubFOp::create(b, l, x, y);
  return arith::SubIOp::create(b, l, x, y);
}

Value scalar_ops::mul(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::MulFOp::create(b, l, x, y);
  if (x.getType().isInteger(1))
    return arith::AndIOp::create(b, l, x, y);
  return arith::MulIOp::create(b, l, x, y);
}

Value scalar_ops::div(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::DivFOp::create(b, l, x, y);
  // Integer division by zero is undefined in ONNX; avoid the trap.
  Value zero = cst(b, l, y, 0), one = cst(b, l, y, 1);
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, zero);
  Value safe = arith::SelectOp::create(b, l, isZero, one, y);
  return arith::DivSIOp::create(b, l, x, safe);
}

Value scalar_ops::max(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::MaximumFOp::create(b, l, x, y);
  // bool: true is 1 (unsigned), not -1.
  if (x.getType().isInteger(1))
    return arith::MaxUIOp::create(b, l, x, y);
  return arith::MaxSIOp::create(b, l, x, y);
}

Value scalar_ops::min(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::MinimumFOp::create(b, l, x, y);
  if (x.getType().isInteger(1))
    return arith::MinUIOp::create(b, l, x, y);
  return arith::MinSIOp::create(b, l, x, y);
}

Value scalar_ops::maxNoNaN(OpBuilder &b, Location l, Value x, Value y) {
  if (!isFloat(x))
    return arith::MaxSIOp::create(b, l, x, y);
  Value lt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, y);
  return arith::SelectOp::create(b, l, lt, y, x);
}

Value scalar_ops::minNoNaN(OpBuilder &b, Location l, Value x, Value y) {
  if (!isFloat(x))
    return arith::MinSIOp::create(b, l, x, y);
  Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, y);
  return arith::SelectOp::create(b, l, gt, y, x);
}

Value scalar_ops::cmpEq(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, y);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
}

Value scalar_ops::cmpLt(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, y);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x, y);
}

Value scalar_ops::cmpGt(OpBuilder &b, Location l, Value x, Value y) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, y);
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, x, y);
}

Value scalar_ops::neg(OpBuilder &b, Location l, Value x) {
  if (isFloat(x))
    return arith::NegFOp::create(b, l, x);
  return arith::SubIOp::create(b, l, cst(b, l, x, 0), x);
}

Value scalar_ops::abs(OpBuilder &b, Location l, Value x) {
  if (isFloat(x))
    return math::AbsFOp::create(b, l, x);
  return math::AbsIOp::create(b, l, x);
}

Value scalar_ops::relu(OpBuilder &b, Location l, Value x) {
  // maximumf(x, 0) like the Python generator; NaN stays NaN.
  return arith::MaximumFOp::create(b, l, x, cst(b, l, x, 0.0));
}

Value scalar_ops::sigmoid(OpBuilder &b, Location l, Value x) {
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  Value d = arith::AddFOp::create(b, l, cst(b, l, x, 1.0), e);
  return arith::DivFOp::create(b, l, cst(b, l, x, 1.0), d);
}

Value scalar_ops::gelu(OpBuilder &b, Location l, Value x) {
  Value s = arith::MulFOp::create(b, l, x, cst(b, l, x, M_SQRT1_2));
  Value e = math::ErfOp::create(b, l, s);
  Value p = arith::AddFOp::create(b, l, cst(b, l, x, 1.0), e);
  Value h = arith::MulFOp::create(b, l, x, cst(b, l, x, 0.5));
  return arith::MulFOp::create(b, l, h, p);
}

Value scalar_ops::geluTanh(OpBuilder &b, Location l, Value x) {
  Value x3 = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, x, x), x);
  Value inner = arith::AddFOp::create(
      b, l, x, arith::MulFOp::create(b, l, x3, cst(b, l, x, 0.044715)));
  Value t = math::TanhOp::create(
      b, l,
      arith::MulFOp::create(b, l, inner, cst(b, l, x, std::sqrt(2.0 / M_PI))));
  Value p = arith::AddFOp::create(b, l, cst(b, l, x, 1.0), t);
  Value h = arith::MulFOp::create(b, l, x, cst(b, l, x, 0.5));
  return arith::MulFOp::create(b, l, h, p);
}

Value scalar_ops::geluDerivative(OpBuilder &b, Location l, Value x) {
  // Phi(x) + x phi(x) = 0.5 (1 + erf(x/sqrt2)) + x exp(-x^2/2) / sqrt(2 pi).
  Value s = arith::MulFOp::create(b, l, x, cst(b, l, x, M_SQRT1_2));
  Value cdf = arith::MulFOp::create(
      b, l, cst(b, l, x, 0.5),
      arith::AddFOp::create(b, l, cst(b, l, x, 1.0),
                            math::ErfOp::create(b, l, s)));
  Value x2 = arith::MulFOp::create(b, l, x, x);
  Value pdf = arith::MulFOp::create(
      b, l,
      math::ExpOp::create(b, l,
                          arith::MulFOp::create(b, l, x2, cst(b, l, x, -0.5))),
      cst(b, l, x, 1.0 / std::sqrt(2.0 * M_PI)));
  return arith::AddFOp::create(b, l, cdf, arith::MulFOp::create(b, l, x, pdf));
}
