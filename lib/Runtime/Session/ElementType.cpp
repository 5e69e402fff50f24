//===- ElementType.cpp - Element types of manifests and safetensors -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "ElementType.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstring>
#include <iterator>

namespace msamp::session {
namespace {

struct TypeRow {
  ElementType type;
  const char *mlir;
  const char *safetensors;
  int64_t size;
  bool inManifest;
};

// safetensors names follow the format's specification (safetensors/src/
// tensor.rs, enum Dtype): F8_E4M3 is the OCP "FN" variant (no infinities),
// the one MLIR calls f8E4M3FN.
constexpr TypeRow kTypes[] = {
    {ElementType::F32, "f32", "F32", 4, true},
    {ElementType::F16, "f16", "F16", 2, true},
    {ElementType::BF16, "bf16", "BF16", 2, true},
    {ElementType::F8E4M3FN, "f8E4M3FN", "F8_E4M3", 1, true},
    {ElementType::F8E5M2, "f8E5M2", "F8_E5M2", 1, true},
    {ElementType::I64, "i64", "I64", 8, true},
    {ElementType::I32, "i32", "I32", 4, true},
    {ElementType::U8, "ui8", "U8", 1, false},
    {ElementType::F64, "f64", "F64", 8, false},
    {ElementType::I8, "i8", "I8", 1, false},
    {ElementType::I16, "i16", "I16", 2, false},
    {ElementType::U16, "ui16", "U16", 2, false},
    {ElementType::U32, "ui32", "U32", 4, false},
    {ElementType::U64, "ui64", "U64", 8, false},
    {ElementType::Bool, "i1", "BOOL", 1, true},
};

const TypeRow &row(ElementType type) {
  for (const TypeRow &r : kTypes)
    if (r.type == type)
      return r;
  return kTypes[0]; // unreachable: every enumerator has a row
}

/// Exponent mask (all ones: Inf or NaN) and mantissa mask of an IEEE-style
/// binary format, for the non-finite test on the raw bits; f8E4M3FN is
/// special (its all-ones exponent holds ordinary values).
struct FloatBits {
  int bytes;
  uint64_t exponent;
  uint64_t mantissa;
  uint64_t sign;
};

std::optional<FloatBits> floatBits(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return FloatBits{4, 0x7F800000u, 0x007FFFFFu, 0x80000000u};
  case ElementType::F16:
    return FloatBits{2, 0x7C00u, 0x03FFu, 0x8000u};
  case ElementType::BF16:
    return FloatBits{2, 0x7F80u, 0x007Fu, 0x8000u};
  case ElementType::F8E5M2:
    return FloatBits{1, 0x7Cu, 0x03u, 0x80u};
  case ElementType::F64:
    return FloatBits{8, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull,
                     0x8000000000000000ull};
  default:
    return std::nullopt;
  }
}

uint64_t loadBits(const void *data, int64_t index, int bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char *>(data) + index * bytes,
              static_cast<size_t>(bytes)); // little-endian hosts only
  return bits;
}

/// The first element whose bits under `mask` are all set. The state is
/// scanned after every step, so the common all-finite case is a branch-free
/// OR over blocks, which the compiler vectorizes; only a block that has a
/// hit is searched element by element.
template <typename Word>
int64_t findAllOnes(const void *data, int64_t count, uint64_t mask64) {
  const Word mask = static_cast<Word>(mask64);
  constexpr int64_t kBlock = 1024;
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const int64_t end = begin + kBlock < count ? begin + kBlock : count;
    Word words[kBlock];
    std::memcpy(words, static_cast<const char *>(data) + begin * sizeof(Word),
                static_cast<size_t>(end - begin) * sizeof(Word));
    bool hit = false;
    for (int64_t i = 0; i < end - begin; ++i)
      hit |= (words[i] & mask) == mask;
    if (!hit)
      continue;
    for (int64_t i = 0; i < end - begin; ++i)
      if ((words[i] & mask) == mask)
        return begin + i;
  }
  return -1;
}

} // namespace

bool nonFiniteBits(ElementType type, int32_t &width, uint64_t &mask) {
  // f8E4M3FN's NaNs are the bytes with all seven magnitude bits set.
  if (type == ElementType::F8E4M3FN) {
    width = 1;
    mask = 0x7F;
    return true;
  }
  std::optional<FloatBits> f = floatBits(type);
  if (!f)
    return false;
  width = f->bytes;
  mask = f->exponent;
  return true;
}

int64_t findNonFinite(ElementType type, const void *data, int64_t count) {
  int32_t width = 0;
  uint64_t mask = 0;
  if (!nonFiniteBits(type, width, mask))
    return -1;
  switch (width) {
  case 1:
    return findAllOnes<uint8_t>(data, count, mask);
  case 2:
    return findAllOnes<uint16_t>(data, count, mask);
  case 4:
    return findAllOnes<uint32_t>(data, count, mask);
  default:
    return findAllOnes<uint64_t>(data, count, mask);
  }
}

const char *spellNonFinite(ElementType type, const void *data, int64_t index) {
  std::optional<FloatBits> f = floatBits(type);
  if (!f)
    return "nan"; // f8E4M3FN: no infinity
  uint64_t bits = loadBits(data, index, f->bytes);
  if (bits & f->mantissa)
    return "nan";
  return (bits & f->sign) ? "-inf" : "inf";
}

int64_t elementSize(ElementType type) { return row(type).size; }
const char *mlirName(ElementType type) { return row(type).mlir; }

// The first enumerators are msamp_rt_dtype's codes, in its order, so that a
// runtime code converts by value.
static_assert(static_cast<int>(ElementType::F32) == MSAMP_RT_F32 &&
                  static_cast<int>(ElementType::F16) == MSAMP_RT_F16 &&
                  static_cast<int>(ElementType::BF16) == MSAMP_RT_BF16 &&
                  static_cast<int>(ElementType::F8E4M3FN) ==
                      MSAMP_RT_F8E4M3FN &&
                  static_cast<int>(ElementType::F8E5M2) == MSAMP_RT_F8E5M2 &&
                  static_cast<int>(ElementType::I64) == MSAMP_RT_I64 &&
                  static_cast<int>(ElementType::I32) == MSAMP_RT_I32,
              "ElementType must start with msamp_rt_dtype's codes");

std::optional<ElementType> fromRuntimeDtype(int32_t code) {
  // The runtime knows a size for exactly the codes of msamp_rt_dtype.
  if (code < 0 || msamp_rt_dtype_size(code) == 0)
    return std::nullopt;
  return static_cast<ElementType>(code);
}
const char *safetensorsName(ElementType type) { return row(type).safetensors; }

std::optional<ElementType> parseManifestType(std::string_view mlir) {
  for (const TypeRow &r : kTypes)
    if (r.inManifest && mlir == r.mlir)
      return r.type;
  return std::nullopt;
}

std::optional<ElementType> parseSafetensorsType(std::string_view name) {
  for (const TypeRow &r : kTypes)
    if (name == r.safetensors)
      return r.type;
  return std::nullopt;
}

} // namespace msamp::session
