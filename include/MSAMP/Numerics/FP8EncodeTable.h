//===- FP8EncodeTable.h - table-driven exact FP8 encoding --------*- C++
//-*-===//
//
// A host-side accelerator for encodeE4M3 / encodeE5M2 that is exact by
// construction, not an approximation.
//
// Round-to-nearest-even of an f32 to an FP8 format is a function of the sign,
// the exponent, the mantissa bits down to the rounding bit, and whether any
// bit below the rounding bit is set (the sticky bit). For E4M3 the rounding bit
// of a normal result is f32 mantissa bit 19, for E5M2 bit 20, and it only
// moves up for FP8 subnormals; so the upper 16 bits of the f32 plus "are the
// lower 16 bits non-zero" determine the code. The table holds the core's
// encode of one representative per (upper 16 bits, sticky) class: the upper
// bits with lower bits 0 or 1. Any input in the class rounds (and saturates, or
// stays NaN/Inf-derived) the same way, so a lookup equals the core's encode for
// every one of the 2^32 inputs; the tests check it over every f16 value, the
// boundaries and random bit patterns.
//
// 2 x 128 KiB of tables, built once. Not for device code (use FP8.h there).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_FP8ENCODETABLE_H
#define MSAMP_NUMERICS_FP8ENCODETABLE_H

#include "MSAMP/Numerics/FP8.h"

#include <cstdint>
#include <cstring>
#include <memory>

namespace msamp::numerics {

class FP8EncodeTable {
public:
  explicit FP8EncodeTable(Format format) : table(new uint8_t[1u << 17]) {
    for (uint32_t upper = 0; upper < (1u << 16); ++upper)
      for (uint32_t sticky = 0; sticky < 2; ++sticky) {
        uint32_t bits = (upper << 16) | sticky;
        float representative;
        std::memcpy(&representative, &bits, sizeof(bits));
        table[(upper << 1) | sticky] = static_cast<uint8_t>(
            format == Format::E4M3 ? encodeE4M3(representative)
                                   : encodeE5M2(representative));
      }
  }

  uint8_t encode(float x) const {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    return table[((bits >> 16) << 1) | ((bits & 0xFFFFu) != 0)];
  }

  /// The FP8 half of numerics::quantize: encode(x * scale), product in f32.
  uint8_t quantize(float x, float scale) const {
    return encode(detail::mulRn(x, scale));
  }

  /// The shared tables (built on first use, thread-safe).
  static const FP8EncodeTable &get(Format format) {
    static const FP8EncodeTable e4m3(Format::E4M3);
    static const FP8EncodeTable e5m2(Format::E5M2);
    return format == Format::E4M3 ? e4m3 : e5m2;
  }

private:
  std::unique_ptr<uint8_t[]> table;
};

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_FP8ENCODETABLE_H
