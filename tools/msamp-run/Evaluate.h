//===- Evaluate.h - --eval: the loss without the update ---------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// An evaluation runs the step without keeping its update and prints the
// mean loss over the batches.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_EVALUATE_H
#define MSAMP_TOOLS_MSAMP_RUN_EVALUATE_H

#include "RunContext.h"

namespace msamp::run {

/// Runs steps ctx.start+1 .. ctx.last in evaluation mode.
int evaluate(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_EVALUATE_H
