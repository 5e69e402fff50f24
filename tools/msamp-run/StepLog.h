//===- StepLog.h - Per-step metrics and --log-json lines --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What a step reports and how msamp-run prints it: the loss on the
// progress line and one JSON object per step in --log-json
// (docs/Interfaces.md 5).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_STEPLOG_H
#define MSAMP_TOOLS_MSAMP_RUN_STEPLOG_H

#include "MSAMP/Runtime/msamp_session.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace msamp::run {

/// "0.8312" for ordinary losses, scientific where four decimals would hide
/// the value.
std::string formatLoss(float loss);

/// What a step reported besides its loss (steps compiled without the
/// gradient statistics report nothing).
struct StepMetrics {
  std::optional<float> gradNorm; // before clipping
  bool nonFiniteGrads = false;
  /// The session refused or skipped the step as non-finite (also for
  /// non-finite input data or updated state, which no metric shows).
  bool nonFiniteStep = false;
  /// On the line of the run's last step only: the planned peak
  /// (memory_report.json) and the measured one (session buffers + the
  /// step's heap, msamp_session_peak_bytes).
  std::optional<int64_t> plannedPeakBytes, peakBytes;
  /// Wall time of msamp_session_step on this rank, in milliseconds (its
  /// checks, the step and, on a GPU, the wait for it).
  std::optional<double> stepMs;
};

/// The step's "grad_norm" and "nonfinite" metrics, where it has them.
StepMetrics readMetrics(msamp_session *session);

/// The planned and measured peaks, for the log line of the last step.
void readPeaks(msamp_session *session, const std::string &dir,
               StepMetrics &metrics);

/// One line of --log-json: docs/Interfaces.md 5's keys, then "grad_norm" when
/// the step reports it (null when not finite) and, with several ranks,
/// "comm_bytes", and with --log-step-time "step_ms". "nonfinite" is true when
/// the input data, the loss, the gradients or the updated state were not finite
/// (the update is not applied, or the run stops); only a non-finite loss is
/// null. Numbers are printed with 9 significant digits, enough to round-trip an
/// f32 exactly.
void writeLogLine(FILE *log, int64_t step, float loss, double lr, bool eval,
                  const StepMetrics &metrics, int64_t commBytes);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_STEPLOG_H
