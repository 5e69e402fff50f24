//===- CheckOptionsTest.cpp - msamp-run's refusals before any work --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// checkOptions refuses, with exit code 2, the combinations no run can
// satisfy, and accepts the rest; findPipelineOption finds a key only where
// an option starts.
//
//===----------------------------------------------------------------------===//

#include "CheckOptions.h"
#include "Group.h"

#include <gtest/gtest.h>

#include <string>

using namespace msamp::run;

namespace {

Options model() {
  Options o;
  o.model = "m.mlir";
  return o;
}

/// checkOptions' exit code and what it printed.
int check(const Options &o, std::string &printed) {
  testing::internal::CaptureStderr();
  int rc = checkOptions(o);
  printed = testing::internal::GetCapturedStderr();
  return rc;
}

TEST(CheckOptions, AcceptsAConsistentRun) {
  Options o = model();
  o.optLevel = "O3";
  o.data = "d.safetensors";
  o.save = "ck.safetensors";
  o.saveEvery = 5;
  o.backend = "cuda";
  o.cudaChip = "sm_89";
  o.pipelineOptions = "world-size=2";
  std::string printed;
  EXPECT_EQ(check(o, printed), 0);
  EXPECT_EQ(printed, "");
}

TEST(CheckOptions, RefusesWhatNoRunCanDo) {
  struct Case {
    void (*set)(Options &);
    const char *message;
  } cases[] = {
      {[](Options &o) { o.backend = "tpu"; },
       "unknown backend 'tpu' (expected cpu or cuda)"},
      {[](Options &o) { o.optLevel = "O9"; }, "--opt-level must be "},
      {[](Options &o) {
         o.optLevel = "O3";
         o.pipelineOptions = "world-size=2 rank=1";
       },
       "msamp-run sets the O3 rank itself"},
      {[](Options &o) {
         o.data = "d.safetensors";
         o.synthetic = true;
       },
       "--data and --synthetic exclude each other"},
      {[](Options &o) {
         o.init = "i.safetensors";
         o.resume = "ck.safetensors";
       },
       "--init and --resume exclude each other"},
      {[](Options &o) { o.saveEvery = 3; }, "--save-every needs --save FILE"},
      {[](Options &o) {
         o.exportWeights = "w.safetensors";
         o.eval = true;
       },
       "--export-weights writes trained weights and --eval trains nothing"},
      {[](Options &o) { o.cudaChip = "sm_80"; },
       "--cuda-chip must be sm_90 or sm_89, got 'sm_80'"},
  };
  for (const Case &c : cases) {
    Options o = model();
    c.set(o);
    std::string printed;
    EXPECT_EQ(check(o, printed), kUsageError) << c.message;
    EXPECT_NE(printed.find("msamp-run: error: "), std::string::npos) << printed;
    EXPECT_NE(printed.find(c.message), std::string::npos) << printed;
  }
}

TEST(CheckOptions, RankIsOnlyRefusedAtO3) {
  Options o = model();
  o.optLevel = "O2";
  o.pipelineOptions = "rank=1";
  std::string printed;
  EXPECT_EQ(check(o, printed), 0) << printed;
}

TEST(CheckOptions, FindPipelineOptionOnlyAtAnOptionsStart) {
  EXPECT_EQ(findPipelineOption("rank=1", "rank"), 0u);
  EXPECT_EQ(findPipelineOption("world-size=2 rank=1", "rank"), 13u);
  EXPECT_EQ(findPipelineOption("{rank=1}", "rank"), 1u);
  EXPECT_EQ(findPipelineOption("prank=1", "rank"), std::string::npos);
  EXPECT_EQ(findPipelineOption("prank=1 rank=0", "rank"), 8u);
  EXPECT_EQ(findPipelineOption("rank", "rank"), std::string::npos);
  EXPECT_EQ(findPipelineOption("", "rank"), std::string::npos);
}

} // namespace
