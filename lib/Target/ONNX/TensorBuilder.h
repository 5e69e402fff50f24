//===- TensorBuilder.h - linalg-on-tensors building blocks -----*- C++ -*-===//
//
// The handful of structured-op shapes every ONNX lowering is made of:
// broadcasting elementwise linalg.generic, linalg.reduce, linalg.transpose,
// reshapes as tensor.expand_shape / collapse_shape, and GEMMs as
// linalg.matmul / batch_matmul with transposes in their indexing maps (the
// form msamp's GemmMatcher and the Python generator use). All shapes are
// static; callers check ONNX-level preconditions and report them per node.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TARGET_ONNX_TENSORBUILDER_H
#define MSAMP_LIB_TARGET_ONNX_TENSORBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::msamp::onnx {

/// Builds the scalar body of an elementwise op from its scalar operands.
using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

class TensorBuilder {
public:
  TensorBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  void setLoc(Location l) { loc = l; }

  static RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }

  /// numpy-style broadcast of several shapes; std::nullopt if incompatible.
  static std::optional<SmallVector<int64_t>>
  broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

  /// A scalar constant of type `type` (float, integer or index) in the
  /// current block.
  Value scalar(Type type, double value);
  static Value scalar(OpBuilder &nb, Location l, Type type, double value);

  /// A tensor of `type` filled with `value`.
  Value splat(RankedTensorType type, double value);
  Value empty(ArrayRef<int64_t> shape, Type elem);

  /// linalg.generic over the broadcast shape of `ins` (numpy rules: size-1
  /// and missing leading dims broadcast), yielding `body(scalars)`.
  Value elementwise(ValueRange ins, ArrayRef<int64_t> outShape, Type outElem,
                    ScalarFn body);
  /// elementwise with the broadcast shape computed here (callers checked it).
  Value elementwise(ValueRange ins, Type outElem, ScalarFn body);

  /// Materializes `v` broadcast to `shape`.
  Value broadcastTo(Value v, ArrayRef<int64_t> shape);

  /// linalg.reduce over sorted, unique `axes` starting from `init`, combining
  /// with `combine(element, accumulator)`; with keepdims the reduced axes
  /// come back as size 1 (tensor.expand_shape).
  Value reduce(Value x, ArrayRef<int64_t> axes, bool keepdims, double init,
               ScalarFn combine);

  Value transpose(Value x, ArrayRef<int64_t> perm);
  /// Any static reshape with the same element count: one collapse_shape or
  /// expand_shape when a reassociation exists, else through rank 1.
  Value reshape(Value x, ArrayRef<int64_t> shape);

  /// op(a) x op(b) for rank-2 operands (linalg.matmul with transposed
  /// indexing maps), into a fresh zero fill.
  Value matmul(Value a, Value bv, bool transA, bool transB);
  /// Batched over dim 0 of rank-3 operands (linalg.batch_matmul).
  Value batchMatmul(Value a, Value bv, bool transA, bool transB);

  /// Element type conversion with ONNX Cast semantics (float->int truncates
  /// toward zero, int->bool is != 0).
  static Value convertScalar(OpBuilder &nb, Location l, Value v, Type to);
  Value convert(Value x, Type elem);

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::msamp::onnx

#endif // MSAMP_LIB_TARGET_ONNX_TENSORBUILDER_H
