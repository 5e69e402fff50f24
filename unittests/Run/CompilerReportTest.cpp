//===- CompilerReportTest.cpp - reading msamp-compile's memory report -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-run takes the gradient bytes and the planned peak from
// memory_report.json; a missing or foreign file is a reason, not a crash.
//
//===----------------------------------------------------------------------===//

#include "CompilerReport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace msamp::run;

namespace {

/// A fresh directory, removed with its report at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/msamp-run-test-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() {
    std::remove((path + "/memory_report.json").c_str());
    ::rmdir(path.c_str());
  }
  void write(const std::string &text) const {
    std::ofstream(path + "/memory_report.json") << text;
  }
};

TEST(CompilerReport, ReadsGradientsAndPeak) {
  TempDir dir;
  dir.write(R"({"categories": {"weight_grads": {"dtype": "bf16",
               "bytes": 2048}}, "peak_bytes": 65536})");
  std::string why;
  auto report = readCompilerMemoryReport(dir.path, why);
  ASSERT_TRUE(report) << why;
  EXPECT_EQ(report->gradDtype, "bf16");
  EXPECT_EQ(report->gradBytes, 2048);
  EXPECT_EQ(report->peakBytes, 65536);
}

TEST(CompilerReport, PeakIsOptional) {
  // --target cuda has no buffer plan, so no peak.
  TempDir dir;
  dir.write(R"({"categories": {"weight_grads": {"dtype": "f32",
               "bytes": 4}}})");
  std::string why;
  auto report = readCompilerMemoryReport(dir.path, why);
  ASSERT_TRUE(report) << why;
  EXPECT_FALSE(report->peakBytes);
}

TEST(CompilerReport, MissingOrForeignFileSaysWhy) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(readCompilerMemoryReport(dir.path, why));
  EXPECT_NE(why.find("memory_report.json not found"), std::string::npos) << why;
  dir.write(R"({"categories": {}})");
  EXPECT_FALSE(readCompilerMemoryReport(dir.path, why));
  EXPECT_NE(why.find("is not msamp-compile's memory report"), std::string::npos)
      << why;
  dir.write("not json");
  EXPECT_FALSE(readCompilerMemoryReport(dir.path, why));
  EXPECT_NE(why.find("is not msamp-compile's memory report"), std::string::npos)
      << why;
}

TEST(CompilerReport, FormatBytes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(3584), "3.50 KiB");
  EXPECT_EQ(formatBytes(12940410), "12.34 MiB");
  EXPECT_EQ(formatBytes(int64_t{1288490189}), "1.20 GiB");
}

} // namespace
