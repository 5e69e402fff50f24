//===- Run.cpp - One run of msamp-run -------------------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "CheckOptions.h"
#include "Checkpoint.h"
#include "CompileStep.h"
#include "Evaluate.h"
#include "Group.h"
#include "Outputs.h"
#include "RankCheck.h"
#include "RunContext.h"
#include "SessionSetup.h"
#include "Summary.h"
#include "Train.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace msamp::run {

namespace {

/// Joins the launcher's group (rank 0 of 1 without one) and, for --backend
/// cuda, selects the device before anything is compiled for it.
int joinGroup(RunContext &ctx) {
  const Options &o = ctx.o;
  if (msamp_rt_distributed_init() != MSAMP_RT_OK)
    return fail(kRunError,
                std::string("cannot join the data-parallel group: ") +
                    msamp_rt_get_last_error_message());
  group.joined = true;
  group.rank = msamp_rt_rank();
  group.size = msamp_rt_world_size();
  ctx.lead = group.rank == 0;
  ctx.speak = ctx.lead && !o.quiet;
  if (ctx.speak && !ctx.recipeText.empty())
    std::fputs(("msamp-run: " + ctx.recipeText).c_str(), stdout);

  // A CUDA run needs its device before anything is compiled for it.
  if (o.backend == "cuda") {
    const bool selected = msamp_rt_set_backend("cuda") == MSAMP_RT_OK;
    if (int rc =
            agree(selected ? 0 : kRunError,
                  selected ? ""
                           : std::string("cannot select backend 'cuda': ") +
                                 msamp_rt_get_last_error_message()))
      return rc;
  }
  return 0;
}

/// Opens --log-json on rank 0.
int openLog(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool lead = ctx.lead;
  if (o.logJson && lead) {
    ctx.log = std::fopen(o.logJson->c_str(), "w");
    if (!ctx.log)
      return fail(kRunError,
                  "cannot write '" + *o.logJson + "': " + std::strerror(errno));
  }
  return 0;
}

/// The steps to run (--steps, or for --eval one pass over the data) and the
/// lr schedule.
void planSteps(RunContext &ctx) {
  const Options &o = ctx.o;
  ctx.start = msamp_session_get_step(ctx.session.get());
  ctx.steps = o.steps.value_or(o.eval ? (o.data ? ctx.numBatches : 1) : 10);
  ctx.last = ctx.start + ctx.steps;
  ctx.schedule = o.lrSchedule == "cosine" ? MSAMP_LR_COSINE : MSAMP_LR_CONSTANT;
  ctx.horizon = o.scheduleSteps.value_or(ctx.last);
}

/// The line that says what the run does.
void printBanner(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool speak = ctx.speak;
  const std::string &level = ctx.level;
  const int64_t start = ctx.start, last = ctx.last;
  const double baseLR = ctx.baseLR;
  if (speak) {
    std::printf("msamp-run: level %s, %s steps %lld..%lld, lr %.2e (%s%s)\n",
                level.c_str(), o.eval ? "evaluating" : "training",
                static_cast<long long>(start + 1), static_cast<long long>(last),
                baseLR, o.lrSchedule.c_str(),
                o.warmup ? (", warm-up " + std::to_string(o.warmup)).c_str()
                         : "");
    if (group.multi())
      std::printf("msamp-run: data parallel on %d ranks (rank r at step s "
                  "uses batch ((s-1)*%d + r) mod K; losses are the mean over "
                  "ranks)\n",
                  group.size, group.size);
  }
}

} // namespace

int logWritten(RunContext &ctx) {
  const Options &o = ctx.o;
  FILE *log = ctx.log;
  if (!o.logJson)
    return 0;
  const bool failed = log && (std::fflush(log) != 0 || std::ferror(log));
  return agree(failed ? kRunError : 0, "cannot write --log-json '" +
                                           *o.logJson +
                                           "': " + std::strerror(errno));
}

bool bindBatch(RunContext &ctx, int64_t step) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const int64_t numBatches = ctx.numBatches;
  const int64_t slot = (step - 1) * group.size + group.rank;
  if (o.data && numBatches > 0)
    return msamp_session_select_batch(session.get(), slot % numBatches) ==
           MSAMP_OK;
  if (o.synthetic)
    return msamp_session_synthetic_batch(session.get(), o.seed, slot + 1,
                                         o.syntheticClasses) == MSAMP_OK;
  return true;
}

int run(Options o) {
  RunContext ctx;
  ctx.o = std::move(o);
  if (int rc = applyRecipe(ctx.o, ctx.recipeText))
    return rc;
  if (int rc = checkOptions(ctx.o))
    return rc;
  if (int rc = joinGroup(ctx))
    return rc;
  if (int rc = checkOutputs(ctx))
    return rc;
  if (int rc = compileStep(ctx))
    return rc;
  if (int rc = checkNoOverwrite(ctx))
    return rc;
  if (int rc = openSession(ctx))
    return rc;
  if (int rc = checkStartupSettings(ctx))
    return rc;
  if (int rc = initState(ctx))
    return rc;
  if (int rc = openData(ctx))
    return rc;
  if (int rc = checkInitialState(ctx))
    return rc;
  if (int rc = openLog(ctx))
    return rc;
  planSteps(ctx);
  printBanner(ctx);
  if (ctx.o.eval)
    return evaluate(ctx);

  TrainResult result;
  if (int rc = train(ctx, result))
    return rc;
  if (ctx.o.save)
    if (int rc = saveCheckpoint(ctx))
      return rc;
  if (ctx.o.exportWeights)
    if (int rc = exportWeights(ctx))
      return rc;
  if (ctx.o.checkReplicas)
    if (int rc = checkReplicas(ctx))
      return rc;
  printSummary(ctx, result);
  return 0;
}

} // namespace msamp::run
