//===- Evaluate.cpp - --eval: the loss without the update -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Evaluate.h"
#include "FaultHooks.h"
#include "Group.h"
#include "StepLog.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cmath>
#include <cstdio>

namespace msamp::run {

int evaluate(RunContext &ctx) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const bool lead = ctx.lead;
  const bool speak = ctx.speak;
  FILE *log = ctx.log;
  const int64_t start = ctx.start, steps = ctx.steps, last = ctx.last;
  const double baseLR = ctx.baseLR;
  const msamp_lr_schedule schedule = ctx.schedule;
  const int64_t horizon = ctx.horizon;
  double sum = 0;
  int64_t finite = 0;
  for (int64_t s = start + 1; s <= last; ++s) {
    testFaultHook(s);
    const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
    float loss = 0;
    const int64_t bytesBefore = msamp_rt_collective_bytes();
    if (!bindBatch(ctx, s) ||
        msamp_session_step(session.get(), static_cast<float>(lr),
                           MSAMP_STEP_EVAL, &loss) != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
    const int64_t commBytes = msamp_rt_collective_bytes() - bytesBefore;
    loss = meanOverRanks(loss);
    // Nothing is updated in an evaluation: only its loss can be
    // non-finite; the gradient norm is still reported.
    StepMetrics metrics = readMetrics(session.get());
    metrics.nonFiniteGrads = false;
    writeLogLine(log, s, loss, lr, /*eval=*/true, metrics, commBytes);
    if (int rc = logWritten(ctx))
      return rc;
    if (std::isfinite(loss)) {
      sum += loss;
      ++finite;
    }
    if (speak && ((s - start) % o.logEvery == 0 || s == last))
      std::printf("eval %lld/%lld  loss %s\n", static_cast<long long>(s),
                  static_cast<long long>(last), formatLoss(loss).c_str());
  }
  if (steps > 0 && lead) {
    if (finite == steps)
      std::printf("eval loss %.6f (mean of %lld batch%s)\n",
                  sum / static_cast<double>(steps),
                  static_cast<long long>(steps), steps == 1 ? "" : "es");
    else
      std::printf("eval loss nan (%lld of %lld batches non-finite)\n",
                  static_cast<long long>(steps - finite),
                  static_cast<long long>(steps));
  }
  return 0;
}

} // namespace msamp::run
