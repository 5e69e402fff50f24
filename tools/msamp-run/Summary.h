//===- Summary.h - What msamp-run prints after training ---------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The closing lines of a training run: speed, final loss, all-reduce
// payload, skipped steps, the checkpoint, the memory table and, at O3,
// every rank's total.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_SUMMARY_H
#define MSAMP_TOOLS_MSAMP_RUN_SUMMARY_H

#include "RunContext.h"
#include "Train.h"

namespace msamp::run {

void printSummary(RunContext &ctx, const TrainResult &result);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_SUMMARY_H
