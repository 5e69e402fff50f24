//===- IndexReads.h - how a linalg.generic body reads an index --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The facts --msamp-index-checks (index inputs) and
// --msamp-computed-index-checks (indices computed in the graph) both derive
// a valid range from: the value an integer is compared with, seen from
// inside the body of the linalg.generic that reads it.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRAINSTEP_INDEXREADS_H
#define MSAMP_TRAINSTEP_INDEXREADS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::msamp {

/// `v` with value-preserving integer casts (index_cast, extsi, extui,
/// trunci) stripped.
Value stripIndexCasts(Value v);

/// The dimension `d` when `v` is (a cast of) linalg.index d of `gen`.
std::optional<unsigned> loopIndexOf(Value v, linalg::GenericOp gen);

/// The extent of the iota that `v` reads, when `v` is a block argument of
/// `gen` bound to a tensor produced by a generic that yields (a cast of) its
/// own loop index d and reads it along that dimension.
std::optional<int64_t> iotaExtentOf(Value v, linalg::GenericOp gen);

/// The integer constant `v` is, directly or as a block argument of `gen`
/// bound to a splat constant tensor.
std::optional<int64_t> constantOf(Value v, linalg::GenericOp gen);

/// The static extent a one-hot equality compare of an index with `other`
/// bounds it by: that of the loop index or iota `other` is.
std::optional<int64_t> oneHotExtentOf(Value other, linalg::GenericOp gen);

} // namespace mlir::msamp

#endif // MSAMP_TRAINSTEP_INDEXREADS_H
