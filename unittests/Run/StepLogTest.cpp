//===- StepLogTest.cpp - msamp-run's loss format and --log-json lines -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The --log-json line is an interface (docs/Interfaces.md 5): its keys,
// null for what is not finite, 9 significant digits (an f32 round-trips),
// and "comm_bytes" only with several ranks.
//
//===----------------------------------------------------------------------===//

#include "StepLog.h"
#include "Group.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

using namespace msamp::run;

namespace {

/// What writeLogLine writes for these arguments.
std::string logLine(int64_t step, float loss, double lr, bool eval,
                    const StepMetrics &metrics, int64_t commBytes = 0) {
  FILE *f = std::tmpfile();
  EXPECT_NE(f, nullptr);
  writeLogLine(f, step, loss, lr, eval, metrics, commBytes);
  std::string text(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  EXPECT_EQ(std::fread(text.data(), 1, text.size(), f), text.size());
  std::fclose(f);
  return text;
}

TEST(StepLog, FormatLoss) {
  EXPECT_EQ(formatLoss(0.83125f), "0.8313");
  EXPECT_EQ(formatLoss(0.0f), "0.0000");
  EXPECT_EQ(formatLoss(-2.5f), "-2.5000");
  // Four decimals would hide these.
  EXPECT_EQ(formatLoss(1.5e-3f), "1.5000e-03");
  EXPECT_EQ(formatLoss(123456.0f), "1.2346e+05");
  EXPECT_EQ(formatLoss(std::numeric_limits<float>::quiet_NaN()), "nan");
  EXPECT_EQ(formatLoss(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(formatLoss(-std::numeric_limits<float>::infinity()), "-inf");
}

TEST(StepLog, PlainStep) {
  EXPECT_EQ(logLine(3, 0.5f, 1e-3, false, {}),
            "{\"step\": 3, \"loss\": 0.5, \"lr\": 0.001, \"nonfinite\": "
            "false}\n");
}

TEST(StepLog, LossRoundTripsAsF32) {
  // 8 significant digits would give 0.12101416, another f32.
  const float loss = 0.121014155f;
  std::string line = logLine(1, loss, 3e-4, false, {});
  size_t at = line.find("\"loss\": ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::strtof(line.c_str() + at + 8, nullptr), loss);
}

TEST(StepLog, NonFiniteIsNullAndFlagged) {
  StepMetrics metrics;
  metrics.gradNorm = std::numeric_limits<float>::infinity();
  metrics.nonFiniteGrads = true;
  EXPECT_EQ(
      logLine(2, std::numeric_limits<float>::quiet_NaN(), 0.5, false, metrics),
      "{\"step\": 2, \"loss\": null, \"lr\": 0.5, \"nonfinite\": true, "
      "\"grad_norm\": null}\n");
  // A skipped step with a finite loss (non-finite input or state).
  StepMetrics skipped;
  skipped.nonFiniteStep = true;
  EXPECT_EQ(logLine(4, 1.0f, 0.5, false, skipped),
            "{\"step\": 4, \"loss\": 1, \"lr\": 0.5, \"nonfinite\": true}\n");
}

TEST(StepLog, OptionalFields) {
  StepMetrics metrics;
  metrics.gradNorm = 0.25f;
  metrics.plannedPeakBytes = 4096;
  metrics.peakBytes = 5000;
  EXPECT_EQ(logLine(10, 2.0f, 0.1, /*eval=*/true, metrics, 123),
            "{\"step\": 10, \"loss\": 2, \"lr\": 0.1, "
            "\"nonfinite\": false, \"grad_norm\": 0.25, "
            "\"planned_peak_bytes\": 4096, \"peak_bytes\": 5000, \"eval\": "
            "true}\n");
}

TEST(StepLog, CommBytesOnlyWithSeveralRanks) {
  const Group saved = group;
  group.size = 2;
  std::string line = logLine(1, 1.0f, 0.5, false, {}, 4096);
  group = saved;
  EXPECT_EQ(line, "{\"step\": 1, \"loss\": 1, \"lr\": 0.5, \"nonfinite\": "
                  "false, \"comm_bytes\": 4096}\n");
  EXPECT_EQ(logLine(1, 1.0f, 0.5, false, {}, 4096).find("comm_bytes"),
            std::string::npos);
}

} // namespace
