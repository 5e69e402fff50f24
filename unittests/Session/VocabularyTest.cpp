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

} // namespace
