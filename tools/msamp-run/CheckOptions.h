//===- CheckOptions.h - Refusing what msamp-run cannot do -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What the command line asks is checked as a whole before any work: an
// Accelerate recipe is merged into the level and options, then every
// combination this build cannot run is refused (exit 2, kUsageError).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_CHECKOPTIONS_H
#define MSAMP_TOOLS_MSAMP_RUN_CHECKOPTIONS_H

#include "Options.h"

#include <cstddef>
#include <string>

namespace msamp::run {

/// Where `key=` starts in a pipeline option list ("a=1 key=2"), or npos.
size_t findPipelineOption(const std::string &options, const std::string &key);

/// --recipe: loads the Accelerate config and lets it decide the level and
/// pipeline options of `o`; `recipeText` receives the mapping to print.
int applyRecipe(Options &o, std::string &recipeText);

/// 0, or kUsageError with the message printed, for options no run can
/// satisfy.
int checkOptions(const Options &o);

/// --opt-level O3: every rank compiles its own program, which msamp-run
/// gives the world size and its rank.
bool compilesPerRank(const Options &o);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_CHECKOPTIONS_H
