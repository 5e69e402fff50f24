//===- ElementType.cpp - Element types of manifests and safetensors -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "ElementType.h"

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

} // namespace

int64_t elementSize(ElementType type) { return row(type).size; }
const char *mlirName(ElementType type) { return row(type).mlir; }
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
