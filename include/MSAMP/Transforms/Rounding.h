//===- Rounding.h - elementwise float conversions of tensors ----*- C++ -*-===//
//
// The one way the precision passes convert a tensor between f32 and a 16-bit
// float type (msamp-amp-gemms' GEMM operands, msamp-bf16-activations' stored
// activations): a linalg.generic of arith.truncf (round to nearest even) or
// arith.extf (exact), which linalg-fuse-elementwise-ops fuses with the
// producer or the consumer. bf16 conversions must then be expanded into
// integer arithmetic (expandBF16Conversions): LLVM lowers a float <-> bfloat
// conversion to a libcall (__truncsfbf2) on hosts without AVX512-BF16, and a
// compiled step may reference nothing but the runtime, libc and libm.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_ROUNDING_H
#define MSAMP_TRANSFORMS_ROUNDING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp {

/// `x` (a statically shaped float tensor) converted elementwise to
/// `elementType` (arith.truncf to a narrower type, arith.extf to a wider
/// one), multiplied by `scale` (a 0-d tensor of x's element type) first when
/// given; built at `b`'s insertion point.
linalg::GenericOp buildElementwiseConvert(OpBuilder &b, Location loc, Value x,
                                          Type elementType,
                                          Value scale = Value());

/// Rewrites the bf16 truncf / extf inside `ops` (and their regions) into
/// integer arithmetic (upstream's round-to-nearest-even expansion).
LogicalResult expandBF16Conversions(ArrayRef<Operation *> ops);

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_ROUNDING_H
