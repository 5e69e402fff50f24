//===- Summary.cpp - What msamp-run prints after training -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Summary.h"
#include "Group.h"
#include "MemoryReport.h"
#include "StepLog.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdio>
#include <vector>

namespace msamp::run {

void printSummary(RunContext &ctx, const TrainResult &result) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const bool speak = ctx.speak;
  const std::string &dir = ctx.dir;
  const int64_t steps = ctx.steps;
  const bool sharded = ctx.sharded();
  const double elapsed = result.elapsed;
  const float lastLoss = result.lastLoss;
  const int64_t totalCommBytes = result.totalCommBytes;
  // O3: each rank's own state; rank 0 prints its table and every rank's
  // total (one collective every rank takes part in).
  std::vector<float> rankTotals;
  if (sharded) {
    rankTotals.assign(static_cast<size_t>(group.size), 0.0f);
    rankTotals[static_cast<size_t>(group.rank)] =
        static_cast<float>(memoryBytesPerParam(session.get(), dir));
    msamp_rt_allreduce_f32(rankTotals.data(),
                           static_cast<int64_t>(rankTotals.size()), 0);
  }

  if (speak) {
    std::printf("msamp-run: %lld steps in %.3f s (%.1f steps/s)",
                static_cast<long long>(steps), elapsed,
                elapsed > 0 ? static_cast<double>(steps) / elapsed : 0.0);
    if (steps > 0)
      std::printf(", final loss %s", formatLoss(lastLoss).c_str());
    std::printf("\n");
    if (group.multi() && steps > 0)
      std::printf("msamp-run: gradient all-reduce payload %lld bytes/step "
                  "per rank\n",
                  static_cast<long long>(totalCommBytes / steps));
    if (int64_t skipped = msamp_session_num_skipped(session.get()))
      std::printf("msamp-run: skipped %lld step(s) with a non-finite loss, "
                  "non-finite gradients, input or updated state\n",
                  static_cast<long long>(skipped));
    if (o.backend == "cuda")
      std::printf(
          "msamp-run: CUDA graph: %lld of %lld steps launched from "
          "it%s%s\n",
          static_cast<long long>(msamp_session_cuda_graph_steps(session.get())),
          static_cast<long long>(steps),
          *msamp_session_cuda_graph_note(session.get()) ? "; off: " : "",
          msamp_session_cuda_graph_note(session.get()));
    if (o.save)
      std::printf(
          "msamp-run: saved %s (step %lld)\n", o.save->c_str(),
          static_cast<long long>(msamp_session_get_step(session.get())));
    printMemoryReport(session.get(), dir);
    if (sharded) {
      std::printf("memory: total bytes/param per rank (O3, sharded state):");
      for (size_t r = 0; r < rankTotals.size(); ++r)
        std::printf(" rank %zu %.4f", r, static_cast<double>(rankTotals[r]));
      std::printf("\n");
    }
  }
}

} // namespace msamp::run
