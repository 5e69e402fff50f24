//===- Options.h - Command line of msamp-run --------------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The flags of docs/Interfaces.md 5. msamp-run links no LLVM (it is a runtime
// tool), so it parses its command line itself: `--flag value` and
// `--flag=value`, every value checked (integers in range, known names), and
// every misuse a message and a non-zero exit, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_OPTIONS_H
#define MSAMP_TOOLS_MSAMP_RUN_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace msamp::run {

struct Options {
  std::string model;
  std::optional<std::string> optLevel; // default O2 when compiling
  std::optional<std::string> pipelineOptions;
  // --recipe: an Accelerate config file (level and pipeline options).
  std::optional<std::string> recipe;
  std::optional<int64_t> steps; // default 10; --eval: K batches
  uint64_t seed = 0;
  std::optional<double> lr;
  std::string lrSchedule = "constant";
  int64_t warmup = 0;
  std::optional<int64_t> scheduleSteps;
  std::optional<double> clipGradNorm;
  std::optional<std::string> data;
  bool synthetic = false;
  int64_t syntheticClasses = 2;
  std::optional<std::string> init;
  std::optional<std::string> save;
  int64_t saveEvery = 0;
  std::optional<std::string> resume;
  std::optional<std::string> exportWeights;
  bool eval = false;
  bool skipNonFinite = false;
  int64_t maxSkippedSteps = 10; // consecutive skips before the run stops
  std::string backend = "cpu";
  std::string cudaChip = "sm_90"; // --target cuda --chip of --backend cuda
  /// --cuda-graphs on|off: a CUDA step as one CUDA graph; unset: the
  /// session's default ($MSAMP_CUDA_GRAPHS, else on).
  std::optional<bool> cudaGraphs;
  std::optional<int64_t> threads;
  std::optional<std::string> logJson;
  bool logStepTime = false; // "step_ms" in --log-json
  int64_t logEvery = 10;
  bool quiet = false;
  bool checkReplicas = false; // compare the final state across ranks
  bool version = false;
  bool help = false;
};

/// Parses argv; on failure returns false with `error` set.
bool parseOptions(int argc, char **argv, Options &options, std::string &error);

/// The --help text.
const char *usage();

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_OPTIONS_H
