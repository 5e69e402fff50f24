//===- DType.h - Element types of the runtime ABI ---------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the ABI adapters and the backends: element sizes, the
// mapping from msamp_rt_dtype to the numerics core's Format, and bfloat16.
//
// Every FP8 and binary16 conversion goes through MSAMP/Numerics/FP8.h. The
// core has no bfloat16 yet, so the two bf16 conversions live here; they are
// the IEEE ones (round to nearest even, overflow to Inf, NaN kept quiet) in
// the same integer-on-the-bits style as FP8.h, and belong in the core once it
// grows bf16.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_DTYPE_H
#define MSAMP_LIB_RUNTIME_DTYPE_H

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

namespace msamp::runtime {

using numerics::Format;

/// Size in bytes of one element; 0 for a value outside msamp_rt_dtype.
inline int32_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case MSAMP_RT_F32:
  case MSAMP_RT_I32:
    return 4;
  case MSAMP_RT_F16:
  case MSAMP_RT_BF16:
    return 2;
  case MSAMP_RT_F8E4M3FN:
  case MSAMP_RT_F8E5M2:
    return 1;
  case MSAMP_RT_I64:
    return 8;
  default:
    return 0;
  }
}

/// Printable name, for error messages ("<invalid>" outside the enum).
inline const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case MSAMP_RT_F32:
    return "f32";
  case MSAMP_RT_F16:
    return "f16";
  case MSAMP_RT_BF16:
    return "bf16";
  case MSAMP_RT_F8E4M3FN:
    return "f8E4M3FN";
  case MSAMP_RT_F8E5M2:
    return "f8E5M2";
  case MSAMP_RT_I64:
    return "i64";
  case MSAMP_RT_I32:
    return "i32";
  default:
    return "<invalid>";
  }
}

inline bool isFP8(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN || dtype == MSAMP_RT_F8E5M2;
}

/// A format a scaled tensor can be stored in (FP8 or MS-AMP's scaled f16).
inline bool isScaledFormat(int32_t dtype) {
  return isFP8(dtype) || dtype == MSAMP_RT_F16;
}

/// Real-valued (unscaled) float types.
inline bool isHighPrecision(int32_t dtype) {
  return dtype == MSAMP_RT_F32 || dtype == MSAMP_RT_BF16 ||
         dtype == MSAMP_RT_F16;
}

/// The numerics-core format of a scaled storage type. Only valid when
/// isScaledFormat(dtype).
inline Format toFormat(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN ? Format::E4M3
         : dtype == MSAMP_RT_F8E5M2 ? Format::E5M2
                                    : Format::F16;
}

/// Exact bf16 -> f32: bf16 is the top half of an f32.
inline float decodeBF16(uint16_t bits) {
  return numerics::detail::bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

/// f32 -> bf16 with round to nearest even, subnormals kept, overflow to Inf
/// (IEEE, no saturation, like binary16) and NaN -> quiet NaN with its sign.
inline uint16_t encodeBF16(float x) {
  const uint32_t bits = numerics::detail::floatToBits(x);
  if ((bits & numerics::detail::kF32AbsMask) > numerics::detail::kF32Inf)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7FFF plus the lowest kept bit rounds the dropped half to
  // nearest, ties to even; a carry out of the mantissa steps the exponent,
  // and from the largest finite binade on into Inf.
  const uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_DTYPE_H
