//===- Train.h - The training loop of msamp-run -----------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Steps ctx.start+1 .. ctx.last: the batch, the step, its log line and
// progress line, the stops on non-finite or skipped steps, and the
// periodic checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_TRAIN_H
#define MSAMP_TOOLS_MSAMP_RUN_TRAIN_H

#include "RunContext.h"

#include <cmath>
#include <cstdint>

namespace msamp::run {

/// What the summary reports of a training run.
struct TrainResult {
  double elapsed = 0;
  float lastLoss = NAN;
  int64_t totalCommBytes = 0;
  bool graphNoted = false; // the CUDA graph note was printed
};

int train(RunContext &ctx, TrainResult &result);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_TRAIN_H
