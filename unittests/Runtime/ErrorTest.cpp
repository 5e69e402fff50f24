//===- ErrorTest.cpp - Error model, backend selection, library API --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Bad calls must never crash and never write: they record a sticky error
// (the first one wins) that the caller reads after the step.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <vector>

using namespace msamp_rt_test;

extern "C" int msamp_rt_test_c_header(void);

namespace {

class ErrorTest : public RuntimeTest {};

std::string lastMessage() { return msamp_rt_get_last_error_message(); }

TEST_F(ErrorTest, LibraryBasics) {
  EXPECT_EQ(msamp_rt_abi_version(), MSAMP_RT_ABI_VERSION);
  EXPECT_EQ(msamp_rt_test_c_header(), 1);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_F32), 4);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_F16), 2);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_BF16), 2);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_F8E4M3FN), 1);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_F8E5M2), 1);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_I64), 8);
  EXPECT_EQ(msamp_rt_dtype_size(MSAMP_RT_I32), 4);
  EXPECT_EQ(msamp_rt_dtype_size(7), 0);
  EXPECT_EQ(msamp_rt_dtype_size(-1), 0);
  expectNoError();
  EXPECT_STREQ(msamp_rt_get_last_error_message(), "");
}

TEST_F(ErrorTest, BackendSelection) {
  EXPECT_STREQ(msamp_rt_get_backend(), "cpu");
  EXPECT_EQ(msamp_rt_set_backend("tpu"), MSAMP_RT_ERROR_UNKNOWN_BACKEND);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNKNOWN_BACKEND);
  EXPECT_NE(lastMessage().find("'tpu'"), std::string::npos) << lastMessage();
  EXPECT_NE(lastMessage().find("cpu"), std::string::npos) << lastMessage();
  // The previous selection stays.
  EXPECT_STREQ(msamp_rt_get_backend(), "cpu");
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_set_backend(nullptr), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  EXPECT_EQ(msamp_rt_set_backend("cpu"), MSAMP_RT_OK);
  expectNoError();
}

TEST_F(ErrorTest, ErrorsAreStickyUntilCleared) {
  Tensor<float> in({4}, 1.0f);
  Tensor<uint8_t> out({4}, 0xAA);
  auto s = scalar(1.0f);
  // First error: unsupported output dtype.
  _mlir_ciface_msamp_rt_quantize(in, s, out, MSAMP_RT_F32, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  const char *message = msamp_rt_get_last_error_message();
  const std::string first = message;
  EXPECT_NE(first.find("msamp_rt_quantize"), std::string::npos) << first;
  // A second, different error does not overwrite it, and the message
  // pointer stays valid.
  _mlir_ciface_msamp_rt_quantize(nullptr, s, out, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  EXPECT_EQ(std::string(message), first);
  // A good call still runs while an error is recorded.
  _mlir_ciface_msamp_rt_quantize(in, s, out, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(out[0], 0x38);
  msamp_rt_clear_error();
  expectNoError();
  EXPECT_STREQ(msamp_rt_get_last_error_message(), "");
}

TEST_F(ErrorTest, NullPointers) {
  Tensor<float> in({4}, 1.0f);
  Tensor<uint8_t> out({4}, 0xAA);
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_quantize(nullptr, s, out, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastMessage().find("input is null"), std::string::npos);
  msamp_rt_clear_error();

  _mlir_ciface_msamp_rt_quantize(in, nullptr, out, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastMessage().find("scale is null"), std::string::npos);
  msamp_rt_clear_error();

  msamp_rt_unranked_memref noDescriptor = {1, nullptr};
  _mlir_ciface_msamp_rt_amax(&noDescriptor, s, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();

  MemRef noData(nullptr, {4});
  _mlir_ciface_msamp_rt_amax(noData.get(), s, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lastMessage().find("null data"), std::string::npos);
  msamp_rt_clear_error();

  // An empty tensor may have a null data pointer.
  MemRef empty(nullptr, {0, 3});
  _mlir_ciface_msamp_rt_amax(empty.get(), s, MSAMP_RT_F32);
  expectNoError();
  EXPECT_EQ(s[0], 0.0f);

  for (uint8_t b : out.data)
    EXPECT_EQ(b, 0xAA);
}

TEST_F(ErrorTest, NonContiguousStrides) {
  std::vector<float> data(32, 1.0f);
  MemRef transposed(data.data(), {4, 8}, 0, {1, 4});
  Tensor<uint8_t> out({4, 8}, 0xAA);
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_quantize(transposed.get(), s, out, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_NON_CONTIGUOUS);
  EXPECT_NE(lastMessage().find("strides [1, 4]"), std::string::npos)
      << lastMessage();
  msamp_rt_clear_error();
  // A strided slice (every other element) is rejected too.
  MemRef strided(data.data(), {16}, 0, {2});
  Tensor<uint8_t> out16({16}, 0xAA);
  _mlir_ciface_msamp_rt_quantize(strided.get(), s, out16, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_NON_CONTIGUOUS);
  for (uint8_t b : out.data)
    EXPECT_EQ(b, 0xAA);
  for (uint8_t b : out16.data)
    EXPECT_EQ(b, 0xAA);
}

TEST_F(ErrorTest, ShapeAndRankMismatches) {
  Tensor<float> in({4, 2}, 1.0f);
  Tensor<uint8_t> out({2, 4}, 0xAA);
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_quantize(in, s, out, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(lastMessage().find("[4, 2]"), std::string::npos) << lastMessage();
  msamp_rt_clear_error();
  // A "scalar" with two elements.
  Tensor<float> two({2}, 1.0f);
  Tensor<uint8_t> out2({4, 2});
  _mlir_ciface_msamp_rt_quantize(in, two, out2, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
  msamp_rt_clear_error();
  // Garbage rank and negative sizes.
  std::vector<int64_t> words(8, 0);
  msamp_rt_unranked_memref garbage = {1 << 20, words.data()};
  _mlir_ciface_msamp_rt_amax(&garbage, s, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  std::vector<float> data(4);
  MemRef negative(data.data(), {-4});
  _mlir_ciface_msamp_rt_amax(negative.get(), s, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  // compute_scale needs a rank-1 history.
  Tensor<float> history2d({2, 2}, 1.0f);
  _mlir_ciface_msamp_rt_compute_scale(history2d, s, s, 0, 0, MSAMP_RT_F8E4M3FN,
                                      0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
}

TEST_F(ErrorTest, BadDtypeAndEnumCodes) {
  Tensor<uint8_t> q({4}, 0x38);
  Tensor<float> f({4});
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_dequantize(q, s, f, 42, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  EXPECT_NE(lastMessage().find("42"), std::string::npos) << lastMessage();
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_dequantize(q, s, f, MSAMP_RT_F8E4M3FN, MSAMP_RT_I32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_amax(q, s, MSAMP_RT_F8E4M3FN);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  Tensor<float> h({2}, 1.0f);
  _mlir_ciface_msamp_rt_compute_scale(h, s, s, 2, 0, MSAMP_RT_F8E4M3FN, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_compute_scale(h, s, s, 0, 0, MSAMP_RT_F32, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  EXPECT_EQ(s[0], 1.0f);
  for (float v : f.data)
    EXPECT_EQ(v, 0.0f);
}

TEST_F(ErrorTest, NegativeThreadCount) {
  msamp_rt_set_num_threads(-3);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
}

} // namespace
