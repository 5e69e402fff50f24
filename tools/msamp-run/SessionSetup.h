//===- SessionSetup.h - Opening the session, its state and data -*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The runtime configuration, the session on the compiled step, its
// initial state (a checkpoint or an initialization) and its data.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_SESSIONSETUP_H
#define MSAMP_TOOLS_MSAMP_RUN_SESSIONSETUP_H

#include "RunContext.h"

#include <string>
#include <vector>

namespace msamp::run {

/// Configures the runtime and opens ctx.session on ctx.dir; sets ctx.level
/// and ctx.baseLR.
int openSession(RunContext &ctx);

/// --resume's checkpoint, or the seeded (--init) initialization.
int initState(RunContext &ctx);

/// Names of the data arguments (role input/target), for messages.
std::vector<std::string> dataArguments(msamp_session *session);

/// Opens --data (ctx.numBatches), or refuses a model that reads data when
/// none is given.
int openData(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_SESSIONSETUP_H
