//===- MemoryReport.cpp - The memory table msamp-run prints ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MemoryReport.h"
#include "CompilerReport.h"

#include <cstdio>

namespace msamp::run {

bool compilerGradBytes(const std::string &dir, std::string &dtype,
                       int64_t &bytes) {
  std::string why;
  auto report = readCompilerMemoryReport(dir, why);
  if (!report)
    return false;
  dtype = report->gradDtype;
  bytes = report->gradBytes;
  return true;
}

double memoryBytesPerParam(msamp_session *session, const std::string &dir) {
  msamp_memory_category categories[MSAMP_MEMORY_NUM_CATEGORIES];
  int64_t params = 0;
  if (msamp_session_memory_report(session, categories, &params) != MSAMP_OK ||
      params <= 0)
    return 0;
  std::string gradDtype;
  int64_t gradBytes = 0;
  const bool haveGrads = compilerGradBytes(dir, gradDtype, gradBytes);
  int64_t total = 0;
  for (const msamp_memory_category &c : categories)
    total += std::string(c.name) == "weight_grads" ? (haveGrads ? gradBytes : 0)
                                                   : c.bytes;
  return static_cast<double>(total) / static_cast<double>(params);
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
  // The whole memory of training: the planned peak of the static buffer
  // plan against the measured one (session buffers + the step's heap).
  int64_t sessionBytes = 0, stepBytes = 0;
  msamp_session_peak_bytes(session, &sessionBytes, &stepBytes);
  std::string why;
  auto report = readCompilerMemoryReport(dir, why);
  std::printf(
      "peak: planned %s, measured %s (session %s + step %s)\n",
      report && report->peakBytes ? formatBytes(*report->peakBytes).c_str()
                                  : "-",
      formatBytes(sessionBytes + stepBytes).c_str(),
      formatBytes(sessionBytes).c_str(), formatBytes(stepBytes).c_str());
  if (!report)
    std::printf("memory: %s\n", why.c_str());
}

} // namespace msamp::run
