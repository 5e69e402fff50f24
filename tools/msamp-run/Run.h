//===- Run.h - One run of msamp-run -----------------------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// run() is msamp-run after its command line was parsed: the phases of a
// run in order, each in a file of its own (see docs/Interfaces.md 5 for
// what a run does).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_RUN_H
#define MSAMP_TOOLS_MSAMP_RUN_RUN_H

#include "Options.h"

namespace msamp::run {

/// Trains or evaluates as `o` asks; 0, or the exit code (kRunError,
/// kUsageError) with its message printed.
int run(Options o);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_RUN_H
