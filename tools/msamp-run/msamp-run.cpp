//===- msamp-run.cpp - Train or evaluate a model with msamp ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
//   msamp-run MODEL [--opt-level LEVEL | --recipe ACCELERATE.yaml]
//   [--steps N] [--data F | --synthetic]
//             [--init F] [--save F] [--resume F] [--log-json F] ...
//
// The user-facing runner of docs/Interfaces.md 5. MODEL is compiled by
// msamp-compile into a cache (CompileCache.h) or is a directory it wrote;
// the compiled step runs through libmsamp_session, which loads
// train_step.so against libmsamp_runtime. msamp-run itself links no MLIR or
// LLVM.
//
// --clip-grad-norm and the non-finite gradient check are compiled into the
// step (--msamp-grad-stats): msamp-run feeds the threshold as the step's
// "max_grad_norm" input and reads its "grad_norm" and "nonfinite" metrics.
//
// Data parallelism (docs/RuntimeABI.md 12): under `mpirun -np N msamp-run
// ...` every rank joins the group (msamp_rt_distributed_init), runs the same
// replicated step on its own slice of the data and the step all-reduces the
// gradients, so the replicas stay byte-identical. msamp-run adds what the
// step cannot see: rank 0 compiles while the others wait, a start-up check
// that every rank runs the same program, level, options and initial state,
// the per-rank data slice, the loss averaged over ranks in the log,
// checkpoints written by rank 0 only, and failures that stop every rank.
// A failure every rank takes part in (a refused checkpoint, a mismatch) is
// agreed on through an all-reduce and every rank exits with its code; any
// other failure after joining calls msamp_rt_abort so no rank waits forever
// in a collective (the runtime's watchdog covers ranks that die or hang).
//
// --opt-level O3: every rank compiles its own program (world size and rank
// are compile-time options, lib/Transforms/ZeROShard.cpp), writes its own
// checkpoint shard, and rank 0 also prints every rank's memory total.
//
// --backend cuda compiles the step with `msamp-compile --target cuda`
// (--cuda-chip, default sm_90): elementwise code runs as generated kernels,
// GEMMs and collectives in the runtime's CUDA backend, and the session's
// buffers are device memory (docs/RuntimeABI.md 13.2). The backend is
// selected before compiling, so a machine without a GPU fails at once.
//
// This file is main alone; the phases of a run are the library MSAMPRun in
// this folder, one file each (docs/Design.md "msamp-run: a thin main over a
// library").
//
//===----------------------------------------------------------------------===//

#include "Group.h"
#include "Options.h"
#include "Run.h"

#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/Runtime/msamp_session.h"

#include <cstdio>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <exception>
#include <string>

using namespace msamp::run;

/// A compiled step allocates and frees its temporaries (hundreds of buffers of
/// up to a few MiB) every step. With glibc's defaults the large ones are
/// mmap'ed and unmapped, or given back by trimming the heap top, so every
/// step page-faults its working set in again (30% of a small LM's step).
/// Keep them in the heap, and the heap, for reuse: a training process
/// returns to the same peak every step anyway.
static void keepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest on 64-bit hosts
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv) {
  keepFreedMemory();
  Options options;
  std::string error;
  int rc = 0;
  try {
    if (!parseOptions(argc, argv, options, error))
      return fail(kUsageError, error);
    if (options.help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    if (options.version) {
      std::printf("msamp-run (msamp %s, runtime ABI %d)\n", msamp_version(),
                  static_cast<int>(msamp_rt_abi_version()));
      return 0;
    }
    if (options.model.empty())
      return fail(kUsageError,
                  "no model given (usage: msamp-run MODEL [options]; see "
                  "--help)");
    rc = run(options);
  } catch (const std::exception &e) {
    rc = fail(kRunError, std::string("internal error: ") + e.what());
  } catch (...) {
    rc = fail(kRunError, "internal error");
  }
  // A failure only this rank saw would leave the others waiting in their
  // next collective: stop the whole job now rather than at the watchdog's
  // deadline.
  if (rc != 0 && group.multi() && !group.agreed)
    msamp_rt_abort(("msamp-run: rank " + std::to_string(group.rank) +
                    " failed (see above); stopping all " +
                    std::to_string(group.size) + " ranks")
                       .c_str(),
                   rc);
  if (group.joined)
    msamp_rt_distributed_finalize();
  return rc;
}
