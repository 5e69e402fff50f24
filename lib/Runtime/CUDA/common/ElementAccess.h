//===- ElementAccess.h - Per-element loads and stores -----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The per-element counterparts of the CPU backend's block conversions
// (CPU/CpuConvert.h: loadF32, storeScaled, storeHigh), written once as
// MSAMP_HOST_DEVICE functions on top of the numerics core. The CUDA kernels
// call them on the device; the host unit tests call the very same functions
// on the CPU and compare them with the CPU backend, which pins the arithmetic
// (which products are rounded where) without a GPU.
//
// The rules are the CPU backend's:
//   load:  f32 and bf16 are read exactly and never scaled; f16 and FP8 are
//          decode(code) * scale_inv with one f32 rounding
//          (numerics::dequantize);
//   store: a scaled format (FP8 saturating, f16 IEEE) is
//          numerics::quantize(format, x, scale); a high-precision type is
//          rounded to nearest even with IEEE overflow.
//
// bfloat16 is not in the numerics core yet; decodeBF16/encodeBF16 below are
// DType.h's, restated as MSAMP_HOST_DEVICE (DType.h's are host-only inline
// functions). The host test checks the two agree on every bf16 pattern and
// on f32 rounding cases; both move into the core together.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_ELEMENTACCESS_H
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_ELEMENTACCESS_H

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

namespace msamp::runtime::cuda {

namespace nd = ::msamp::numerics::detail;
using ::msamp::numerics::Format;

/// The numerics-core format of a scaled storage dtype (FP8 or f16).
MSAMP_HOST_DEVICE inline Format formatOf(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN ? Format::E4M3
         : dtype == MSAMP_RT_F8E5M2 ? Format::E5M2
                                    : Format::F16;
}

MSAMP_HOST_DEVICE inline bool isScaledDType(int32_t dtype) {
  return dtype == MSAMP_RT_F8E4M3FN || dtype == MSAMP_RT_F8E5M2 ||
         dtype == MSAMP_RT_F16;
}

/// Exact bf16 -> f32 (DType.h decodeBF16).
MSAMP_HOST_DEVICE inline float decodeBF16(uint16_t bits) {
  return nd::bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

/// f32 -> bf16, round to nearest even, IEEE overflow, NaN kept quiet with
/// its sign (DType.h encodeBF16, bit for bit).
MSAMP_HOST_DEVICE inline uint16_t encodeBF16(float x) {
  const uint32_t bits = nd::floatToBits(x);
  if ((bits & nd::kF32AbsMask) > nd::kF32Inf)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t roundingBias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

/// src[i] as f32: f32/bf16 exactly (scaleInv ignored), f16/FP8 as
/// decode * scaleInv (one rounding). `dtype` is a high-precision or scaled
/// storage type.
MSAMP_HOST_DEVICE inline float loadElement(const void *src, int32_t dtype,
                                           int64_t i, float scaleInv) {
  switch (dtype) {
  case MSAMP_RT_F32:
    return static_cast<const float *>(src)[i];
  case MSAMP_RT_BF16:
    return decodeBF16(static_cast<const uint16_t *>(src)[i]);
  case MSAMP_RT_F16:
    return numerics::dequantize(
        Format::F16, static_cast<const uint16_t *>(src)[i], scaleInv);
  default:
    return numerics::dequantize(formatOf(dtype),
                                static_cast<const uint8_t *>(src)[i], scaleInv);
  }
}

/// dst[i] = Q(x * scale) for a scaled format (numerics::quantize).
MSAMP_HOST_DEVICE inline void
storeScaledElement(void *dst, int32_t dtype, int64_t i, float x, float scale) {
  const uint16_t code = numerics::quantize(formatOf(dtype), x, scale);
  if (dtype == MSAMP_RT_F16)
    static_cast<uint16_t *>(dst)[i] = code;
  else
    static_cast<uint8_t *>(dst)[i] = static_cast<uint8_t>(code);
}

/// dst[i] = round(x) to f32 (copy), bf16 or f16 (nearest even, IEEE).
MSAMP_HOST_DEVICE inline void storeHighElement(void *dst, int32_t dtype,
                                               int64_t i, float x) {
  switch (dtype) {
  case MSAMP_RT_F32:
    static_cast<float *>(dst)[i] = x;
    return;
  case MSAMP_RT_BF16:
    static_cast<uint16_t *>(dst)[i] = encodeBF16(x);
    return;
  default:
    static_cast<uint16_t *>(dst)[i] = numerics::encodeF16(x);
    return;
  }
}

/// |x| as bits. For non-negative IEEE values the integer order is the value
/// order and every NaN is above +Inf, so an integer max over these is
/// numerics::amax (NaN anywhere wins) and can use integer atomics.
MSAMP_HOST_DEVICE inline uint32_t magnitudeBits(float x) {
  return nd::floatToBits(x) & nd::kF32AbsMask;
}

/// The amax an integer max of magnitudeBits stands for: numerics::amax's
/// canonical quiet NaN when any NaN was seen, else the value.
MSAMP_HOST_DEVICE inline float amaxFromBits(uint32_t bits) {
  return bits > nd::kF32Inf ? nd::bitsToFloat(nd::kF32QuietNaN)
                            : nd::bitsToFloat(bits);
}

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_ELEMENTACCESS_H
