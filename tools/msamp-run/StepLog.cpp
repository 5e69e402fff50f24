//===- StepLog.cpp - Per-step metrics and --log-json lines ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "StepLog.h"
#include "CompilerReport.h"
#include "Group.h"

#include <cmath>

namespace msamp::run {

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

StepMetrics readMetrics(msamp_session *session) {
  StepMetrics m;
  float value = 0;
  if (msamp_session_metric(session, "grad_norm", &value) == MSAMP_OK)
    m.gradNorm = value;
  if (msamp_session_metric(session, "nonfinite", &value) == MSAMP_OK)
    m.nonFiniteGrads = value != 0.0f;
  return m;
}

void readPeaks(msamp_session *session, const std::string &dir,
               StepMetrics &metrics) {
  int64_t sessionBytes = 0, stepBytes = 0;
  if (msamp_session_peak_bytes(session, &sessionBytes, &stepBytes) == MSAMP_OK)
    metrics.peakBytes = sessionBytes + stepBytes;
  std::string why;
  if (auto report = readCompilerMemoryReport(dir, why))
    metrics.plannedPeakBytes = report->peakBytes;
}

void writeLogLine(FILE *log, int64_t step, float loss, double lr, bool eval,
                  const StepMetrics &metrics, int64_t commBytes) {
  if (!log)
    return;
  const bool nonFinite =
      !std::isfinite(loss) || metrics.nonFiniteGrads || metrics.nonFiniteStep;
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
  // Tensor payload bytes the step's collectives handed to the group, amaxes
  // and scalars excluded (identical on every rank;
  // msamp_rt_collective_bytes). Only with more
  // than one rank: alone, nothing goes on a wire.
  if (group.multi())
    std::fprintf(log, ", \"comm_bytes\": %lld",
                 static_cast<long long>(commBytes));
  if (metrics.plannedPeakBytes)
    std::fprintf(log, ", \"planned_peak_bytes\": %lld",
                 static_cast<long long>(*metrics.plannedPeakBytes));
  if (metrics.peakBytes)
    std::fprintf(log, ", \"peak_bytes\": %lld",
                 static_cast<long long>(*metrics.peakBytes));
  if (metrics.stepMs)
    std::fprintf(log, ", \"step_ms\": %.3f", *metrics.stepMs);
  std::fprintf(log, eval ? ", \"eval\": true}\n" : "}\n");
  // A run that dies later keeps every line written so far.
  std::fflush(log);
}

} // namespace msamp::run
