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
// buffers are managed memory (docs/RuntimeABI.md 13). The backend is
// selected before compiling, so a machine without a GPU fails at once.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"
#include "CompilerReport.h"
#include "FaultHooks.h"
#include "Group.h"
#include "MemoryReport.h"
#include "Options.h"
#include "RankCheck.h"
#include "StepLog.h"

#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/Runtime/msamp_session.h"
#include "MSAMP/Support/AccelerateRecipe.h"
#include "MSAMP/Support/Levels.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace msamp::run;

namespace {

/// Rank r's shard of the O3 checkpoint FILE.ext: FILE.rank<r>.ext
/// (docs/Interfaces.md 5), as libmsamp_session writes and reads it.
std::string shardPathOf(const std::string &path, int rank) {
  std::string shard(
      msamp_checkpoint_shard_path(path.c_str(), rank, nullptr, 0) + 1, '\0');
  msamp_checkpoint_shard_path(path.c_str(), rank, shard.data(),
                              static_cast<int64_t>(shard.size()));
  shard.pop_back();
  return shard;
}

/// Closes the session on every path out of main.
struct SessionCloser {
  void operator()(msamp_session *s) const { msamp_session_close(s); }
};
using SessionPtr = std::unique_ptr<msamp_session, SessionCloser>;

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Where `key=` starts in a pipeline option list ("a=1 key=2"), or npos.
size_t findPipelineOption(const std::string &options, const std::string &key) {
  const std::string needle = key + "=";
  for (size_t at = options.find(needle); at != std::string::npos;
       at = options.find(needle, at + 1))
    if (at == 0 || options[at - 1] == ' ' || options[at - 1] == '{')
      return at;
  return std::string::npos;
}

/// Names of the data arguments (role input/target), for messages.
std::vector<std::string> dataArguments(msamp_session *session) {
  std::vector<std::string> names;
  for (int64_t i = 0, n = msamp_session_num_inputs(session); i < n; ++i) {
    msamp_tensor_info info;
    if (msamp_session_input_info(session, i, &info) == MSAMP_OK &&
        (std::string(info.role) == "input" ||
         std::string(info.role) == "target"))
      names.push_back(info.name);
  }
  return names;
}

int run(Options o) {
  // ---- --recipe: an Accelerate config decides the level and options. ----
  std::string recipeText;
  if (o.recipe) {
    msamp_recipe::AccelerateRecipe recipe;
    std::string error, options = o.pipelineOptions.value_or("");
    if (!msamp_recipe::loadAccelerateRecipe(*o.recipe, recipe, error)) {
      std::fprintf(stderr, "%s\n", error.c_str()); // located: FILE:L:C
      return kUsageError;
    }
    if (!msamp_recipe::mergeRecipe(recipe, *o.recipe, o.optLevel, options,
                                   error))
      return fail(kUsageError, error);
    if (!options.empty())
      o.pipelineOptions = options;
    recipeText = msamp_recipe::describeRecipe(recipe, *o.recipe);
  }
  // ---- Refuse what this build cannot do, before any work. ----
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail(kUsageError,
                "unknown backend '" + o.backend + "' (expected cpu or cuda)");
  if (o.optLevel && !msamp_levels::lookupLevel(*o.optLevel))
    return fail(kUsageError, "--opt-level must be " +
                                 msamp_levels::levelNames() + ", got '" +
                                 *o.optLevel + "'");
  const bool zero = o.optLevel && *o.optLevel == "O3";
  if (zero && o.pipelineOptions &&
      findPipelineOption(*o.pipelineOptions, "rank") != std::string::npos)
    return fail(kUsageError,
                "--pipeline-options: msamp-run sets the O3 rank itself (each "
                "rank compiles its own program); remove 'rank='");
  if (o.data && o.synthetic)
    return fail(kUsageError, "--data and --synthetic exclude each other");
  if (o.init && o.resume)
    return fail(kUsageError,
                "--init and --resume exclude each other (a checkpoint holds "
                "every state tensor)");
  if (o.saveEvery && !o.save)
    return fail(kUsageError, "--save-every needs --save FILE");
  if (o.exportWeights && o.eval)
    return fail(kUsageError,
                "--export-weights writes trained weights and --eval trains "
                "nothing (export a checkpoint's weights with --resume FILE "
                "--steps 0)");
  if (o.cudaChip != "sm_90" && o.cudaChip != "sm_89")
    return fail(kUsageError,
                "--cuda-chip must be sm_90 or sm_89, got '" + o.cudaChip + "'");

  // ---- Join the launcher's group (rank 0 of 1 without one). ----
  if (msamp_rt_distributed_init() != MSAMP_RT_OK)
    return fail(kRunError,
                std::string("cannot join the data-parallel group: ") +
                    msamp_rt_get_last_error_message());
  group.joined = true;
  group.rank = msamp_rt_rank();
  group.size = msamp_rt_world_size();
  const bool lead = group.rank == 0; // prints, logs and writes checkpoints
  const bool speak = lead && !o.quiet;
  if (speak && !recipeText.empty())
    std::fputs(("msamp-run: " + recipeText).c_str(), stdout);

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

  // Outputs that cannot be written should fail the run before it trains,
  // not after. Only rank 0 writes them, but every rank takes part in the
  // agreement, whatever its options: ranks given different options are named
  // by the start-up settings check (a collective only some ranks enter was
  // a raw MPI_ERR_TRUNCATE).
  {
    int code = 0;
    std::string problem;
    auto checkOutput = [&](const char *flag, const std::string &file,
                           const char *what) {
      if (code || !lead)
        return;
      size_t slash = file.find_last_of('/');
      std::string parent = slash == std::string::npos ? "."
                           : slash == 0               ? "/"
                                                      : file.substr(0, slash);
      struct stat outStat;
      if (access(parent.c_str(), W_OK) != 0) {
        code = kRunError;
        problem = std::string(flag) + " " + file + ": cannot write to '" +
                  parent + "': " + std::strerror(errno);
      } else if (stat(file.c_str(), &outStat) == 0 &&
                 S_ISDIR(outStat.st_mode)) {
        code = kUsageError;
        problem = std::string(flag) + " " + file +
                  " is a directory; it names " + what;
      }
    };
    if (o.save)
      checkOutput("--save", *o.save, "the checkpoint file");
    if (o.exportWeights)
      checkOutput("--export-weights", *o.exportWeights, "the weights file");
    if (o.save && !code) {
      // A save killed between writing and renaming leaves FILE.tmp, and at
      // O3 each rank's shard FILE.rankR....tmp (SafeTensors.cpp's
      // writeFileAtomically); nothing else writes there. Rank 0 removes the
      // replicated file's, every rank its own shard's.
      std::vector<std::string> stale;
      if (lead)
        stale.push_back(*o.save + ".tmp");
      if (group.size > 1)
        stale.push_back(shardPathOf(*o.save, group.rank) + ".tmp");
      for (const std::string &path : stale) {
        struct stat staleStat;
        if (lstat(path.c_str(), &staleStat) == 0 &&
            S_ISREG(staleStat.st_mode) && ::unlink(path.c_str()) == 0 &&
            !o.quiet)
          std::printf("msamp-run: removed '%s', left by a save that did not "
                      "finish\n",
                      path.c_str());
      }
    }
    if (int rc = agree(code, problem))
      return rc;
  }

  // ---- The compiled step. ----
  struct stat st;
  if (int rc =
          agree(stat(o.model.c_str(), &st) != 0 ? kRunError : 0,
                "cannot read model '" + o.model + "': " + std::strerror(errno)))
    return rc;
  std::string dir;
  if (S_ISDIR(st.st_mode)) {
    if (o.recipe)
      return fail(kUsageError,
                  "--recipe applies when compiling a model file; '" + o.model +
                      "' is already compiled");
    if (o.pipelineOptions)
      return fail(kUsageError,
                  "--pipeline-options applies when compiling a model file; '" +
                      o.model + "' is already compiled");
    dir = o.model;
  } else {
    // Rank 0 compiles into the shared cache while the others wait in the
    // all-reduce of agree(); they then find the finished directory (the
    // cache renames a complete temporary directory into place, so even
    // ranks that compile something else concurrently never see half a
    // compilation). N ranks on a few cores would otherwise compile N times.
    std::string level = o.optLevel.value_or("O2");
    std::string options = o.pipelineOptions.value_or("");
    if (zero) {
      // O3: one program per rank (lib/Transforms/ZeROShard.cpp), each in
      // the cache under its own options.
      const std::string world = "world-size=" + std::to_string(group.size);
      size_t at = findPipelineOption(options, "world-size");
      if (at != std::string::npos &&
          options.compare(at, world.size(), world) != 0)
        return fail(kUsageError,
                    "--pipeline-options asks for " +
                        options.substr(at, options.find(' ', at) - at) +
                        ", but the launcher started " +
                        std::to_string(group.size) + " rank(s)");
      if (at == std::string::npos)
        options += (options.empty() ? "" : " ") + world;
      options += " rank=" + std::to_string(group.rank);
    }
    CompileResult compiled;
    std::string error;
    for (int phase = 0; phase < (group.multi() ? 2 : 1); ++phase) {
      const bool mine = (phase == 0) == lead;
      int code = mine && !compileModel(o.model, level, options,
                                       o.backend == "cuda" ? o.cudaChip : "",
                                       compiled, error)
                     ? kRunError
                     : 0;
      if (int rc = agree(code, error))
        return rc;
    }
    dir = compiled.dir;
    if (speak) {
      if (compiled.cached)
        std::printf("msamp-run: using cached compilation (%s)\n", dir.c_str());
      else
        std::printf("msamp-run: compiled %s at %s in %.2f s\n", o.model.c_str(),
                    level.c_str(), compiled.seconds);
    }
  }

  // A checkpoint written over a file this run reads (the compiled step, its
  // manifest, the data or the initial values) would destroy it; --resume's
  // file may be replaced (the usual way to continue a run).
  {
    std::string overwrite;
    struct stat saveStat;
    if (o.save && lead && stat(o.save->c_str(), &saveStat) == 0) {
      std::vector<std::string> inputs = {dir + "/train_step.so",
                                         dir + "/manifest.json",
                                         dir + "/train_step.mlir", o.model};
      if (o.data)
        inputs.push_back(*o.data);
      if (o.init)
        inputs.push_back(*o.init);
      for (const std::string &input : inputs) {
        struct stat inputStat;
        if (stat(input.c_str(), &inputStat) == 0 &&
            inputStat.st_dev == saveStat.st_dev &&
            inputStat.st_ino == saveStat.st_ino) {
          overwrite = "--save " + *o.save + " would overwrite '" + input +
                      "', which this run reads";
          break;
        }
      }
    }
    if (int rc = agree(overwrite.empty() ? 0 : kUsageError, overwrite))
      return rc;
  }

  // ---- Runtime configuration. ----
  // Always select the backend: $MSAMP_BACKEND must not send a CPU-compiled
  // step's kernels elsewhere.
  if (msamp_rt_set_backend(o.backend.c_str()) != MSAMP_RT_OK)
    return fail(kRunError, std::string("cannot select backend '") + o.backend +
                               "': " + msamp_rt_get_last_error_message());
  if (o.threads) {
    msamp_rt_set_num_threads(static_cast<int32_t>(*o.threads));
    if (msamp_rt_get_last_error() != MSAMP_RT_OK)
      return fail(kUsageError, msamp_rt_get_last_error_message());
  }

  msamp_session *raw = nullptr;
  const bool opened = msamp_session_open(dir.c_str(), &raw) == MSAMP_OK;
  SessionPtr session(raw);
  if (int rc = agree(opened ? 0 : kRunError,
                     opened ? "" : msamp_last_error_message()))
    return rc;
  const std::string level = msamp_session_level(session.get());
  if (S_ISDIR(st.st_mode) && o.optLevel && *o.optLevel != level)
    return fail(kUsageError, "'" + o.model + "' is compiled at level " + level +
                                 ", not " + *o.optLevel +
                                 " (recompile it, or pass the .mlir file)");
  // The threshold is an input of the compiled step; a step compiled before
  // msamp had clipping has none and is refused rather than run unclipped.
  if (o.clipGradNorm && msamp_session_set_max_grad_norm(
                            session.get(), *o.clipGradNorm) != MSAMP_OK)
    return fail(kRunError,
                "--clip-grad-norm: " + std::string(msamp_last_error_message()));

  // ---- Every rank runs the same program the same way. ----
  // mpirun's MPMD form (-np 1 A : -np 1 B), a stale cache or a typo in one
  // rank's command line would otherwise train N different models whose
  // gradients get averaged. Checked before any state is touched.
  const double baseLR = o.lr.value_or(msamp_session_default_lr(session.get()));
  if (group.multi()) {
    auto spellLevel = [](uint64_t v) { return "O" + std::to_string(v); };
    auto spellBool = [](uint64_t v) -> std::string { return v ? "on" : "off"; };
    auto spellData = [](uint64_t v) -> std::string {
      return v == 1 ? "--data" : v == 2 ? "--synthetic" : "no data";
    };
    // An O3 program differs per rank: compare the model it came from.
    std::string graph = msamp_session_graph_hash(session.get());
    if (level == "O3" && !S_ISDIR(st.st_mode)) {
      char modelHash[65];
      if (msamp_sha256_file(o.model.c_str(), modelHash) == MSAMP_OK)
        graph = modelHash;
    }
    std::vector<Setting> settings = {
        {"graph", hashPrefix(graph.c_str()), spellHash},
        {"level", static_cast<uint64_t>(level.size() == 2 ? level[1] - '0' : 9),
         spellLevel},
        {"world size",
         static_cast<uint64_t>(msamp_session_world_size(session.get())),
         spellInt},
        {"--steps", static_cast<uint64_t>(o.steps.value_or(-1)),
         [](uint64_t v) {
           return static_cast<int64_t>(v) < 0 ? std::string("(default)")
                                              : spellInt(v);
         }},
        {"--seed", o.seed, [](uint64_t v) { return std::to_string(v); }},
        {"lr", bitsOf(baseLR), spellDouble},
        {"--lr-schedule", o.lrSchedule == "cosine" ? 1u : 0u,
         [](uint64_t v) -> std::string { return v ? "cosine" : "constant"; }},
        {"--warmup", static_cast<uint64_t>(o.warmup), spellInt},
        {"--schedule-steps",
         static_cast<uint64_t>(o.scheduleSteps.value_or(-1)), spellInt},
        {"--clip-grad-norm", bitsOf(o.clipGradNorm.value_or(0.0)), spellDouble},
        {"--skip-nonfinite", o.skipNonFinite, spellBool},
        {"--eval", o.eval, spellBool},
        {"data source",
         o.data        ? 1u
         : o.synthetic ? 2u
                       : 0u,
         spellData},
        {"--synthetic-classes", static_cast<uint64_t>(o.syntheticClasses),
         spellInt},
        {"--resume", o.resume ? 1u : 0u, spellBool},
        // Saves and log lines end in collectives of their own.
        {"--save", o.save ? 1u : 0u, spellBool},
        {"--save-every", static_cast<uint64_t>(o.saveEvery), spellInt},
        {"--log-json", o.logJson ? 1u : 0u, spellBool},
    };
    if (int rc = checkSameOnAllRanks(settings, "at start-up"))
      return rc;
  }

  // ---- State: checkpoint, or initialization. ----
  // Every rank loads the same checkpoint or draws the same init (seeded by
  // tensor name, not by rank); the checksum check below proves it.
  if (o.resume) {
    const bool ok =
        msamp_session_load(session.get(), o.resume->c_str()) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
  } else {
    int64_t fromFile = 0;
    const bool ok = msamp_session_init(session.get(), o.seed,
                                       o.init ? o.init->c_str() : nullptr,
                                       &fromFile) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
    if (o.init && speak) {
      int64_t params = 0, buffers = 0;
      for (int64_t i = 0, n = msamp_session_num_state(session.get()); i < n;
           ++i) {
        msamp_tensor_info info;
        msamp_session_state_info(session.get(), i, &info);
        params += std::string(info.role) == "param";
        buffers += std::string(info.role) == "buffer";
      }
      std::printf("msamp-run: initial values of %lld of %lld params%s from "
                  "%s\n",
                  static_cast<long long>(fromFile),
                  static_cast<long long>(params + buffers),
                  buffers ? " and buffers" : "", o.init->c_str());
    }
  }

  // ---- Data. ----
  std::vector<std::string> dataArgs = dataArguments(session.get());
  int64_t numBatches = 0;
  if (o.data) {
    int64_t ignored = 0;
    const bool ok = msamp_session_open_data(session.get(), o.data->c_str(),
                                            &numBatches, &ignored) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
    if (ignored && speak)
      std::fprintf(stderr,
                   "msamp-run: note: %lld tensor(s) in %s name no input of "
                   "the model and are ignored\n",
                   static_cast<long long>(ignored), o.data->c_str());
  } else if (!o.synthetic && !dataArgs.empty() && o.steps.value_or(1) != 0) {
    // (--steps 0 reads no batch: --resume CK --steps 0 --export-weights W
    // converts a checkpoint.)
    std::string names;
    for (const std::string &n : dataArgs)
      names += (names.empty() ? "'" : ", '") + n + "'";
    return fail(kUsageError, "the model reads " + names +
                                 ": give --data FILE.safetensors or "
                                 "--synthetic");
  }

  // Identical replicas to start from, and the same data to slice.
  if (group.multi()) {
    char checksum[65];
    // At O3 each rank holds other shards: compare what all of them hold.
    msamp_session_state_checksum(session.get(),
                                 /*replicated_only=*/level == "O3", checksum);
    std::vector<Setting> settings = {
        {"start step",
         static_cast<uint64_t>(msamp_session_get_step(session.get())),
         spellInt},
        {"initial state sha256", hashPrefix(checksum), spellHash},
        {"data batches K", static_cast<uint64_t>(numBatches), spellInt},
    };
    if (int rc = checkSameOnAllRanks(settings, "after initialization"))
      return rc;
  }

  FILE *log = nullptr;
  if (o.logJson && lead) {
    log = std::fopen(o.logJson->c_str(), "w");
    if (!log)
      return fail(kRunError,
                  "cannot write '" + *o.logJson + "': " + std::strerror(errno));
  }
  struct LogCloser {
    FILE *f;
    ~LogCloser() {
      if (f)
        std::fclose(f);
    }
  } logCloser{log};
  // Every line reaches the file as it is written: a full disk is an error
  // at the step that hit it (not an empty log and exit 0), on every rank.
  auto logWritten = [&]() -> int {
    if (!o.logJson)
      return 0;
    const bool failed = log && (std::fflush(log) != 0 || std::ferror(log));
    return agree(failed ? kRunError : 0, "cannot write --log-json '" +
                                             *o.logJson +
                                             "': " + std::strerror(errno));
  };

  const int64_t start = msamp_session_get_step(session.get());
  const int64_t steps =
      o.steps.value_or(o.eval ? (o.data ? numBatches : 1) : 10);
  const int64_t last = start + steps;
  const msamp_lr_schedule schedule =
      o.lrSchedule == "cosine" ? MSAMP_LR_COSINE : MSAMP_LR_CONSTANT;
  const int64_t horizon = o.scheduleSteps.value_or(last);

  // Rank r of N at global step s takes sample slot (s-1)*N + r: slice
  // ((s-1)*N + r) mod K of --data, so N ranks with batch B see what one
  // rank with batch N*B sees when slices (s-1)*N .. (s-1)*N+N-1 form its
  // slice s-1; --synthetic draws with (seed, slot + 1), which for one rank
  // is the step number as before.
  auto bindBatch = [&](int64_t step) -> bool {
    const int64_t slot = (step - 1) * group.size + group.rank;
    if (o.data && numBatches > 0)
      return msamp_session_select_batch(session.get(), slot % numBatches) ==
             MSAMP_OK;
    if (o.synthetic)
      return msamp_session_synthetic_batch(session.get(), o.seed, slot + 1,
                                           o.syntheticClasses) == MSAMP_OK;
    return true;
  };

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

  // ---- Evaluation: the step without keeping its update. ----
  if (o.eval) {
    double sum = 0;
    int64_t finite = 0;
    for (int64_t s = start + 1; s <= last; ++s) {
      testFaultHook(s);
      const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
      float loss = 0;
      const int64_t bytesBefore = msamp_rt_collective_bytes();
      if (!bindBatch(s) ||
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
      if (int rc = logWritten())
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

  // Rank 0 writes every checkpoint (the replicas are identical); the others
  // learn whether it worked, so a failed save stops every rank alike.
  // Debugging aid: MSAMP_RUN_SAVE_EVERY_RANK=1 makes rank r > 0 also write
  // FILE.rank<r> (next to FILE), to diff replicas tensor by tensor.
  // At O3 every rank writes its shard (the session names the files).
  const bool sharded = level == "O3";
  const char *everyRank = std::getenv("MSAMP_RUN_SAVE_EVERY_RANK");
  const bool writer =
      lead || sharded || (everyRank && std::string(everyRank) == "1");
  auto save = [&]() -> int {
    std::string path = *o.save;
    if (!lead && !sharded)
      path += ".rank" + std::to_string(group.rank);
    const bool ok =
        !writer || msamp_session_save(session.get(), path.c_str()) == MSAMP_OK;
    return agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message());
  };

  // ---- Training. ----
  const uint32_t flags = o.skipNonFinite ? MSAMP_STEP_SKIP_NONFINITE : 0;
  const double runStart = now();
  double intervalStart = runStart;
  int64_t intervalSteps = 0;
  int64_t totalCommBytes = 0;
  float lastLoss = NAN;
  for (int64_t s = start + 1; s <= last; ++s) {
    testFaultHook(s);
    const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
    float loss = 0;
    if (!bindBatch(s))
      return fail(kRunError, msamp_last_error_message());
    const int64_t bytesBefore = msamp_rt_collective_bytes();
    msamp_status status =
        msamp_session_step(session.get(), static_cast<float>(lr), flags, &loss);
    const int64_t commBytes = msamp_rt_collective_bytes() - bytesBefore;
    totalCommBytes += commBytes;
    // The session made every rank agree on a non-finite step (it stops or
    // skips everywhere), so every rank takes this path together.
    if (status == MSAMP_ERROR_NONFINITE) {
      std::string message = msamp_last_error_message();
      loss = meanOverRanks(loss);
      StepMetrics metrics = readMetrics(session.get());
      metrics.nonFiniteStep = true;
      writeLogLine(log, s, loss, lr, false, metrics, commBytes);
      if (int rc = logWritten())
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
    loss = meanOverRanks(loss);
    StepMetrics metrics = readMetrics(session.get());
    // A committed step resets the count: a positive one means this step
    // was skipped.
    const int64_t inARow = msamp_session_num_consecutive_skipped(session.get());
    metrics.nonFiniteStep = inARow > 0;
    if (s == last)
      readPeaks(session.get(), dir, metrics);
    writeLogLine(log, s, loss, lr, false, metrics, commBytes);
    if (int rc = logWritten())
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
      if (int rc = save())
        return rc;
  }
  const double elapsed = now() - runStart;

  if (o.save)
    if (int rc = save())
      return rc;

  // --export-weights: the trained weights as a PyTorch state_dict
  // (libmsamp_session's one definition, the same as Python's
  // msamp.state_dict). Replicas are identical, so rank 0's session has them
  // all, except at O3 where each rank holds only the masters it owns: there
  // every rank saves a checkpoint (--save's, or a temporary one next to the
  // output) and rank 0 assembles it from the rank files, which the
  // all-reduce in agree() guarantees are complete.
  if (o.exportWeights) {
    const std::string &out = *o.exportWeights;
    if (!sharded) {
      const bool ok = !lead || msamp_session_export_weights(
                                   session.get(), out.c_str()) == MSAMP_OK;
      if (int rc =
              agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
        return rc;
    } else {
      const std::string checkpoint =
          o.save ? *o.save : out + ".gather.safetensors";
      if (!o.save) {
        const bool saved =
            msamp_session_save(session.get(), checkpoint.c_str()) == MSAMP_OK;
        if (int rc = agree(saved ? 0 : kRunError,
                           saved ? "" : msamp_last_error_message()))
          return rc;
      }
      bool ok = true;
      std::string message;
      if (lead) {
        ok = msamp_export_checkpoint_weights(checkpoint.c_str(), dir.c_str(),
                                             out.c_str()) == MSAMP_OK;
        if (!ok)
          message = msamp_last_error_message();
      }
      // The temporary checkpoint goes once every rank is past reading it,
      // whether the export worked or not.
      const int rc = agree(ok ? 0 : kRunError, message);
      if (!o.save) {
        std::remove(shardPathOf(checkpoint, group.rank).c_str());
        if (lead)
          std::remove(checkpoint.c_str());
      }
      if (rc)
        return rc;
    }
    if (speak)
      std::printf("msamp-run: exported the weights to %s\n", out.c_str());
  }

  // --check-replicas: the data-parallel invariant, byte for byte.
  if (o.checkReplicas) {
    char checksum[65];
    // The replicated state: params, master copies, optimizer moments, the
    // step and the params' scales. Activation and output-gradient scaling
    // state records each rank's own amaxes and differs by design.
    msamp_session_state_checksum(session.get(), /*replicated_only=*/1,
                                 checksum);
    if (int rc = checkSameOnAllRanks(
            {{"final state sha256", hashPrefix(checksum), spellHash}},
            "after training (replicas are not byte-identical)"))
      return rc;
    if (lead)
      std::printf(
          "msamp-run: replicas identical on %d rank%s (replicated state "
          "sha256 "
          "%.16s...)\n",
          group.size, group.size == 1 ? "" : "s", checksum);
  }

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
  return 0;
}

} // namespace

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
