//===- VocabularyTest.cpp - the session's tables of msamp_vocabulary.h ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The session's role and memory-category tables are expansions of the one
// list in msamp_vocabulary.h: each enum value maps to its spelling, and the
// kinds split the roles as the manifest's "state" and "inputs" need.
//
//===----------------------------------------------------------------------===//

#include "Vocabulary.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace msamp::session;

namespace {

TEST(Vocabulary, RoleNamesFollowTheEnum) {
  EXPECT_STREQ(roleName(MSAMP_ROLE_PARAM), "param");
  EXPECT_STREQ(roleName(MSAMP_ROLE_LOSS_SCALE), "loss_scale");
  EXPECT_STREQ(roleName(MSAMP_ROLE_METRIC), "metric");
  EXPECT_EQ(roleKind(MSAMP_ROLE_RNG_STATE), MSAMP_ROLE_KIND_STATE);
  EXPECT_EQ(roleKind(MSAMP_ROLE_RANK), MSAMP_ROLE_KIND_INPUT);
  EXPECT_EQ(roleKind(MSAMP_ROLE_GRAD), MSAMP_ROLE_KIND_RESULT);
}

TEST(Vocabulary, KindsPartitionTheRoles) {
  EXPECT_EQ(listRolesOfKind(MSAMP_ROLE_KIND_STATE),
            "param, master_param, opt_state, step, scaling_state, buffer, "
            "rng_state, loss_scale");
  EXPECT_EQ(listRolesOfKind(MSAMP_ROLE_KIND_INPUT),
            "input, target, hyperparam, rank");
  EXPECT_EQ(listRolesOfKind(MSAMP_ROLE_KIND_RESULT), "loss, grad, metric");
  EXPECT_TRUE(isRoleOfKind("hyperparam", MSAMP_ROLE_KIND_INPUT));
  EXPECT_FALSE(isRoleOfKind("hyperparam", MSAMP_ROLE_KIND_STATE));
  EXPECT_FALSE(isRoleOfKind("params", MSAMP_ROLE_KIND_STATE));
}

TEST(Vocabulary, MemoryCategoriesInReportOrder) {
  const char *expected[] = {"weights",     "master_weights", "weight_grads",
                            "optimizer_m", "optimizer_v",    "scaling_state",
                            "other_state"};
  static_assert(sizeof(expected) / sizeof(expected[0]) ==
                    MSAMP_MEMORY_NUM_CATEGORIES,
                "memory_report.json has seven categories");
  for (int c = 0; c < MSAMP_MEMORY_NUM_CATEGORIES; ++c)
    EXPECT_STREQ(memoryCategoryName(static_cast<msamp_memory_category_id>(c)),
                 expected[c]);
}

/// msamp_memory_category_of on a role spelled as in a manifest.
int categoryOf(const std::string &role, const std::string &name) {
  return msamp_memory_category_of(msamp_role_of(role.data(), role.size()),
                                  name.data(), name.size());
}

TEST(Vocabulary, OneRuleSortsStateIntoCategories) {
  EXPECT_EQ(categoryOf("param", "fc.weight"), MSAMP_MEMORY_WEIGHTS);
  EXPECT_EQ(categoryOf("master_param", "fc.weight.master"),
            MSAMP_MEMORY_MASTER_WEIGHTS);
  EXPECT_EQ(categoryOf("opt_state", "fc.weight.exp_avg"),
            MSAMP_MEMORY_OPTIMIZER_M);
  EXPECT_EQ(categoryOf("opt_state", "fc.weight.momentum_buffer"),
            MSAMP_MEMORY_OPTIMIZER_M);
  EXPECT_EQ(categoryOf("opt_state", "fc.weight.exp_avg_sq"),
            MSAMP_MEMORY_OPTIMIZER_V);
  EXPECT_EQ(categoryOf("scaling_state", "fc.fprop.input.scale"),
            MSAMP_MEMORY_SCALING_STATE);
  // The two the session and the compiler used to sort differently: an
  // optimizer state that is neither moment, and the dropout seed.
  EXPECT_EQ(categoryOf("opt_state", "fc.weight.max_exp_avg_sq"),
            MSAMP_MEMORY_OTHER_STATE);
  EXPECT_EQ(categoryOf("opt_state", "fc.weight.exp_avg.scale"),
            MSAMP_MEMORY_OTHER_STATE);
  EXPECT_EQ(categoryOf("rng_state", "rng.seed"), MSAMP_MEMORY_OTHER_STATE);
  EXPECT_EQ(categoryOf("step", "step"), MSAMP_MEMORY_OTHER_STATE);
  EXPECT_EQ(categoryOf("buffer", "pos_ids"), MSAMP_MEMORY_OTHER_STATE);
  EXPECT_EQ(categoryOf("loss_scale", "loss_scale"), MSAMP_MEMORY_OTHER_STATE);
  // Not state: not counted. Every state role has a category.
  for (const char *role : {"input", "target", "hyperparam", "rank", "loss",
                           "grad", "metric", "parameter", ""})
    EXPECT_EQ(categoryOf(role, "x"), -1) << role;
  for (int r = 0; r < MSAMP_NUM_ROLES; ++r)
    EXPECT_EQ(msamp_memory_category_of(r, "x", 1) >= 0,
              roleKind(static_cast<msamp_role>(r)) == MSAMP_ROLE_KIND_STATE)
        << roleName(static_cast<msamp_role>(r));
  EXPECT_EQ(msamp_memory_category_of(-1, "x", 1), -1);
  EXPECT_EQ(msamp_memory_category_of(MSAMP_NUM_ROLES, "x", 1), -1);
}

TEST(Vocabulary, RoleOfASpelling) {
  for (int r = 0; r < MSAMP_NUM_ROLES; ++r) {
    const char *name = roleName(static_cast<msamp_role>(r));
    EXPECT_EQ(msamp_role_of(name, std::strlen(name)), r) << name;
  }
  // A prefix or an extension of a spelling is none.
  EXPECT_EQ(msamp_role_of("param", 4), -1);
  EXPECT_EQ(msamp_role_of("params", 6), -1);
}

} // namespace
