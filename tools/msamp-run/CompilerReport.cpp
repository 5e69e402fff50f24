//===- CompilerReport.cpp - msamp-compile's memory_report.json ------------===//

#include "CompilerReport.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace msamp::run {

std::optional<CompilerMemoryReport>
readCompilerMemoryReport(const std::string &dir, std::string &why) {
  const std::string path = dir + "/memory_report.json";
  std::ifstream file(path);
  if (!file) {
    why = path + " not found (compiled before msamp-compile wrote it: "
                 "compile again for the gradient bytes and the planned peak)";
    return std::nullopt;
  }
  std::stringstream text;
  text << file.rdbuf();
  try {
    auto json = nlohmann::json::parse(text.str());
    CompilerMemoryReport report;
    const auto &grads = json.at("categories").at("weight_grads");
    report.gradDtype = grads.at("dtype").get<std::string>();
    report.gradBytes = grads.at("bytes").get<int64_t>();
    if (json.contains("peak_bytes"))
      report.peakBytes = json.at("peak_bytes").get<int64_t>();
    return report;
  } catch (const std::exception &e) {
    why = path + " is not msamp-compile's memory report: " + e.what();
    return std::nullopt;
  }
}

std::string formatBytes(int64_t bytes) {
  char buffer[32];
  double value = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buffer, sizeof(buffer), "%lld B",
                  static_cast<long long>(bytes));
    return buffer;
  }
  const char *unit = "KiB";
  value /= 1024.0;
  for (const char *next : {"MiB", "GiB"}) {
    if (value < 1024.0)
      break;
    value /= 1024.0;
    unit = next;
  }
  std::snprintf(buffer, sizeof(buffer), "%.2f %s", value, unit);
  return buffer;
}

} // namespace msamp::run
