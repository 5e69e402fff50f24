//===- CompileStep.h - The compiled step msamp-run opens --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// MODEL is a directory msamp-compile wrote, or a file rank 0 compiles
// into the cache (CompileCache.h) while the other ranks wait; at O3 every
// rank compiles its own program.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_COMPILESTEP_H
#define MSAMP_TOOLS_MSAMP_RUN_COMPILESTEP_H

#include "RunContext.h"

namespace msamp::run {

/// Sets ctx.dir (and ctx.compiledDir) to the compiled step of ctx.o.model.
int compileStep(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_COMPILESTEP_H
