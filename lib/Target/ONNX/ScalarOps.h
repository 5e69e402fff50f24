//===- ScalarOps.h - scalar bodies of elementwise lowerings ----*- C++ -*-===//
//
// The scalar arithmetic inside linalg.generic bodies, typed by the operands
// (arith float or integer ops), shared by forward and gradient lowerings so
// that e.g. Gelu and GeluGrad use one formula.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TARGET_ONNX_SCALAROPS_H
#define MSAMP_LIB_TARGET_ONNX_SCALAROPS_H

#include "mlir/IR/Builders.h"

namespace mlir::msamp::onnx::scalar_ops {

Value add(OpBuilder &b, Location l, Value x, Value y);
Value sub(OpBuilder &b, Location l, Value x, Value y);
Value mul(OpBuilder &b, Location l, Value x, Value y);
Value div(OpBuilder &b, Location l, Value x, Value y);
/// NaN-propagating max/min (ONNX Max/Min, ReduceMax).
Value max(OpBuilder &b, Location l, Value x, Value y);
Value min(OpBuilder &b, Location l, Value x, Value y);
/// Clip bounds: a NaN bound leaves x alone.
Value maxNoNaN(OpBuilder &b, Location l, Value x, Value y);
Value minNoNaN(OpBuilder &b, Location l, Value x, Value y);
Value cmpEq(OpBuilder &b, Location l, Value x, Value y);
Value cmpLt(OpBuilder &b, Location l, Value x, Value y);
Value cmpGt(OpBuilder &b, Location l, Value x, Value y);
Value neg(OpBuilder &b, Location l, Value x);
Value abs(OpBuilder &b, Location l, Value x);
Value relu(OpBuilder &b, Location l, Value x);
Value sigmoid(OpBuilder &b, Location l, Value x);
/// 0.5 x (1 + erf(x / sqrt 2)).
Value gelu(OpBuilder &b, Location l, Value x);
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Value geluTanh(OpBuilder &b, Location l, Value x);
/// d gelu(x) / dx, exact (erf) form.
Value geluDerivative(OpBuilder &b, Location l, Value x);

} // namespace mlir::msamp::onnx::scalar_ops

#endif // MSAMP_LIB_TARGET_ONNX_SCALAROPS_H
