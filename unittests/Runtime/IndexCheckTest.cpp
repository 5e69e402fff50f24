//===- IndexCheckTest.cpp - msamp_rt_check_index --------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The range check a compiled step's packed entry point runs on each index
// input before the step (docs/RuntimeABI.md 11.1): every value in
// [lower, upper) or equal to the ignore_index passes; the first other one
// is returned and recorded with the input's name, the value, its
// coordinates and the range.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <string>

using namespace msamp_rt_test;

namespace {

class IndexCheckTest : public RuntimeTest {};

std::string lastMessage() { return msamp_rt_get_last_error_message(); }

TEST_F(IndexCheckTest, InRangeValuesPass) {
  Tensor<int64_t> ids({2, 3}, {0, 1, 2, 3, 4, 9});
  EXPECT_EQ(msamp_rt_check_index(ids, MSAMP_RT_I64, 0, 10, 0, 0, "ids"),
            MSAMP_RT_OK);
  Tensor<int32_t> ids32({4}, {0, -100, 7, 1});
  EXPECT_EQ(msamp_rt_check_index(ids32, MSAMP_RT_I32, 0, 8, -100, 1, "labels"),
            MSAMP_RT_OK);
  Tensor<int64_t> empty({0, 5});
  EXPECT_EQ(msamp_rt_check_index(empty, MSAMP_RT_I64, 0, 1, 0, 0, "e"),
            MSAMP_RT_OK);
  expectNoError();
}

TEST_F(IndexCheckTest, FirstBadValueIsNamed) {
  Tensor<int64_t> ids({2, 3}, {0, 1, 10, 3, -1, 2});
  EXPECT_EQ(msamp_rt_check_index(ids, MSAMP_RT_I64, 0, 10, 0, 0, "input_ids"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastMessage(),
            "msamp_train_step: input 'input_ids': value 10 at [0, 2] is "
            "outside the valid range [0, 10)");
}

TEST_F(IndexCheckTest, IgnoreIndexOnlyWhenTheLossHasOne) {
  Tensor<int64_t> labels({3}, {1, -100, 2});
  EXPECT_EQ(msamp_rt_check_index(labels, MSAMP_RT_I64, 0, 4, 0, 0, "labels"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastMessage(), "msamp_train_step: input 'labels': value -100 at "
                           "[1] is outside the valid range [0, 4)");
  msamp_rt_clear_error();
  Tensor<int32_t> bad({2, 2}, {1, -100, 3, 4});
  EXPECT_EQ(msamp_rt_check_index(bad, MSAMP_RT_I32, 0, 4, -100, 1, "labels"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastMessage(),
            "msamp_train_step: input 'labels': value 4 at [1, 1] is outside "
            "the valid range [0, 4) (or -100, the loss's ignore_index)");
}

TEST_F(IndexCheckTest, BadCallsAreErrorsNotCrashes) {
  Tensor<float> floats({2}, {0.0f, 1.0f});
  EXPECT_EQ(msamp_rt_check_index(floats, MSAMP_RT_F32, 0, 2, 0, 0, "x"),
            MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_check_index(nullptr, MSAMP_RT_I64, 0, 2, 0, 0, "ids"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastMessage().find("input 'ids' is null"), std::string::npos)
      << lastMessage();
  msamp_rt_clear_error();
  std::vector<int64_t> data = {0, 1, 2, 3};
  MemRef strided(data.data(), {2, 2}, 0, {1, 2});
  EXPECT_EQ(msamp_rt_check_index(strided, MSAMP_RT_I64, 0, 4, 0, 0, "ids"),
            MSAMP_RT_ERROR_NON_CONTIGUOUS);
}

} // namespace
