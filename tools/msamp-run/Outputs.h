//===- Outputs.h - Checking msamp-run's output files early ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Files a run writes (--save, --export-weights) are checked before it
// trains: a parent that cannot be written, a directory in the way, a save
// that would overwrite a file the run reads.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_OUTPUTS_H
#define MSAMP_TOOLS_MSAMP_RUN_OUTPUTS_H

#include "RunContext.h"

namespace msamp::run {

/// Refuses outputs that cannot be written and removes the temporary files
/// a killed save left behind (every rank takes part).
int checkOutputs(RunContext &ctx);

// A checkpoint written over a file this run reads (the compiled step, its
// manifest, the data or the initial values) would destroy it; --resume's
// file may be replaced (the usual way to continue a run).
int checkNoOverwrite(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_OUTPUTS_H
