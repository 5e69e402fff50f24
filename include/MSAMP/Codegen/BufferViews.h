//===- BufferViews.h - ops that only reinterpret a buffer -------*- C++ -*-===//
//
// Part of the msamp project.
//
// A view, reshape or cast of a buffer holds no data and has no effect: the
// outliners clone it next to each reader or into a function instead of
// passing it (msamp-outline-repeated-blocks on buffers,
// msamp-gpu-outline-layers).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_BUFFERVIEWS_H
#define MSAMP_CODEGEN_BUFFERVIEWS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace mlir::msamp {

/// Whether `op` is a view, reshape or cast from a buffer to a buffer.
inline bool isBufferView(Operation *op) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 ||
      !isa<BaseMemRefType>(op->getOperand(0).getType()) ||
      !isa<BaseMemRefType>(op->getResult(0).getType()))
    return false;
  if (isa<UnrealizedConversionCastOp>(op))
    return op->getNumOperands() == 1;
  return isa<memref::CastOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
             memref::ViewOp, memref::SubViewOp, memref::ReinterpretCastOp>(op);
}

/// The constant byte shift of `view` when it has no dynamic sizes: the
/// form of msamp-gpu-static-arena's views of an arena (the view's result
/// has an identity layout, as memref.view requires), or nullopt.
inline std::optional<int64_t> constantByteShift(memref::ViewOp view) {
  APInt shift;
  if (!view || !view.getSizes().empty() ||
      !matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
    return std::nullopt;
  return shift.getSExtValue();
}

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_BUFFERVIEWS_H
