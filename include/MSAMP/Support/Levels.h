//===- Levels.h - the optimization levels and their pipelines ---*- C++ -*-===//
//
// The one list of the level strings that msamp accepts wherever a level is
// named (msamp-compile / msamp-run --opt-level, the manifest's "level", the
// memory report, Python's msamp.compile), and the pipeline each compiles
// with. Header-only and free of LLVM so that msamp-run and the session
// library, which link no MLIR (docs/Architecture.md 2), share it.
//
// O0-O3 are MS-AMP's levels (O0: all f32). amp-bf16, amp-fp16 and te are
// the two reference rows of MS-AMP's level table, compiled by
// --msamp-amp (PyTorch autocast with f32 master state; fp16 with
// GradScaler's dynamic loss scaling) and --msamp-te (Transformer Engine's
// DelayedScaling defaults); docs/Levels.md.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_SUPPORT_LEVELS_H
#define MSAMP_SUPPORT_LEVELS_H

#include <string>
#include <string_view>

namespace msamp_levels {

struct LevelInfo {
  std::string_view name;     // as written in --opt-level and the manifest
  std::string_view pipeline; // the registered pipeline, without "--"
  std::string_view options;  // pipeline options the level itself sets
};

inline constexpr LevelInfo kLevels[] = {
    // O0 is all f32: activations=bf16 is refused there (docs/Interfaces.md 3).
    {"O0", "msamp-o0", "activations=f32"},
    {"O1", "msamp-o1", ""},
    {"O2", "msamp-o2", ""},
    {"O3", "msamp-o3", ""},
    {"amp-bf16", "msamp-amp", "dtype=bf16"},
    {"amp-fp16", "msamp-amp", "dtype=fp16"},
    {"te", "msamp-te", ""},
};

/// The level named `name`, or nullptr.
inline const LevelInfo *lookupLevel(std::string_view name) {
  for (const LevelInfo &level : kLevels)
    if (level.name == name)
      return &level;
  return nullptr;
}

/// "O0, O1, O2, O3, amp-bf16, amp-fp16 or te", for error messages.
inline std::string levelNames() {
  std::string text;
  constexpr size_t count = sizeof(kLevels) / sizeof(kLevels[0]);
  for (size_t i = 0; i < count; ++i) {
    if (i)
      text += i + 1 == count ? " or " : ", ";
    text += kLevels[i].name;
  }
  return text;
}

/// The keys ("dtype") of a pipeline option string ("dtype=bf16 lr=0.1").
inline bool hasOptionKey(std::string_view options, std::string_view key) {
  size_t at = 0;
  while (at < options.size()) {
    size_t end = options.find(' ', at);
    if (end == std::string_view::npos)
      end = options.size();
    std::string_view token = options.substr(at, end - at);
    if (token.substr(0, token.find('=')) == key)
      return true;
    at = end + 1;
  }
  return false;
}

/// The first option ("key=value") of `fixed` whose key `userOptions` sets
/// too, or "" when there is none.
inline std::string_view sharedOption(std::string_view fixed,
                                     std::string_view userOptions) {
  size_t at = 0;
  while (at < fixed.size()) {
    size_t end = fixed.find(' ', at);
    if (end == std::string_view::npos)
      end = fixed.size();
    std::string_view token = fixed.substr(at, end - at);
    if (hasOptionKey(userOptions, token.substr(0, token.find('='))))
      return token;
    at = end + 1;
  }
  return "";
}

/// The first option of `userOptions` that `level` fixes itself (amp-fp16's
/// "dtype"), or "" when there is none: the level name decides it, and a
/// contradicting option must be an error rather than silently lose.
inline std::string fixedOptionIn(const LevelInfo &level,
                                 std::string_view userOptions) {
  std::string_view token = sharedOption(level.options, userOptions);
  return std::string(token.substr(0, token.find('=')));
}

/// The textual pipeline of `level` with the user's pipeline options (check
/// fixedOptionIn first).
inline std::string levelPipeline(const LevelInfo &level,
                                 std::string_view userOptions) {
  std::string options(userOptions);
  if (!level.options.empty()) {
    if (!options.empty())
      options += " ";
    options += level.options;
  }
  return std::string(level.pipeline) + "{" + options + "}";
}

} // namespace msamp_levels

#endif // MSAMP_SUPPORT_LEVELS_H
