//===- RecipeEnums.h - the enum-valued recipe options -----------*- C++ -*-===//
//
// The enums of RecipeEnums.td (FP8Format, ScalingMode, AMPDtype,
// LossScaleMode) and enumValues<E>(), the llvm::cl modifier that gives an
// option of enum type E the spellings of E's cases: every pass and pipeline
// option of such a type takes its values from here, so a spelling is
// written once (in the .td file) and an unknown value is rejected by the
// option parser ("for the --fp8-format option: Cannot find option named
// 'e5m2'!") before any pass runs.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_RECIPEENUMS_H
#define MSAMP_TRANSFORMS_RECIPEENUMS_H

#include "MSAMP/Dialect/MSAMPDialect.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>

#include "MSAMP/Transforms/RecipeEnums.h.inc"

namespace mlir::msamp {

/// The cl::values of enum E, read from its generated stringifyEnum: cases
/// numbered 0, 1, ... (as every enum of RecipeEnums.td and MSAMPEnums.td
/// is), each spelled as in the .td file.
template <typename E>
struct EnumValues {
  template <typename Opt>
  void apply(Opt &option) const {
    for (uint32_t i = 0;; ++i) {
      llvm::StringRef name = stringifyEnum(static_cast<E>(i));
      if (name.empty())
        return;
      option.getParser().addLiteralOption(name, static_cast<E>(i), name);
    }
  }
};

template <typename E>
EnumValues<E> enumValues() {
  return {};
}

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_RECIPEENUMS_H
