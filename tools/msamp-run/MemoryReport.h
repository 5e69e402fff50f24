//===- MemoryReport.h - The memory table msamp-run prints -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The state the session allocated, by category, with the compiler's
// figure for the gradients (which live inside the step), and the planned
// against the measured peak.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_MEMORYREPORT_H
#define MSAMP_TOOLS_MSAMP_RUN_MEMORYREPORT_H

#include "MSAMP/Runtime/msamp_session.h"

#include <cstdint>
#include <string>

namespace msamp::run {

/// The weight_grads figure of the compiler's memory report
/// (memory_report.json), if any: gradients live inside the compiled step, so
/// the session cannot measure them.
bool compilerGradBytes(const std::string &dir, std::string &dtype,
                       int64_t &bytes);

/// The total of printMemoryReport's table, in bytes per param.
double memoryBytesPerParam(msamp_session *session, const std::string &dir);

/// Prints the table (category, dtype, bytes, bytes/param) and the peak line.
void printMemoryReport(msamp_session *session, const std::string &dir);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_MEMORYREPORT_H
