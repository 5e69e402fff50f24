//===- AccelerateRecipe.h - Accelerate config files as levels ---*- C++ -*-===//
//
// Maps a Hugging Face Accelerate config file (the YAML `accelerate config`
// writes, or the JSON of a dict: JSON is YAML) onto an msamp level and the
// options of its pipeline: `mixed_precision` picks the row of the level
// table and `fp8_config` (backend MSAMP, TE or AO) the FP8 recipe
// (docs/Levels.md, "Accelerate recipes"). The one definition of that
// mapping: msamp-run --recipe, msamp-compile --recipe and Python's
// msamp.compile(accelerate_config=...) all go through it.
//
// Free of LLVM and MLIR (msamp-run links neither, docs/Architecture.md 2); the
// YAML parser is Debian's yaml-cpp, whose exceptions stay inside the
// implementation: every function here reports through its return value.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_SUPPORT_ACCELERATERECIPE_H
#define MSAMP_SUPPORT_ACCELERATERECIPE_H

#include <optional>
#include <string>
#include <vector>

namespace msamp_recipe {

/// What an Accelerate config asks for, in msamp's terms.
struct AccelerateRecipe {
  /// A level of Levels.h ("O2", "te", "amp-bf16", ...).
  std::string level;
  /// Options of that level's pipeline, space separated ("" for none).
  std::string pipelineOptions;
  /// One line per key that decided something: "fp8_config.margin: 0 ->
  /// margin=0" (Accelerate's defaults for keys the file leaves out too).
  std::vector<std::string> mapping;
  /// Keys accepted without an effect of their own, located:
  /// "FILE:LINE:COL: note: ...".
  std::vector<std::string> notes;
};

/// Reads and maps the config file `file`. False with `error` set
/// ("FILE:LINE:COL: error: ..." naming the key) on a file that cannot be
/// read or parsed, an unknown key, a value of the wrong type, or a recipe
/// msamp cannot run.
bool loadAccelerateRecipe(const std::string &file, AccelerateRecipe &recipe,
                          std::string &error);

/// The same for a config already in memory; `file` names it in messages.
bool parseAccelerateRecipe(const std::string &text, const std::string &file,
                           AccelerateRecipe &recipe, std::string &error);

/// Folds `recipe` (read from `file`) into a tool's --opt-level and
/// --pipeline-options: the level becomes `optLevel` unless one was given,
/// which must then be the same; the recipe's options go in front of the
/// user's, and a user option that the recipe sets too is an error rather
/// than a silent override.
bool mergeRecipe(const AccelerateRecipe &recipe, const std::string &file,
                 std::optional<std::string> &optLevel,
                 std::string &pipelineOptions, std::string &error);

/// The applied mapping as both tools print it: a header line naming the
/// level and options, then the mapping and the notes, one per line.
std::string describeRecipe(const AccelerateRecipe &recipe,
                           const std::string &file);

} // namespace msamp_recipe

#endif // MSAMP_SUPPORT_ACCELERATERECIPE_H
