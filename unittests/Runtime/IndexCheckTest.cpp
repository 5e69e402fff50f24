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

/// msamp_rt_check_computed_index of `ids` (i64) at `site`, below `upper`.
void checkComputed(Tensor<int64_t> &ids, const std::string &site,
                   int64_t upper) {
  Tensor<int8_t> text({static_cast<int64_t>(site.size())},
                      std::vector<int8_t>(site.begin(), site.end()));
  _mlir_ciface_msamp_rt_check_computed_index(ids, text, MSAMP_RT_I64, upper, 0,
                                             0);
}

TEST_F(IndexCheckTest, AComputedIndexIsCheckedAtOnceOutsideASession) {
  Tensor<int64_t> ids({2, 2}, {0, 1, 12, 3});
  checkComputed(ids, "m.mlir:3:4", 10);
  EXPECT_EQ(lastMessage(), "msamp_train_step: index computed at m.mlir:3:4: "
                           "value 12 at [1, 0] is outside the valid range "
                           "[0, 10)");
}

// Between begin and end (a session whose step runs on device memory) the
// calls record nothing and read nothing back: end, after the step's wait,
// records the first failing call in step order with the message above.
// Without a CUDA backend the slots are filled on the host; the CUDA device
// test CudaGraphStep.ABadComputedIndexGivesTheCpuError runs the kernels.
TEST_F(IndexCheckTest, DeferredChecksReportTheFirstFailingCallAtTheEnd) {
  msamp_rt_index_checks *checks = msamp_rt_index_checks_create();
  ASSERT_NE(checks, nullptr);
  Tensor<int64_t> good({3}, {0, 1, 2});
  Tensor<int64_t> bad1({2, 3}, {0, 1, 2, 3, -4, 40});
  Tensor<int64_t> bad2({4}, {9, 9, 9, 9});
  msamp_rt_index_checks_begin(checks);
  checkComputed(good, "m.mlir:1:1", 3);
  checkComputed(bad1, "m.mlir:2:2", 4);
  checkComputed(bad2, "m.mlir:3:3", 5);
  expectNoError(); // nothing yet: the step has not been waited for
  EXPECT_EQ(msamp_rt_index_checks_end(checks), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastMessage(), "msamp_train_step: index computed at m.mlir:2:2: "
                           "value -4 at [1, 1] is outside the valid range "
                           "[0, 4)");
  msamp_rt_clear_error();

  // After end the calls are immediate again.
  checkComputed(bad2, "m.mlir:3:3", 5);
  EXPECT_EQ(lastMessage(), "msamp_train_step: index computed at m.mlir:3:3: "
                           "value 9 at [0] is outside the valid range [0, 5)");
  msamp_rt_clear_error();

  // The next step numbers its calls from 0 again: all good now.
  msamp_rt_index_checks_begin(checks);
  checkComputed(good, "m.mlir:1:1", 3);
  checkComputed(good, "m.mlir:2:2", 4);
  checkComputed(good, "m.mlir:3:3", 5);
  EXPECT_EQ(msamp_rt_index_checks_end(checks), MSAMP_RT_OK);
  expectNoError();
  msamp_rt_index_checks_destroy(checks);
}

// An error the step recorded before its wait is the one reported (the
// immediate check keeps it too).
TEST_F(IndexCheckTest, DeferredChecksKeepAnEarlierError) {
  msamp_rt_index_checks *checks = msamp_rt_index_checks_create();
  ASSERT_NE(checks, nullptr);
  Tensor<int64_t> bad({1}, std::vector<int64_t>{7});
  msamp_rt_index_checks_begin(checks);
  checkComputed(bad, "m.mlir:1:1", 3);
  Tensor<float> floats({1}, std::vector<float>{0.0f});
  EXPECT_EQ(msamp_rt_check_index(floats, MSAMP_RT_F32, 0, 2, 0, 0, "x"),
            MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_index_checks_end(checks);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_index_checks_destroy(checks);
}

} // namespace
