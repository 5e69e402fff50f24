//===- MemRefView.h - Validated views of memref descriptors -----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What the ABI entry points (MemRefABI.cpp) use to read the unranked memref
// descriptors compiled code passes: each is validated (null pointers,
// negative sizes, row-major contiguity, one element for scalars) and becomes
// a View of plain pointers; a failure records the error (Status.h) and
// returns it.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_MEMREFVIEW_H
#define MSAMP_LIB_RUNTIME_MEMREFVIEW_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstddef>
#include <cstdint>

namespace msamp::runtime {

/// Ranks above this are rejected before their sizes are read: no msamp op
/// has more than 3 dimensions, and a garbage rank must not make us read far
/// past a descriptor.
constexpr int64_t kMaxRank = 16;

/// A validated memref: first element and shape.
struct View {
  void *data = nullptr;
  int64_t rank = 0;
  const int64_t *sizes = nullptr;
  int64_t numel = 0;
};

/// "[a, b, c]" for messages.
const char *formatArray(const int64_t *values, int64_t n, char *buf,
                        size_t size);

/// Unpacks `umr`, the argument named `what` of entry point `fn`, whose
/// elements have type `dtype`.
msamp_rt_status unpack(const char *fn, const char *what,
                       const msamp_rt_unranked_memref *umr, int32_t dtype,
                       View &view);

/// Unpacks a scalar argument (scale, amax, lr, step): exactly one element,
/// of any rank (0-d in compiled code).
msamp_rt_status unpackScalar(const char *fn, const char *what,
                             const msamp_rt_unranked_memref *umr, int32_t dtype,
                             void *&data);

/// unpackScalar of an f32 scalar.
msamp_rt_status unpackF32Scalar(const char *fn, const char *what,
                                const msamp_rt_unranked_memref *umr,
                                float *&data);
msamp_rt_status unpackF32Scalar(const char *fn, const char *what,
                                const msamp_rt_unranked_memref *umr,
                                const float *&data);

/// Requires `a` and `b` (named for the message) to have the same shape.
msamp_rt_status sameShape(const char *fn, const char *whatA, const View &a,
                          const char *whatB, const View &b);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_MEMREFVIEW_H
