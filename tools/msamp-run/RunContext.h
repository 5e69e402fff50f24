//===- RunContext.h - What the phases of a run share ------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-run's run() is a sequence of phases (Run.cpp), each a function of
// its own file; they hand each other what they found in a RunContext.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_RUNCONTEXT_H
#define MSAMP_TOOLS_MSAMP_RUN_RUNCONTEXT_H

#include "Options.h"

#include "MSAMP/Runtime/msamp_session.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace msamp::run {

/// Closes the session on every path out of run().
struct SessionCloser {
  void operator()(msamp_session *s) const { msamp_session_close(s); }
};
using SessionPtr = std::unique_ptr<msamp_session, SessionCloser>;

/// The options and what the phases found so far.
struct RunContext {
  Options o;
  /// --recipe's mapping to a level and options, printed once joined.
  std::string recipeText;
  bool lead = false;  // rank 0: prints, logs and writes checkpoints
  bool speak = false; // lead && !--quiet
  /// MODEL is a directory msamp-compile wrote (not a file to compile).
  bool compiledDir = false;
  std::string dir; // the compiled step
  SessionPtr session;
  std::string level; // the session's
  double baseLR = 0;
  int64_t numBatches = 0; // K of --data
  FILE *log = nullptr;    // --log-json, on rank 0
  // The steps of this run: start+1 .. last, the lr schedule to horizon.
  int64_t start = 0, steps = 0, last = 0, horizon = 0;
  msamp_lr_schedule schedule = MSAMP_LR_CONSTANT;

  /// O3: each rank holds its own shard of the state, compiled into its own
  /// program (lib/Transforms/ZeROShard.cpp).
  bool sharded() const { return level == "O3"; }

  RunContext() = default;
  RunContext(const RunContext &) = delete;
  RunContext &operator=(const RunContext &) = delete;
  /// The log closes before the session, on every path out of run().
  ~RunContext() {
    if (log)
      std::fclose(log);
  }
};

/// Every line reaches the --log-json file as it is written: a full disk is
/// an error at the step that hit it (not an empty log and exit 0), on every
/// rank.
int logWritten(RunContext &ctx);

/// Binds step `step`'s batch to the session. Rank r of N at global step s
/// takes sample slot (s-1)*N + r: slice ((s-1)*N + r) mod K of --data, so N
/// ranks with batch B see what one rank with batch N*B sees when slices
/// (s-1)*N .. (s-1)*N+N-1 form its slice s-1; --synthetic draws with (seed,
/// slot + 1), which for one rank is the step number as before.
bool bindBatch(RunContext &ctx, int64_t step);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_RUNCONTEXT_H
