//===- OneHotReduction.h - embedding gradients as one-hot sums --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The gradient of an embedding lookup (the graph generators' embedding
// backward, ONNX GatherGrad) is written as a one-hot reduction:
//
//   out[.., v, ..] = sum_n (f(ids[n]) == v ? g[n, ..] : 0)     (out = 0 first)
//
// One matcher for the passes that run it as a scatter instead: on tensors
// for the CPU (msamp-one-hot-reduction-to-scatter), on buffers for the GPU
// (msamp-gpu-one-hot-scatter). Both keep each output element's non-zero
// terms in the reduction's order (n ascending), which is bit-identical to
// the reduction when the output starts at +0.0: the skipped terms are
// +0.0, and x + 0.0 == x for every x but -0.0, which a sum started at +0.0
// never is (round to nearest gives +0.0 for an exact zero sum). An id whose
// f() is out of range matches no row and is skipped.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_ONEHOTREDUCTION_H
#define MSAMP_TRAINSTEP_ONEHOTREDUCTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::msamp {

/// The matched parts of a one-hot reduction.
struct OneHotReduction {
  unsigned rowDim = 0;    ///< the output dim compared with f(id)
  bool gradFirst = false; ///< addf(select, out) rather than addf(out, select)
  unsigned gradIndex = 0; ///< which input is the gradient (the other: ids)
  Value rowValue;         ///< f(id) in the body (integer or index)
  SmallVector<Operation *> rowOps; ///< body ops computing rowValue, in order
  SmallVector<unsigned> reductionDims;
  SmallVector<unsigned> rowSliceDims; ///< the output's parallel dims but rowDim
};

/// Matches `op` (on tensors or on buffers) as a one-hot reduction into a
/// static f32 output: the ids read over the reduction dims in loop order,
/// the gradient over the reduction dims and then the output's other dims.
/// Does not look at the output's initial value, which must be +0.0 for the
/// scatter to be exact: the caller checks it (isPositiveZeroTensor on
/// tensors, the fill before the op on buffers).
std::optional<OneHotReduction> matchOneHotReduction(linalg::GenericOp op);

/// Whether `v` is a scalar +0.0 constant.
bool isPositiveZeroScalar(Value v);

/// Whether `v` is a +0.0 splat tensor: a linalg.fill of +0.0 or a dense
/// constant.
bool isPositiveZeroTensor(Value v);

/// The number of ids: the product of the reduction loop sizes.
int64_t oneHotIdCount(linalg::GenericOp op, const OneHotReduction &m);

/// Emits f(`id`) at `b`'s insertion point by cloning the body's computation
/// of it, `id` being one element of the ids operand.
Value cloneOneHotRow(OpBuilder &b, linalg::GenericOp op,
                     const OneHotReduction &m, Value id);

/// `lo <= row < hi`, compared in `row`'s own type (an integer or index), so
/// that no row value is truncated: `lo` and `hi` (constants, index values
/// or values of `row`'s type) lie in [0, rows], which the matcher made sure
/// that type holds.
Value oneHotRowInRange(OpBuilder &b, Location loc, Value row, OpFoldResult lo,
                       OpFoldResult hi);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_ONEHOTREDUCTION_H
