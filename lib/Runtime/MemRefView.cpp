//===- MemRefView.cpp - Validated views of memref descriptors -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The descriptor layout is MLIR's C interface (mlir/ExecutionEngine/
// CRunnerUtils.h, StridedMemRefType), restated here so that the runtime
// includes no MLIR header: { void *allocated; void *aligned; int64_t offset;
// int64_t sizes[rank]; int64_t strides[rank]; }.
//
//===----------------------------------------------------------------------===//

#include "MemRefView.h"
#include "DType.h"
#include "Status.h"

#include <cstdint>
#include <cstdio>

static_assert(sizeof(void *) == 8, "the runtime ABI assumes 64-bit pointers");
static_assert(sizeof(msamp_rt_memref_header) == 24,
              "descriptor head must be {ptr, ptr, i64}");

namespace msamp::runtime {

/// "[a, b, c]" for messages.
const char *formatArray(const int64_t *values, int64_t n, char *buf,
                        size_t size) {
  size_t used = static_cast<size_t>(std::snprintf(buf, size, "["));
  for (int64_t i = 0; i < n && used < size; ++i)
    used += static_cast<size_t>(
        std::snprintf(buf + used, size - used, i ? ", %lld" : "%lld",
                      static_cast<long long>(values[i])));
  if (used < size)
    std::snprintf(buf + used, size - used, "]");
  return buf;
}

/// Unpacks `umr`, the argument named `what` of entry point `fn`, whose
/// elements have type `dtype`.
msamp_rt_status unpack(const char *fn, const char *what,
                       const msamp_rt_unranked_memref *umr, int32_t dtype,
                       View &view) {
  if (!umr)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT, "%s: %s is null", fn,
                       what);
  if (umr->rank < 0 || umr->rank > kMaxRank)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: %s has rank %lld (expected 0..%lld)", fn, what,
                       static_cast<long long>(umr->rank),
                       static_cast<long long>(kMaxRank));
  if (!umr->descriptor)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: %s has a null descriptor", fn, what);
  const auto *head =
      static_cast<const msamp_rt_memref_header *>(umr->descriptor);
  const int64_t *sizes = reinterpret_cast<const int64_t *>(head + 1);
  const int64_t *strides = sizes + umr->rank;

  int64_t numel = 1;
  for (int64_t i = 0; i < umr->rank; ++i) {
    if (sizes[i] < 0)
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "%s: %s has negative size %lld in dimension %lld", fn,
                         what, static_cast<long long>(sizes[i]),
                         static_cast<long long>(i));
    if (sizes[i] != 0 && numel > INT64_MAX / sizes[i])
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "%s: %s has too many elements", fn, what);
    numel *= sizes[i];
  }
  // Row-major dense: walking from the innermost dimension, each stride is
  // the product of the sizes inside it. A dimension of size 1 is never
  // stepped over, so its stride is free (MLIR leaves it arbitrary after
  // some reshapes); an empty tensor has no elements to misplace.
  if (numel != 0) {
    int64_t expected = 1;
    for (int64_t i = umr->rank - 1; i >= 0; --i) {
      if (sizes[i] != 1 && strides[i] != expected) {
        char sizeBuf[256], strideBuf[256];
        return recordError(
            MSAMP_RT_ERROR_NON_CONTIGUOUS,
            "%s: %s: strides %s are not row-major contiguous for sizes %s", fn,
            what, formatArray(strides, umr->rank, strideBuf, sizeof(strideBuf)),
            formatArray(sizes, umr->rank, sizeBuf, sizeof(sizeBuf)));
      }
      expected *= sizes[i];
    }
  }
  if (!head->aligned && numel != 0)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: %s has a null data pointer", fn, what);
  view.data = head->aligned ? static_cast<char *>(head->aligned) +
                                  head->offset * dtypeSize(dtype)
                            : nullptr;
  view.rank = umr->rank;
  view.sizes = sizes;
  view.numel = numel;
  return MSAMP_RT_OK;
}

/// Unpacks a scalar argument (scale, amax, lr, step): exactly one element,
/// of any rank (0-d in compiled code).
msamp_rt_status unpackScalar(const char *fn, const char *what,
                             const msamp_rt_unranked_memref *umr, int32_t dtype,
                             void *&data) {
  View view;
  if (msamp_rt_status s = unpack(fn, what, umr, dtype, view))
    return s;
  if (view.numel != 1) {
    char sizeBuf[256];
    return recordError(
        MSAMP_RT_ERROR_SHAPE_MISMATCH,
        "%s: %s must hold one element, has sizes %s", fn, what,
        formatArray(view.sizes, view.rank, sizeBuf, sizeof(sizeBuf)));
  }
  data = view.data;
  return MSAMP_RT_OK;
}

msamp_rt_status unpackF32Scalar(const char *fn, const char *what,
                                const msamp_rt_unranked_memref *umr,
                                float *&data) {
  void *raw = nullptr;
  msamp_rt_status s = unpackScalar(fn, what, umr, MSAMP_RT_F32, raw);
  data = static_cast<float *>(raw);
  return s;
}

msamp_rt_status unpackF32Scalar(const char *fn, const char *what,
                                const msamp_rt_unranked_memref *umr,
                                const float *&data) {
  float *writable = nullptr;
  msamp_rt_status s = unpackF32Scalar(fn, what, umr, writable);
  data = writable;
  return s;
}

/// Requires `a` and `b` (named for the message) to have the same shape.
msamp_rt_status sameShape(const char *fn, const char *whatA, const View &a,
                          const char *whatB, const View &b) {
  bool same = a.rank == b.rank;
  for (int64_t i = 0; same && i < a.rank; ++i)
    same = a.sizes[i] == b.sizes[i];
  if (same)
    return MSAMP_RT_OK;
  char bufA[256], bufB[256];
  return recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                     "%s: %s has shape %s but %s has shape %s", fn, whatA,
                     formatArray(a.sizes, a.rank, bufA, sizeof(bufA)), whatB,
                     formatArray(b.sizes, b.rank, bufB, sizeof(bufB)));
}

} // namespace msamp::runtime
