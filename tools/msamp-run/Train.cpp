//===- Train.cpp - The training loop of msamp-run -------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Train.h"
#include "Checkpoint.h"
#include "FaultHooks.h"
#include "Group.h"
#include "StepLog.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <chrono>
#include <cstdio>

namespace msamp::run {

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int train(RunContext &ctx, TrainResult &result) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const bool speak = ctx.speak;
  const std::string &dir = ctx.dir;
  FILE *log = ctx.log;
  const int64_t start = ctx.start, last = ctx.last;
  const double baseLR = ctx.baseLR;
  const msamp_lr_schedule schedule = ctx.schedule;
  const int64_t horizon = ctx.horizon;
  const uint32_t flags = o.skipNonFinite ? MSAMP_STEP_SKIP_NONFINITE : 0;
  const double runStart = now();
  double intervalStart = runStart;
  int64_t intervalSteps = 0;
  int64_t &totalCommBytes = result.totalCommBytes;
  float &lastLoss = result.lastLoss;
  for (int64_t s = start + 1; s <= last; ++s) {
    testFaultHook(s);
    const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
    float loss = 0;
    if (!bindBatch(ctx, s))
      return fail(kRunError, msamp_last_error_message());
    const int64_t bytesBefore = msamp_rt_collective_bytes();
    const double stepStart = now();
    msamp_status status =
        msamp_session_step(session.get(), static_cast<float>(lr), flags, &loss);
    // A GPU step returns after its one wait, so this is the step's time on
    // the device too (the GPU kit times steps from it).
    const double stepMs = (now() - stepStart) * 1000.0;
    const int64_t commBytes = msamp_rt_collective_bytes() - bytesBefore;
    totalCommBytes += commBytes;
    // The session made every rank agree on a non-finite step (it stops or
    // skips everywhere), so every rank takes this path together.
    if (status == MSAMP_ERROR_NONFINITE) {
      std::string message = msamp_last_error_message();
      loss = meanOverRanks(loss);
      StepMetrics metrics = readMetrics(session.get());
      metrics.nonFiniteStep = true;
      if (o.logStepTime)
        metrics.stepMs = stepMs;
      writeLogLine(log, s, loss, lr, false, metrics, commBytes);
      if (int rc = logWritten(ctx))
        return rc;
      return agree(kRunError, message + "; stopping without saving "
                                        "(--skip-nonfinite skips such steps)");
    }
    // A refused step is refused on every rank (the session agrees on a bad
    // index or a runtime error on any rank): each rank says why, the
    // ranks confirm to each other, and all stop without MPI_Abort.
    if (status != MSAMP_OK) {
      int rc = fail(kRunError, msamp_last_error_message());
      if (group.multi() && status == MSAMP_ERROR_RUNTIME) {
        float stopped = 1.0f;
        hostAllReduce(&stopped, 1, /*max=*/1);
        group.agreed = true;
      }
      return rc;
    }
    // Why a GPU step runs eagerly after all (StepGraph.h), said once.
    if (const char *note = msamp_session_cuda_graph_note(session.get());
        *note && !result.graphNoted) {
      std::fprintf(stderr, "msamp-run: note: CUDA graphs off: %s\n", note);
      result.graphNoted = true;
    }
    loss = meanOverRanks(loss);
    StepMetrics metrics = readMetrics(session.get());
    if (o.logStepTime)
      metrics.stepMs = stepMs;
    // A committed step resets the count: a positive one means this step
    // was skipped.
    const int64_t inARow = msamp_session_num_consecutive_skipped(session.get());
    metrics.nonFiniteStep = inARow > 0;
    if (s == last)
      readPeaks(session.get(), dir, metrics);
    writeLogLine(log, s, loss, lr, false, metrics, commBytes);
    if (int rc = logWritten(ctx))
      return rc;
    // A run that skips step after step makes no progress and would still
    // end "successfully"; every rank skipped the same steps (the session
    // agrees on them), so every rank stops here together. msamp has no
    // dynamic loss scaling, so every skip is a non-finite step.
    if (inARow > o.maxSkippedSteps)
      return agree(kRunError,
                   "step " + std::to_string(s) + ": " + std::to_string(inARow) +
                       " steps in a row were skipped, more than "
                       "--max-skipped-steps " +
                       std::to_string(o.maxSkippedSteps) + " (the last: " +
                       msamp_session_last_skip_reason(session.get()) +
                       "); stopping without saving");
    lastLoss = loss;
    ++intervalSteps;
    if (speak && ((s - start) % o.logEvery == 0 || s == last)) {
      double t = now();
      double rate = t > intervalStart ? intervalSteps / (t - intervalStart) : 0;
      // A skipped step (--skip-nonfinite) says why.
      const char *skipped =
          !metrics.nonFiniteStep   ? ""
          : !std::isfinite(loss)   ? "  (skipped: non-finite loss)"
          : metrics.nonFiniteGrads ? "  (skipped: non-finite gradients)"
                                   : "  (skipped: non-finite input or state)";
      std::printf("step %lld/%lld  loss %s  lr %.2e  %.1f steps/s%s\n",
                  static_cast<long long>(s), static_cast<long long>(last),
                  formatLoss(loss).c_str(), lr, rate, skipped);
      std::fflush(stdout);
      intervalStart = t;
      intervalSteps = 0;
    }
    if (o.saveEvery && s % o.saveEvery == 0 && s != last)
      if (int rc = saveCheckpoint(ctx))
        return rc;
  }
  result.elapsed = now() - runStart;
  return 0;
}

} // namespace msamp::run
