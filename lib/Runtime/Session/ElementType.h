//===- ElementType.h - Element types of manifests and safetensors -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// One table for the element types the session meets: the MLIR spelling used
// by manifest.json (f32, f8E4M3FN, ...), the safetensors spelling used by
// checkpoints and data files (F32, F8_E4M3, ...) and the byte size. Types
// that safetensors knows but msamp does not use (F64, BOOL, ...) are in the
// table too, so that an error can say "found F64" instead of "unknown".
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_ELEMENTTYPE_H
#define MSAMP_LIB_RUNTIME_SESSION_ELEMENTTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace msamp::session {

enum class ElementType : uint8_t {
  F32,
  F16,
  BF16,
  F8E4M3FN,
  F8E5M2,
  I64,
  I32,
  U8,
  // Readable in safetensors files, never in a manifest (but Bool: i1
  // buffers, masks, are).
  F64,
  I8,
  I16,
  U16,
  U32,
  U64,
  Bool,
};

/// Bytes per element.
int64_t elementSize(ElementType type);

/// MLIR spelling ("f8E4M3FN"); "ui8", "f64", ... for the extra types.
const char *mlirName(ElementType type);

/// The type of a runtime dtype code (msamp_rt_dtype), or none outside it.
std::optional<ElementType> fromRuntimeDtype(int32_t code);

/// safetensors spelling ("F8_E4M3").
const char *safetensorsName(ElementType type);

/// The types a manifest may use: f32, f16, bf16, f8E4M3FN, f8E5M2, i64, i32.
std::optional<ElementType> parseManifestType(std::string_view mlir);

/// Any dtype of the safetensors format.
std::optional<ElementType> parseSafetensorsType(std::string_view name);

inline bool isFloatType(ElementType type) {
  return type == ElementType::F32 || type == ElementType::F16 ||
         type == ElementType::BF16 || type == ElementType::F8E4M3FN ||
         type == ElementType::F8E5M2 || type == ElementType::F64;
}

/// The index of the first element of `data` (`count` elements of `type`)
/// that is NaN or infinite, read from the bit pattern (f8E4M3FN has no
/// infinity: its NaNs are 0x7F and 0xFF), or -1 when all are finite or the
/// type is not a floating-point type.
int64_t findNonFinite(ElementType type, const void *data, int64_t count);

/// The rule findNonFinite applies, for a scan elsewhere (a GPU step's state
/// on the device): an element of `width` bytes is non-finite when its bits
/// hold every bit of `mask`. False for types that cannot be non-finite.
bool nonFiniteBits(ElementType type, int32_t &width, uint64_t &mask);

/// "nan", "inf" or "-inf" for the element at `index` (which findNonFinite
/// returned).
const char *spellNonFinite(ElementType type, const void *data, int64_t index);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_ELEMENTTYPE_H
