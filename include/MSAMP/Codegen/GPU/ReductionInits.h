//===- ReductionInits.h - constant reduction starts ------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A reduction's accumulator that a `linalg.fill` of a constant initialized
// just before it (msamp-gpu-reduction-inits makes such fills of the copies
// bufferization leaves) need not be written and read back: the kernels that
// carry the accumulator in a register (msamp-gpu-register-accumulators,
// msamp-gpu-row-reductions) start from the constant instead of loading it,
// and erase the fill. The value and the order of the arithmetic are the
// same (the first step combines the constant with the first term), so the
// bits are too.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_REDUCTIONINITS_H
#define MSAMP_CODEGEN_GPU_REDUCTIONINITS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::msamp {

/// The buffer a memref value views (through view-like ops).
Value viewedBuffer(Value memref);

/// Whether `op` or an op nested in it has an operand that views `buffer`.
bool namesBuffer(Operation *op, Value buffer);

/// The `linalg.fill` of a constant scalar that wrote all of `init`'s buffer
/// value last before `op` reads it: earlier in `op`'s block, into exactly
/// the value `init` names, with no op in between naming the buffer it
/// views. Null when `init`'s indexing map is not a permutation of all of
/// `op`'s parallel dimensions (then the op does not write every element
/// once per parallel iteration and must read the buffer), or when there is
/// no such fill. The fill's value is `constantOf(fill)`.
linalg::FillOp constantInitFill(linalg::LinalgOp op, OpOperand *init);

/// The constant a fill that constantInitFill returned writes.
TypedAttr constantOf(linalg::FillOp fill);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_REDUCTIONINITS_H
