//===- CpuConvert.h - Block conversions between storage and f32 -*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CPU kernels work on blocks of kBlock elements: convert a block of any
// storage type to f32 in a stack buffer, compute in f32, convert back. The
// dtype switch then runs once per block instead of once per element, and the
// f32 loops in between are plain arrays the compiler can vectorize.
//
// Every conversion is the numerics core's (MSAMP/Numerics/FP8.h). FP8 decodes
// go through 256-entry tables that are filled from numerics::decode, so a
// table lookup is the core's decode by construction; products with a scale
// are numerics::quantize / numerics::dequantize or the same single f32
// multiply they perform.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CPU_CPUCONVERT_H
#define MSAMP_LIB_RUNTIME_CPU_CPUCONVERT_H

#include "../DType.h"
#include "CpuF16.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/FP8EncodeTable.h"

#include <cstdint>
#include <cstring>

namespace msamp::runtime::cpu {

/// Elements per block: 1 KiB of f32 per buffer, a few buffers on the stack.
constexpr int64_t kBlock = 256;

/// decode(format, code) for every byte, for E4M3 and E5M2.
struct FP8DecodeTables {
  float e4m3[256];
  float e5m2[256];
};

inline const FP8DecodeTables &fp8DecodeTables() {
  static const FP8DecodeTables tables = [] {
    FP8DecodeTables t;
    for (int code = 0; code < 256; ++code) {
      t.e4m3[code] = numerics::decodeE4M3(static_cast<uint8_t>(code));
      t.e5m2[code] = numerics::decodeE5M2(static_cast<uint8_t>(code));
    }
    return t;
  }();
  return tables;
}

/// The decode table of an FP8 dtype.
inline const float *fp8Table(int32_t dtype) {
  const FP8DecodeTables &t = fp8DecodeTables();
  return dtype == MSAMP_RT_F8E4M3FN ? t.e4m3 : t.e5m2;
}

/// dst[j] = decode(src[begin + j]) * scaleInv for j < count, one f32
/// multiply (numerics::dequantize); `src` is f32, f16, bf16 or FP8. For f32
/// and bf16 (unscaled types) scaleInv must be 1 and the values are copied
/// exactly.
inline void loadF32(const void *src, int32_t dtype, int64_t begin,
                    int64_t count, float scaleInv, float *dst) {
  switch (dtype) {
  case MSAMP_RT_F32:
    std::memcpy(dst, static_cast<const float *>(src) + begin,
                count * sizeof(float));
    return;
  case MSAMP_RT_BF16: {
    const uint16_t *s = static_cast<const uint16_t *>(src) + begin;
    for (int64_t j = 0; j < count; ++j)
      dst[j] = decodeBF16(s[j]);
    return;
  }
  case MSAMP_RT_F16:
    decodeF16Block(static_cast<const uint16_t *>(src) + begin, count, scaleInv,
                   dst);
    return;
  default: {
    const float *table = fp8Table(dtype);
    const uint8_t *s = static_cast<const uint8_t *>(src) + begin;
    for (int64_t j = 0; j < count; ++j)
      dst[j] = numerics::detail::mulRn(table[s[j]], scaleInv);
    return;
  }
  }
}

/// dst[begin + j] = Q(src[j] * scale) for a scaled format (FP8: saturating,
/// f16: IEEE), numerics::quantize.
inline void storeScaled(const float *src, int64_t count, float scale,
                        int32_t dtype, void *dst, int64_t begin) {
  const Format f = toFormat(dtype);
  if (dtype == MSAMP_RT_F16) {
    encodeF16Block(src, count, scale, static_cast<uint16_t *>(dst) + begin);
    return;
  }
  // The exact table form of numerics::quantize (FP8EncodeTable.h): the
  // bit-level encoder is branchy and dominated O2 step time.
  const numerics::FP8EncodeTable &table = numerics::FP8EncodeTable::get(f);
  uint8_t *d = static_cast<uint8_t *>(dst) + begin;
  for (int64_t j = 0; j < count; ++j)
    d[j] = table.quantize(src[j], scale);
}

/// dst[begin + j] = round(src[j]) to a high-precision type (f32 copy, bf16
/// or f16 round to nearest even with IEEE overflow).
inline void storeHigh(const float *src, int64_t count, int32_t dtype, void *dst,
                      int64_t begin) {
  switch (dtype) {
  case MSAMP_RT_F32:
    std::memcpy(static_cast<float *>(dst) + begin, src, count * sizeof(float));
    return;
  case MSAMP_RT_BF16: {
    uint16_t *d = static_cast<uint16_t *>(dst) + begin;
    for (int64_t j = 0; j < count; ++j)
      d[j] = encodeBF16(src[j]);
    return;
  }
  default:
    // x * 1 is x (a NaN stays a NaN, which encodes to the canonical one).
    encodeF16Block(src, count, 1.0f, static_cast<uint16_t *>(dst) + begin);
    return;
  }
}

} // namespace msamp::runtime::cpu

#endif // MSAMP_LIB_RUNTIME_CPU_CPUCONVERT_H
