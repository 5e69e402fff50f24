//===- msamp-run.cpp - Train or evaluate a model with msamp ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
//   msamp-run MODEL [--opt-level O0|O1|O2] [--steps N] [--data F | --synthetic]
//             [--init F] [--save F] [--resume F] [--log-json F] ...
//
// The user-facing runner of INTERFACES.md 5. MODEL is compiled by
// msamp-compile into a cache (CompileCache.h) or is a directory it wrote;
// the compiled step runs through libmsamp_session, which loads
// train_step.so against libmsamp_runtime. msamp-run itself links no MLIR or
// LLVM.
//
// --clip-grad-norm and the non-finite gradient check are compiled into the
// step (--msamp-grad-stats): msamp-run feeds the threshold as the step's
// "max_grad_norm" input and reads its "grad_norm" and "nonfinite" metrics.
//
// Not supported yet, each refused with a message that says why:
// --opt-level O3 and multi-rank runs (need the distributed runtime),
// --backend cuda (the CUDA backend is not built for msamp-run's CPU steps).
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"
#include "Options.h"

#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/Runtime/msamp_session.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace msamp::run;

namespace {

/// Exit codes: 1 for a failed run, 2 for a bad command line.
constexpr int kRunError = 1;
constexpr int kUsageError = 2;

int fail(int code, const std::string &message) {
  std::fprintf(stderr, "msamp-run: error: %s\n", message.c_str());
  return code;
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

/// "0.8312" for ordinary losses, scientific where four decimals would hide
/// the value.
std::string formatLoss(float loss) {
  char buffer[64];
  double a = std::fabs(loss);
  if (!std::isfinite(loss))
    std::snprintf(buffer, sizeof(buffer), "%s",
                  std::isnan(loss) ? "nan" : (loss > 0 ? "inf" : "-inf"));
  else if (a != 0.0 && (a < 1e-2 || a >= 1e5))
    std::snprintf(buffer, sizeof(buffer), "%.4e", static_cast<double>(loss));
  else
    std::snprintf(buffer, sizeof(buffer), "%.4f", static_cast<double>(loss));
  return buffer;
}

/// What a step reported besides its loss (steps compiled without the
/// gradient statistics report nothing).
struct StepMetrics {
  std::optional<float> gradNorm; // before clipping
  bool nonFiniteGrads = false;
};

StepMetrics readMetrics(msamp_session *session) {
  StepMetrics m;
  float value = 0;
  if (msamp_session_metric(session, "grad_norm", &value) == MSAMP_OK)
    m.gradNorm = value;
  if (msamp_session_metric(session, "nonfinite", &value) == MSAMP_OK)
    m.nonFiniteGrads = value != 0.0f;
  return m;
}

/// One line of --log-json: INTERFACES.md 5's keys, then "grad_norm" when the
/// step reports it (null when not finite). "nonfinite" is true when the loss
/// or the gradients were not finite (the update is not applied, or the run
/// stops); only a non-finite loss is null. Numbers are printed with 9
/// significant digits, enough to round-trip an f32 exactly.
void writeLogLine(FILE *log, int64_t step, float loss, double lr, bool eval,
                  const StepMetrics &metrics) {
  if (!log)
    return;
  const bool nonFinite = !std::isfinite(loss) || metrics.nonFiniteGrads;
  std::fprintf(log, "{\"step\": %lld, ", static_cast<long long>(step));
  if (std::isfinite(loss))
    std::fprintf(log, "\"loss\": %.9g, ", static_cast<double>(loss));
  else
    std::fprintf(log, "\"loss\": null, ");
  std::fprintf(log, "\"lr\": %.9g, \"nonfinite\": %s", lr,
               nonFinite ? "true" : "false");
  if (metrics.gradNorm) {
    if (std::isfinite(*metrics.gradNorm))
      std::fprintf(log, ", \"grad_norm\": %.9g",
                   static_cast<double>(*metrics.gradNorm));
    else
      std::fprintf(log, ", \"grad_norm\": null");
  }
  std::fprintf(log, eval ? ", \"eval\": true}\n" : "}\n");
  // A run that dies later keeps every line written so far.
  std::fflush(log);
}

/// The weight_grads figure of the compiler's memory report, if any:
/// gradients live inside the compiled step, so the session cannot measure
/// them.
bool compilerGradBytes(const std::string &dir, std::string &dtype,
                       int64_t &bytes) {
  std::string path = dir + "/memory_report.json";
  std::string tmp;
  if (access(path.c_str(), R_OK) != 0) {
    // A directory from msamp-compile has no report: ask msamp-opt now.
    std::string opt = findTool("msamp-opt", "MSAMP_OPT");
    if (opt.empty())
      return false;
    const char *tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") +
                          "/msamp-memory-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0)
      return false;
    close(fd);
    tmp = path = name.data();
    std::string ignored;
    if (runTool({opt, "--msamp-memory-report=format=json",
                 dir + "/train_step.mlir", "-o", "/dev/null"},
                path, true, ignored) != 0) {
      unlink(tmp.c_str());
      return false;
    }
  }
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  if (!tmp.empty())
    unlink(tmp.c_str());
  try {
    auto report = nlohmann::json::parse(text.str());
    const auto &grads = report.at("categories").at("weight_grads");
    dtype = grads.at("dtype").get<std::string>();
    bytes = grads.at("bytes").get<int64_t>();
    return true;
  } catch (...) {
    return false;
  }
}

void printMemoryReport(msamp_session *session, const std::string &dir) {
  msamp_memory_category categories[MSAMP_MEMORY_NUM_CATEGORIES];
  int64_t params = 0;
  if (msamp_session_memory_report(session, categories, &params) != MSAMP_OK)
    return;
  std::string gradDtype;
  int64_t gradBytes = 0;
  bool haveGrads = compilerGradBytes(dir, gradDtype, gradBytes);
  std::printf("memory: state allocated by the session, level %s, %lld "
              "params%s\n",
              msamp_session_level(session), static_cast<long long>(params),
              haveGrads ? " (weight_grads: the compiler's figure, they live "
                          "inside the step)"
                        : "");
  std::printf("%-15s %-12s %10s %13s\n", "category", "dtype", "bytes",
              "bytes/param");
  int64_t total = 0;
  const double perParam = params > 0 ? 1.0 / static_cast<double>(params) : 0;
  for (const msamp_memory_category &c : categories) {
    std::string dtype = c.dtype;
    int64_t bytes = c.bytes;
    if (std::string(c.name) == "weight_grads") {
      if (!haveGrads) {
        std::printf("%-15s %-12s %10s %13s\n", c.name, "-", "-", "-");
        continue;
      }
      dtype = gradDtype;
      bytes = gradBytes;
    }
    total += bytes;
    std::printf("%-15s %-12s %10lld %13.4f\n", c.name, dtype.c_str(),
                static_cast<long long>(bytes),
                static_cast<double>(bytes) * perParam);
  }
  std::printf("%-15s %-12s %10lld %13.4f\n", "total", "",
              static_cast<long long>(total),
              static_cast<double>(total) * perParam);
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

int run(const Options &o) {
  // ---- Refuse what this build cannot do, before any work. ----
  if (o.backend == "cuda")
    return fail(kUsageError,
                "--backend cuda: the CUDA backend is not available in this "
                "build (msamp-run executes steps compiled for the CPU); use "
                "--backend cpu");
  if (o.backend != "cpu")
    return fail(kUsageError,
                "unknown backend '" + o.backend + "' (expected cpu or cuda)");
  if (o.optLevel && *o.optLevel == "O3")
    return fail(kUsageError,
                "--opt-level O3 needs the distributed runtime (ZeRO-sharded "
                "state across ranks), which msamp-run does not support yet; "
                "use O0, O1 or O2");
  if (o.optLevel && *o.optLevel != "O0" && *o.optLevel != "O1" &&
      *o.optLevel != "O2")
    return fail(kUsageError,
                "--opt-level must be O0, O1 or O2, got '" + *o.optLevel + "'");
  if (o.data && o.synthetic)
    return fail(kUsageError, "--data and --synthetic exclude each other");
  if (o.init && o.resume)
    return fail(kUsageError,
                "--init and --resume exclude each other (a checkpoint holds "
                "every state tensor)");
  if (o.saveEvery && !o.save)
    return fail(kUsageError, "--save-every needs --save FILE");

  // A checkpoint that cannot be written should fail the run before it
  // trains, not after.
  if (o.save) {
    size_t slash = o.save->find_last_of('/');
    std::string parent = slash == std::string::npos ? "."
                         : slash == 0               ? "/"
                                                    : o.save->substr(0, slash);
    if (access(parent.c_str(), W_OK) != 0)
      return fail(kRunError, "--save " + *o.save + ": cannot write to '" +
                                 parent + "': " + std::strerror(errno));
  }

  // ---- The compiled step. ----
  struct stat st;
  if (stat(o.model.c_str(), &st) != 0)
    return fail(kRunError,
                "cannot read model '" + o.model + "': " + std::strerror(errno));
  std::string dir;
  if (S_ISDIR(st.st_mode)) {
    if (o.pipelineOptions)
      return fail(kUsageError,
                  "--pipeline-options applies when compiling a model file; '" +
                      o.model + "' is already compiled");
    dir = o.model;
  } else {
    std::string level = o.optLevel.value_or("O2");
    CompileResult compiled;
    std::string error;
    if (!compileModel(o.model, level, o.pipelineOptions.value_or(""), compiled,
                      error))
      return fail(kRunError, error);
    dir = compiled.dir;
    if (!o.quiet) {
      if (compiled.cached)
        std::printf("msamp-run: using cached compilation (%s)\n", dir.c_str());
      else
        std::printf("msamp-run: compiled %s at %s in %.2f s\n", o.model.c_str(),
                    level.c_str(), compiled.seconds);
    }
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
  if (msamp_session_open(dir.c_str(), &raw) != MSAMP_OK)
    return fail(kRunError, msamp_last_error_message());
  SessionPtr session(raw);
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

  // ---- State: checkpoint, or initialization. ----
  if (o.resume) {
    if (msamp_session_load(session.get(), o.resume->c_str()) != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
  } else {
    int64_t fromFile = 0;
    if (msamp_session_init(session.get(), o.seed,
                           o.init ? o.init->c_str() : nullptr,
                           &fromFile) != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
    if (o.init && !o.quiet) {
      int64_t params = 0;
      for (int64_t i = 0, n = msamp_session_num_state(session.get()); i < n;
           ++i) {
        msamp_tensor_info info;
        msamp_session_state_info(session.get(), i, &info);
        params += std::string(info.role) == "param";
      }
      std::printf("msamp-run: initial values of %lld of %lld params from %s\n",
                  static_cast<long long>(fromFile),
                  static_cast<long long>(params), o.init->c_str());
    }
  }

  // ---- Data. ----
  std::vector<std::string> dataArgs = dataArguments(session.get());
  int64_t numBatches = 0;
  if (o.data) {
    int64_t ignored = 0;
    if (msamp_session_open_data(session.get(), o.data->c_str(), &numBatches,
                                &ignored) != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
    if (ignored && !o.quiet)
      std::fprintf(stderr,
                   "msamp-run: note: %lld tensor(s) in %s name no input of "
                   "the model and are ignored\n",
                   static_cast<long long>(ignored), o.data->c_str());
  } else if (!o.synthetic && !dataArgs.empty()) {
    std::string names;
    for (const std::string &n : dataArgs)
      names += (names.empty() ? "'" : ", '") + n + "'";
    return fail(kUsageError, "the model reads " + names +
                                 ": give --data FILE.safetensors or "
                                 "--synthetic");
  }

  FILE *log = nullptr;
  if (o.logJson) {
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

  const int64_t start = msamp_session_get_step(session.get());
  const int64_t steps =
      o.steps.value_or(o.eval ? (o.data ? numBatches : 1) : 10);
  const int64_t last = start + steps;
  const double baseLR = o.lr.value_or(msamp_session_default_lr(session.get()));
  const msamp_lr_schedule schedule =
      o.lrSchedule == "cosine" ? MSAMP_LR_COSINE : MSAMP_LR_CONSTANT;
  const int64_t horizon = o.scheduleSteps.value_or(last);

  auto bindBatch = [&](int64_t step) -> bool {
    if (o.data && numBatches > 0)
      return msamp_session_select_batch(session.get(),
                                        (step - 1) % numBatches) == MSAMP_OK;
    if (o.synthetic)
      return msamp_session_synthetic_batch(session.get(), o.seed, step,
                                           o.syntheticClasses) == MSAMP_OK;
    return true;
  };

  if (!o.quiet)
    std::printf("msamp-run: level %s, %s steps %lld..%lld, lr %.2e (%s%s)\n",
                level.c_str(), o.eval ? "evaluating" : "training",
                static_cast<long long>(start + 1), static_cast<long long>(last),
                baseLR, o.lrSchedule.c_str(),
                o.warmup ? (", warm-up " + std::to_string(o.warmup)).c_str()
                         : "");

  // ---- Evaluation: the step without keeping its update. ----
  if (o.eval) {
    double sum = 0;
    int64_t finite = 0;
    for (int64_t s = start + 1; s <= last; ++s) {
      const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
      float loss = 0;
      if (!bindBatch(s) ||
          msamp_session_step(session.get(), static_cast<float>(lr),
                             MSAMP_STEP_EVAL, &loss) != MSAMP_OK)
        return fail(kRunError, msamp_last_error_message());
      // Nothing is updated in an evaluation: only its loss can be
      // non-finite; the gradient norm is still reported.
      StepMetrics metrics = readMetrics(session.get());
      metrics.nonFiniteGrads = false;
      writeLogLine(log, s, loss, lr, /*eval=*/true, metrics);
      if (std::isfinite(loss)) {
        sum += loss;
        ++finite;
      }
      if (!o.quiet && ((s - start) % o.logEvery == 0 || s == last))
        std::printf("eval %lld/%lld  loss %s\n", static_cast<long long>(s),
                    static_cast<long long>(last), formatLoss(loss).c_str());
    }
    if (steps > 0) {
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

  // ---- Training. ----
  const uint32_t flags = o.skipNonFinite ? MSAMP_STEP_SKIP_NONFINITE : 0;
  const double runStart = now();
  double intervalStart = runStart;
  int64_t intervalSteps = 0;
  float lastLoss = NAN;
  for (int64_t s = start + 1; s <= last; ++s) {
    const double lr = msamp_lr_at(schedule, baseLR, o.warmup, horizon, s);
    float loss = 0;
    if (!bindBatch(s))
      return fail(kRunError, msamp_last_error_message());
    msamp_status status =
        msamp_session_step(session.get(), static_cast<float>(lr), flags, &loss);
    if (status == MSAMP_ERROR_NONFINITE) {
      std::string message = msamp_last_error_message();
      writeLogLine(log, s, loss, lr, false, readMetrics(session.get()));
      return fail(kRunError, message +
                                 "; stopping without saving (--skip-nonfinite "
                                 "skips such steps)");
    }
    if (status != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
    const StepMetrics metrics = readMetrics(session.get());
    writeLogLine(log, s, loss, lr, false, metrics);
    lastLoss = loss;
    ++intervalSteps;
    if (!o.quiet && ((s - start) % o.logEvery == 0 || s == last)) {
      double t = now();
      double rate = t > intervalStart ? intervalSteps / (t - intervalStart) : 0;
      // A skipped step (--skip-nonfinite) says why.
      const char *skipped =
          !std::isfinite(loss)     ? "  (skipped: non-finite loss)"
          : metrics.nonFiniteGrads ? "  (skipped: non-finite gradients)"
                                   : "";
      std::printf("step %lld/%lld  loss %s  lr %.2e  %.1f steps/s%s\n",
                  static_cast<long long>(s), static_cast<long long>(last),
                  formatLoss(loss).c_str(), lr, rate, skipped);
      std::fflush(stdout);
      intervalStart = t;
      intervalSteps = 0;
    }
    if (o.saveEvery && s % o.saveEvery == 0 && s != last)
      if (msamp_session_save(session.get(), o.save->c_str()) != MSAMP_OK)
        return fail(kRunError, msamp_last_error_message());
  }
  const double elapsed = now() - runStart;

  if (o.save) {
    if (msamp_session_save(session.get(), o.save->c_str()) != MSAMP_OK)
      return fail(kRunError, msamp_last_error_message());
  }
  if (!o.quiet) {
    std::printf("msamp-run: %lld steps in %.3f s (%.1f steps/s)",
                static_cast<long long>(steps), elapsed,
                elapsed > 0 ? static_cast<double>(steps) / elapsed : 0.0);
    if (steps > 0)
      std::printf(", final loss %s", formatLoss(lastLoss).c_str());
    std::printf("\n");
    if (int64_t skipped = msamp_session_num_skipped(session.get()))
      std::printf("msamp-run: skipped %lld step(s) with a non-finite loss "
                  "or non-finite gradients\n",
                  static_cast<long long>(skipped));
    if (o.save)
      std::printf(
          "msamp-run: saved %s (step %lld)\n", o.save->c_str(),
          static_cast<long long>(msamp_session_get_step(session.get())));
    printMemoryReport(session.get(), dir);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
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
    return run(options);
  } catch (const std::exception &e) {
    return fail(kRunError, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(kRunError, "internal error");
  }
}
