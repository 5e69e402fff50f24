//===- RecipeEnums.h - the enum-valued recipe options -----------*- C++ -*-===//
//
// The enums of RecipeEnums.td (FP8Format, ScalingMode, AMPDtype,
// LossScaleMode, OptimizerKind, TrainStepLevel, MemoryReportFormat) and
// enumValues<E>(), the llvm::cl modifier that gives an option of enum type E
// the spellings of E's cases: every pass and pipeline option of such a type
// takes its values from here, so a spelling is written once (in the .td file)
// and an unknown value is rejected by the option parser before any pass runs.
// EnumParser<E> is the pipelines' parser, whose error lists the spellings.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_RECIPEENUMS_H
#define MSAMP_TRANSFORMS_RECIPEENUMS_H

#include "MSAMP/Dialect/MSAMPDialect.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>

#include "MSAMP/Transforms/RecipeEnums.h.inc"

namespace mlir::msamp {

/// The cl::values of enum E, read from its generated stringifyEnum: cases
/// numbered 0, 1, ... (as every enum of RecipeEnums.td and MSAMPEnums.td
/// is), each spelled as in the .td file. A case may be spelled as the empty
/// string (OptimizerKind::Keep): the loop ends at the first number that is
/// no case, whose spelling is empty and names another case or none.
template <typename E>
struct EnumValues {
  template <typename Opt>
  void apply(Opt &option) const {
    for (uint32_t i = 0;; ++i) {
      llvm::StringRef name = stringifyEnum(static_cast<E>(i));
      if (name.empty() && symbolizeEnum<E>(name) != static_cast<E>(i))
        return;
      option.getParser().addLiteralOption(name, static_cast<E>(i), name);
    }
  }
};

template <typename E>
EnumValues<E> enumValues() {
  return {};
}

/// The parser of the pipelines' enum options (RecipeOptions.h): LLVM's, but
/// an unknown spelling is an error that lists the accepted ones ("for the
/// --fp8-format option: 'e5m2' is not one of: hybrid, e4m3"). Pass options
/// declared in Passes.td cannot name a parser and keep LLVM's message.
template <typename E>
struct EnumParser : llvm::cl::parser<E> {
  using llvm::cl::parser<E>::parser;

  /// Returns true on error, as every llvm::cl parser.
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             E &value) {
    std::string names;
    for (const auto &entry : this->Values) {
      if (entry.Name == arg) {
        value = entry.V.getValue();
        return false;
      }
      // The empty spelling (OptimizerKind::Keep) is the default, not listed.
      if (!entry.Name.empty())
        names += (names.empty() ? "" : ", ") + entry.Name.str();
    }
    return option.error("'" + arg + "' is not one of: " + names);
  }

  /// How PassOptions prints the value (a pipeline's textual form).
  static void print(llvm::raw_ostream &os, const E &value) {
    os << stringifyEnum(value);
  }
};

} // namespace mlir::msamp

#endif // MSAMP_TRANSFORMS_RECIPEENUMS_H
