//===- CompilerReport.h - msamp-compile's memory_report.json ----*- C++ -*-===//
//
// msamp-run reads the figures only the compiler knows (the gradient bytes,
// which live inside the step, and the peak of the static buffer plan) from
// the memory_report.json msamp-compile wrote next to the manifest; it never
// runs the compiler again for them.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_RUN_COMPILERREPORT_H
#define MSAMP_RUN_COMPILERREPORT_H

#include <cstdint>
#include <optional>
#include <string>

namespace msamp::run {

struct CompilerMemoryReport {
  /// categories.weight_grads.
  std::string gradDtype;
  int64_t gradBytes = 0;
  /// "peak_bytes" (absent for --target cuda, which has no plan yet).
  std::optional<int64_t> peakBytes;
};

/// DIR/memory_report.json, or std::nullopt with `why` set (a directory
/// compiled before msamp-compile wrote the file, or an unreadable file).
std::optional<CompilerMemoryReport>
readCompilerMemoryReport(const std::string &dir, std::string &why);

/// "512 B", "3.50 KiB", "12.34 MiB", "1.20 GiB".
std::string formatBytes(int64_t bytes);

} // namespace msamp::run

#endif // MSAMP_RUN_COMPILERREPORT_H
