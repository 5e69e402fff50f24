//===- OptionsTest.cpp - msamp-run's command line -------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// parseOptions without running the tool: both spellings of a value, the
// defaults, and a message (never a crash) for every misuse.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace msamp::run;

namespace {

/// Parses `args` (after the program name); `error` gets the message.
bool parse(std::vector<std::string> args, Options &o, std::string &error) {
  args.insert(args.begin(), "msamp-run");
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  return parseOptions(static_cast<int>(argv.size()), argv.data(), o, error);
}

std::string errorOf(std::vector<std::string> args) {
  Options o;
  std::string error;
  EXPECT_FALSE(parse(std::move(args), o, error));
  return error;
}

TEST(Options, Defaults) {
  Options o;
  std::string error;
  ASSERT_TRUE(parse({"m.mlir"}, o, error)) << error;
  EXPECT_EQ(o.model, "m.mlir");
  EXPECT_FALSE(o.steps);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_EQ(o.lrSchedule, "constant");
  EXPECT_EQ(o.backend, "cpu");
  EXPECT_EQ(o.cudaChip, "sm_90");
  EXPECT_EQ(o.logEvery, 10);
  EXPECT_EQ(o.maxSkippedSteps, 10);
  EXPECT_EQ(o.syntheticClasses, 2);
}

TEST(Options, BothSpellingsOfAValue) {
  Options o;
  std::string error;
  ASSERT_TRUE(parse({"m.mlir", "--steps", "5", "--lr=0.25", "-seed=7",
                     "--synthetic", "--save", "ck.safetensors"},
                    o, error))
      << error;
  EXPECT_EQ(o.steps, 5);
  EXPECT_EQ(o.lr, 0.25);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.synthetic);
  EXPECT_EQ(o.save, "ck.safetensors");
}

TEST(Options, DoubleDashMakesTheRestPositional) {
  Options o;
  std::string error;
  ASSERT_TRUE(parse({"--", "--model.mlir"}, o, error)) << error;
  EXPECT_EQ(o.model, "--model.mlir");
}

// Unset: the session's default ($MSAMP_CUDA_GRAPHS, else on); either
// spelling of a value.
TEST(Options, CudaGraphs) {
  Options unset, off, on;
  std::string error;
  ASSERT_TRUE(parse({"m.mlir"}, unset, error)) << error;
  EXPECT_FALSE(unset.cudaGraphs.has_value());
  ASSERT_TRUE(parse({"m.mlir", "--cuda-graphs=off"}, off, error)) << error;
  EXPECT_EQ(off.cudaGraphs, std::optional<bool>(false));
  ASSERT_TRUE(parse({"m.mlir", "--cuda-graphs", "on"}, on, error)) << error;
  EXPECT_EQ(on.cudaGraphs, std::optional<bool>(true));
  EXPECT_EQ(errorOf({"m.mlir", "--cuda-graphs=maybe"}),
            "invalid value 'maybe' for --cuda-graphs: expected on or off");
  EXPECT_EQ(errorOf({"m.mlir", "--cuda-graphs", "1"}),
            "invalid value '1' for --cuda-graphs: expected on or off");
}

TEST(Options, Misuse) {
  EXPECT_EQ(errorOf({"m.mlir", "--stpes", "3"}),
            "unknown option '--stpes' (see --help)");
  EXPECT_EQ(errorOf({"m.mlir", "--steps"}), "option '--steps' needs a value");
  EXPECT_EQ(errorOf({"m.mlir", "--steps", "-1"}),
            "invalid value '-1' for --steps: expected a non-negative integer");
  EXPECT_EQ(errorOf({"m.mlir", "--lr", "0"}),
            "invalid value '0' for --lr: expected a positive number");
  EXPECT_EQ(errorOf({"m.mlir", "--lr-schedule", "linear"}),
            "invalid value 'linear' for --lr-schedule: expected constant or "
            "cosine");
  EXPECT_EQ(errorOf({"m.mlir", "--eval=1"}), "option '--eval' takes no value");
  EXPECT_EQ(errorOf({"m.mlir", "--save="}),
            "invalid value '' for --save: expected a file name");
  EXPECT_EQ(errorOf({"a.mlir", "b.mlir"}),
            "unexpected argument 'b.mlir' (the model is 'a.mlir')");
  EXPECT_EQ(errorOf({"m.mlir", "--seed", "99999999999999999999"}),
            "invalid value '99999999999999999999' for --seed: expected a "
            "non-negative integer");
}

} // namespace
