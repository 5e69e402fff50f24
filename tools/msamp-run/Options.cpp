//===- Options.cpp - Command line of msamp-run ----------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace msamp::run {

const char *usage() {
  return R"(usage: msamp-run MODEL [options]

MODEL is a training graph (.mlir, compiled with msamp-compile into a cache)
or a directory written by msamp-compile.

  --opt-level O0|O1|O2|O3    optimization level to compile at (default O2;
                             O3: each rank compiles its own program); also
                             the reference rows amp-bf16, amp-fp16, te
  --pipeline-options "..."   options of the --msamp-oN pipeline
  --recipe FILE.yaml         an Accelerate config: mixed_precision and
                             fp8_config (backend MSAMP or TE) set the level
                             and its options; the mapping is printed
  --steps N                  steps to run (default 10; with --eval: one pass
                             over the data)
  --seed S                   seed of the initialization, the synthetic data
                             and the dropout masks (rng.seed; a resumed
                             run keeps its checkpoint's) (0)
  --lr LR                    learning rate (default: the graph's optimizer lr)
  --lr-schedule constant|cosine
  --warmup N                 linear warm-up steps (default 0)
  --schedule-steps N         last step of the cosine schedule (default: the
                             last step of this run)
  --data FILE.safetensors    inputs and targets, each with a leading batch
                             dimension K; step s uses batch (s-1) mod K
                             (rank r of N: batch ((s-1)*N + r) mod K)
  --synthetic                seeded random inputs instead of --data (drawn
                             per seed, rank and step)
  --synthetic-classes C      integer inputs and targets are uniform in
                             [0, C) (default 2; an input's "num_classes" in
                             the manifest wins)
  --init FILE.safetensors    f32 initial values of params, by name (and
                             buffers in their dtype; msamp.export's file)
  --save FILE.safetensors    checkpoint at the end (and every --save-every)
  --save-every N             also checkpoint every N steps
  --export-weights FILE.safetensors
                             the trained weights at the end as a PyTorch
                             state_dict (f32, original names; O3: gathered
                             from every rank's checkpoint shard)
  --resume FILE.safetensors  continue from a checkpoint
  --eval                     compute the loss without updating the state,
                             with dropout off (as PyTorch's model.eval())
  --clip-grad-norm X         clip the global norm of the (dequantized)
                             gradients to X > 0, as PyTorch's
                             clip_grad_norm_; the norm is logged as
                             "grad_norm" in --log-json
  --skip-nonfinite           skip (undo) steps whose input data, loss,
                             gradients or updated state are not finite (FP8
                             overflow is detected from the recorded amax)
  --max-skipped-steps N      with --skip-nonfinite: stop with an error when
                             more than N steps in a row are skipped
                             (default 10)
  --backend cpu|cuda         where the step runs; cuda compiles it with
                             msamp-compile --target cuda (generated kernels,
                             runtime GEMMs) and needs an sm_89+ GPU
  --cuda-chip sm_90|sm_89    the PTX target of --backend cuda (default sm_90)
  --cuda-graphs on|off       run a --backend cuda step as one CUDA graph from
                             its second step on (default on, or
                             $MSAMP_CUDA_GRAPHS: 1/on, 0/off); the CPU
                             backend ignores it
  --threads N                worker threads of the CPU kernels (0: default)
  --log-json FILE            one JSON object per step
  --log-step-time            add "step_ms" to each --log-json line: the
                             wall time of the step (on a GPU, until its
                             work finished); off by default, so that logs
                             of identical runs stay identical
  --log-every N              progress line every N steps (default 10)
  --quiet                    no progress lines or reports
  --check-replicas           under mpirun: after the run, check that every
                             rank's state is byte-identical (SHA-256)
  --version                  print the version and exit
)";
}

namespace {

bool parseInt(const std::string &text, int64_t min, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min)
    return false;
  out = v;
  return true;
}

bool parseUnsigned(const std::string &text, uint64_t &out) {
  if (text.empty() || text[0] == '-')
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  out = v;
  return true;
}

bool parsePositiveDouble(const std::string &text, double &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0.0)
    return false;
  out = v;
  return true;
}

} // namespace

bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
  using Handler = std::function<bool(const std::string &)>;
  struct Flag {
    const char *name;
    bool takesValue;
    Handler handle;
    const char *expects; // what a value must be, for the error message
  };
  auto intFlag = [](int64_t &field, int64_t min) {
    return
        [&field, min](const std::string &v) { return parseInt(v, min, field); };
  };
  auto optIntFlag = [](std::optional<int64_t> &field, int64_t min) {
    return [&field, min](const std::string &v) {
      int64_t x;
      if (!parseInt(v, min, x))
        return false;
      field = x;
      return true;
    };
  };
  auto stringFlag = [](std::optional<std::string> &field) {
    return [&field](const std::string &v) {
      field = v;
      return true;
    };
  };
  auto pathFlag = [](std::optional<std::string> &field) {
    return [&field](const std::string &v) {
      if (v.empty())
        return false;
      field = v;
      return true;
    };
  };
  auto boolFlag = [](bool &field) {
    return [&field](const std::string &) {
      field = true;
      return true;
    };
  };
  const std::vector<Flag> flags = {
      {"opt-level", true,
       [&](const std::string &v) {
         o.optLevel = v;
         return true;
       },
       ""},
      {"pipeline-options", true, stringFlag(o.pipelineOptions), ""},
      {"recipe", true, pathFlag(o.recipe), "a file name"},
      {"steps", true, optIntFlag(o.steps, 0), "a non-negative integer"},
      {"seed", true,
       [&](const std::string &v) { return parseUnsigned(v, o.seed); },
       "a non-negative integer"},
      {"lr", true,
       [&](const std::string &v) {
         double x;
         if (!parsePositiveDouble(v, x))
           return false;
         o.lr = x;
         return true;
       },
       "a positive number"},
      {"lr-schedule", true,
       [&](const std::string &v) {
         o.lrSchedule = v;
         return v == "constant" || v == "cosine";
       },
       "constant or cosine"},
      {"warmup", true, intFlag(o.warmup, 0), "a non-negative integer"},
      {"schedule-steps", true, optIntFlag(o.scheduleSteps, 1),
       "a positive integer"},
      {"clip-grad-norm", true,
       [&](const std::string &v) {
         double x;
         if (!parsePositiveDouble(v, x))
           return false;
         o.clipGradNorm = x;
         return true;
       },
       "a positive number"},
      {"data", true, pathFlag(o.data), "a file name"},
      {"synthetic", false, boolFlag(o.synthetic), ""},
      {"synthetic-classes", true, intFlag(o.syntheticClasses, 1),
       "a positive integer"},
      {"init", true, pathFlag(o.init), "a file name"},
      {"save", true, pathFlag(o.save), "a file name"},
      {"save-every", true, intFlag(o.saveEvery, 1), "a positive integer"},
      {"export-weights", true, pathFlag(o.exportWeights), "a file name"},
      {"resume", true, pathFlag(o.resume), "a file name"},
      {"eval", false, boolFlag(o.eval), ""},
      {"skip-nonfinite", false, boolFlag(o.skipNonFinite), ""},
      {"max-skipped-steps", true, intFlag(o.maxSkippedSteps, 0),
       "a non-negative integer"},
      {"backend", true,
       [&](const std::string &v) {
         o.backend = v;
         return true;
       },
       ""},
      {"cuda-chip", true,
       [&](const std::string &v) {
         o.cudaChip = v;
         return true;
       },
       ""},
      {"cuda-graphs", true,
       [&](const std::string &v) {
         if (v != "on" && v != "off")
           return false;
         o.cudaGraphs = v == "on";
         return true;
       },
       "on or off"},
      {"threads", true, optIntFlag(o.threads, 0), "a non-negative integer"},
      {"log-json", true, pathFlag(o.logJson), "a file name"},
      {"log-step-time", false, boolFlag(o.logStepTime), ""},
      {"log-every", true, intFlag(o.logEvery, 1), "a positive integer"},
      {"quiet", false, boolFlag(o.quiet), ""},
      {"check-replicas", false, boolFlag(o.checkReplicas), ""},
      {"version", false, boolFlag(o.version), ""},
      {"help", false, boolFlag(o.help), ""},
  };

  bool positionalOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (positionalOnly || arg.size() < 2 || arg[0] != '-' || arg == "-") {
      if (!o.model.empty()) {
        error = "unexpected argument '" + arg + "' (the model is '" + o.model +
                "')";
        return false;
      }
      o.model = arg;
      continue;
    }
    if (arg == "--") {
      positionalOnly = true;
      continue;
    }
    if (arg == "-h") {
      o.help = true;
      continue;
    }
    // Accept -flag as well as --flag, as LLVM tools do.
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    const Flag *flag = nullptr;
    for (const Flag &f : flags)
      if (body == f.name)
        flag = &f;
    if (!flag) {
      error = "unknown option '" + arg + "' (see --help)";
      return false;
    }
    if (!flag->takesValue) {
      if (value) {
        error = "option '--" + body + "' takes no value";
        return false;
      }
      flag->handle("");
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) {
        error = "option '--" + body + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (!flag->handle(*value)) {
      error = "invalid value '" + *value + "' for --" + body;
      if (*flag->expects)
        error += ": expected " + std::string(flag->expects);
      return false;
    }
  }
  return true;
}

} // namespace msamp::run
