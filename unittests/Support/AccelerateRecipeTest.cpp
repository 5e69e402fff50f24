//===- AccelerateRecipeTest.cpp - the Accelerate config mapping -----------===//
//
// The mapping from an Accelerate config (text in memory) to a level and
// pipeline options, and the merge with a tool's own --opt-level and
// --pipeline-options, without running a tool.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Support/AccelerateRecipe.h"

#include <gtest/gtest.h>

using msamp_recipe::AccelerateRecipe;

namespace {

AccelerateRecipe map(const std::string &text) {
  AccelerateRecipe recipe;
  std::string error;
  EXPECT_TRUE(
      msamp_recipe::parseAccelerateRecipe(text, "cfg.yaml", recipe, error))
      << error;
  return recipe;
}

std::string errorOf(const std::string &text) {
  AccelerateRecipe recipe;
  std::string error;
  EXPECT_FALSE(
      msamp_recipe::parseAccelerateRecipe(text, "cfg.yaml", recipe, error));
  // A failed parse leaves nothing half-mapped behind.
  EXPECT_TRUE(recipe.level.empty());
  EXPECT_TRUE(recipe.pipelineOptions.empty());
  return error;
}

TEST(AccelerateRecipe, TEDefaultsAreAccelerates) {
  AccelerateRecipe r = map("mixed_precision: fp8\nfp8_config: {backend: TE}");
  EXPECT_EQ(r.level, "te");
  EXPECT_EQ(r.pipelineOptions, "fp8-format=hybrid amax-history-len=1024 "
                               "amax-compute-algo=most_recent margin=0 "
                               "interval=1");
  EXPECT_TRUE(r.notes.empty());
}

TEST(AccelerateRecipe, JsonAndPythonTupleSpellings) {
  // A dict from Python arrives as JSON; PyYAML writes a tuple with its tag.
  AccelerateRecipe json = map(
      R"({"mixed_precision": "fp8", "fp8_config": {"backend": "te",
          "fp8_format": "e4m3", "margin": 2,
          "override_linear_precision": [true, false, "yes"]}})");
  EXPECT_EQ(json.pipelineOptions,
            "fp8-format=e4m3 amax-history-len=1024 "
            "amax-compute-algo=most_recent margin=2 interval=1 "
            "fprop-hp=true wgrad-hp=true");
  AccelerateRecipe tuple = map("mixed_precision: fp8\nfp8_config:\n"
                               "  backend: TE\n"
                               "  override_linear_precision: !!python/tuple "
                               "[false, true, false]\n");
  EXPECT_NE(tuple.pipelineOptions.find("dgrad-hp=true"), std::string::npos);
}

TEST(AccelerateRecipe, ReferenceRowsAndMSAMPLevels) {
  EXPECT_EQ(map("mixed_precision: bf16").level, "amp-bf16");
  EXPECT_EQ(map("mixed_precision: 'no'").level, "O0");
  EXPECT_EQ(map("mixed_precision: fp8\nfp8_config: {backend: msamp}").level,
            "O2");
  AccelerateRecipe o1 = map("mixed_precision: fp8\nfp8_config:\n"
                            "  backend: MSAMP\n  optimization_level: O1\n");
  EXPECT_EQ(o1.level, "O1");
  EXPECT_EQ(o1.pipelineOptions, "");
  ASSERT_EQ(o1.notes.size(), 1u);
  EXPECT_EQ(o1.notes[0].rfind("cfg.yaml:4:3: note: ", 0), 0u) << o1.notes[0];
}

TEST(AccelerateRecipe, ErrorsAreLocated) {
  EXPECT_EQ(errorOf("mixed_precision: fp8\nfp8_config:\n  backend: TE\n"
                    "  amax_history_len: 0\n"),
            "cfg.yaml:4:21: error: fp8_config.amax_history_len: expected an "
            "integer >= 1, got '0'");
  EXPECT_EQ(errorOf("mixed_precision: fp8\nfp8_config:\n  backend: TE\n"
                    "  use_autocast_during_eval: maybe\n"),
            "cfg.yaml:4:29: error: fp8_config.use_autocast_during_eval: "
            "expected true or false, got 'maybe'");
  EXPECT_EQ(errorOf("mixed_precision: fp8\nfp8_config:\n  backend: MSAMP\n"
                    "  opt_level: o1\n"),
            "cfg.yaml:4:14: error: fp8_config.opt_level: expected O1 or O2, "
            "got 'o1'");
  EXPECT_EQ(errorOf("- mixed_precision: fp8\n"),
            "cfg.yaml:1:1: error: expected an Accelerate config (a mapping "
            "with mixed_precision and fp8_config), got a list");
  EXPECT_EQ(errorOf("mixed_precision: fp8\nfp8_config:\n  backend: TE\n"
                    "  override_linear_precision: (true, false, perhaps)\n"),
            "cfg.yaml:4:30: error: fp8_config.override_linear_precision: "
            "expected true or false, got 'perhaps'");
}

TEST(AccelerateRecipe, MergeWithTheToolsFlags) {
  AccelerateRecipe te =
      map("mixed_precision: fp8\nfp8_config: {backend: TE, margin: 1}");
  std::optional<std::string> level;
  std::string options = "lr=0.5", error;
  ASSERT_TRUE(msamp_recipe::mergeRecipe(te, "cfg.yaml", level, options, error))
      << error;
  EXPECT_EQ(level, "te");
  EXPECT_EQ(options, te.pipelineOptions + " lr=0.5");

  std::optional<std::string> same = std::string("te");
  std::string none;
  EXPECT_TRUE(msamp_recipe::mergeRecipe(te, "cfg.yaml", same, none, error));

  std::optional<std::string> other = std::string("O2");
  EXPECT_FALSE(msamp_recipe::mergeRecipe(te, "cfg.yaml", other, none, error));
  EXPECT_EQ(error, "--opt-level O2 disagrees with --recipe cfg.yaml, which "
                   "asks for level te");

  std::optional<std::string> unset;
  std::string clash = "margin=3";
  EXPECT_FALSE(msamp_recipe::mergeRecipe(te, "cfg.yaml", unset, clash, error));
  EXPECT_EQ(error, "--pipeline-options sets 'margin', which --recipe "
                   "cfg.yaml sets (margin=1)");
  EXPECT_EQ(clash, "margin=3"); // untouched on failure
}

} // namespace
