//===- CApiTest.cpp - The C boundary of libmsamp_session ------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The C API without a compiled step: status codes and messages of a failed
// open, null arguments, the learning-rate schedules and the hash helpers.
// Opening a real step is tested end to end by test/Tools/msamp-run.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "MSAMP/Runtime/msamp_session.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>

using namespace msamp_session_test;

extern "C" int msamp_session_test_c_header(void);

namespace {

TEST(CApiTest, HeaderIsPlainC) { EXPECT_EQ(msamp_session_test_c_header(), 1); }

TEST(CApiTest, OpenReportsAMissingManifest) {
  TempDir dir;
  msamp_session *s = reinterpret_cast<msamp_session *>(0x1);
  EXPECT_EQ(msamp_session_open(dir.file("nothing").c_str(), &s),
            MSAMP_ERROR_MANIFEST);
  EXPECT_EQ(s, nullptr);
  std::string message = msamp_last_error_message();
  EXPECT_NE(message.find("nothing/manifest.json"), std::string::npos)
      << message;
}

TEST(CApiTest, OpenReportsAMissingLibrary) {
  TempDir dir;
  writeText(dir.file("manifest.json"),
            R"({"abi_version":3,"level":"O0","world_size":1,"state":[],
                "inputs":[{"name":"lr","role":"hyperparam","shape":[],
                           "dtype":"f32","index":0}]})");
  writeText(dir.file("train_step.mlir"), "module {}\n");
  msamp_session *s = nullptr;
  EXPECT_EQ(msamp_session_open(dir.file("").c_str(), &s), MSAMP_ERROR_LOAD);
  std::string message = msamp_last_error_message();
  EXPECT_NE(message.find("train_step.so"), std::string::npos) << message;
  msamp_session_close(nullptr); // accepted
}

TEST(CApiTest, NullArguments) {
  EXPECT_EQ(msamp_session_open(nullptr, nullptr), MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(msamp_last_error_message()).find("null"),
            std::string::npos);
  float loss;
  EXPECT_EQ(msamp_session_step(nullptr, 0.1f, 0, &loss),
            MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(msamp_session_save(nullptr, "x"), MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(msamp_session_load(nullptr, "x"), MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(msamp_session_num_state(nullptr), 0);
  EXPECT_EQ(msamp_session_set_cuda_graphs(nullptr, 1),
            MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(msamp_session_cuda_graph_steps(nullptr), 0);
  EXPECT_STREQ(msamp_session_cuda_graph_note(nullptr), "");
  EXPECT_STREQ(msamp_status_name(MSAMP_ERROR_MISMATCH), "MSAMP_ERROR_MISMATCH");
  EXPECT_STREQ(msamp_version(), MSAMP_TEST_VERSION);
}

TEST(CApiTest, LearningRateSchedules) {
  EXPECT_DOUBLE_EQ(msamp_lr_at(MSAMP_LR_CONSTANT, 0.1, 0, 100, 1), 0.1);
  EXPECT_DOUBLE_EQ(msamp_lr_at(MSAMP_LR_CONSTANT, 0.1, 0, 100, 77), 0.1);
  // Linear warm-up over 4 steps, for both schedules.
  for (msamp_lr_schedule k : {MSAMP_LR_CONSTANT, MSAMP_LR_COSINE}) {
    EXPECT_DOUBLE_EQ(msamp_lr_at(k, 0.1, 4, 100, 1), 0.025);
    EXPECT_DOUBLE_EQ(msamp_lr_at(k, 0.1, 4, 100, 4), 0.1);
  }
  // Cosine: the full rate right after the warm-up, half way at the middle,
  // decreasing to near 0 at the last step.
  EXPECT_DOUBLE_EQ(msamp_lr_at(MSAMP_LR_COSINE, 0.1, 4, 104, 5), 0.1);
  EXPECT_NEAR(msamp_lr_at(MSAMP_LR_COSINE, 0.1, 4, 104, 55), 0.05, 1e-12);
  double prev = 1.0;
  for (int64_t s = 5; s <= 104; ++s) {
    double lr = msamp_lr_at(MSAMP_LR_COSINE, 0.1, 4, 104, s);
    EXPECT_LE(lr, prev);
    prev = lr;
  }
  EXPECT_GT(prev, 0.0);
  EXPECT_LT(prev, 1e-4);
  EXPECT_DOUBLE_EQ(msamp_lr_at(MSAMP_LR_COSINE, 0.1, 0, 10, 500), 0.0);
}

TEST(CApiTest, Hashes) {
  char hex[65];
  msamp_sha256("abc", 3, hex);
  EXPECT_STREQ(
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDir dir;
  EXPECT_EQ(msamp_sha256_file(dir.file("missing").c_str(), hex),
            MSAMP_ERROR_IO);
  EXPECT_NE(std::string(msamp_last_error_message()).find("missing"),
            std::string::npos);
}

// The one spelling of an O3 shard's path (Checkpoint.cpp writes and reads
// it, msamp-run removes temporary ones through this function).
TEST(CApiTest, CheckpointShardPath) {
  char buf[64];
  EXPECT_EQ(
      msamp_checkpoint_shard_path("run/ck.safetensors", 3, buf, sizeof(buf)),
      24);
  EXPECT_STREQ(buf, "run/ck.rank3.safetensors");
  // No extension, or a dot only in a directory name: appended.
  msamp_checkpoint_shard_path("run.d/ck", 12, buf, sizeof(buf));
  EXPECT_STREQ(buf, "run.d/ck.rank12");
  // The length is returned even when `out` is too short (snprintf).
  EXPECT_EQ(msamp_checkpoint_shard_path("ck.st", 0, nullptr, 0), 11);
  char small[6];
  EXPECT_EQ(msamp_checkpoint_shard_path("ck.st", 0, small, sizeof(small)), 11);
  EXPECT_STREQ(small, "ck.ra");
  EXPECT_EQ(msamp_checkpoint_shard_path("ck.st", -1, buf, sizeof(buf)), -1);
  EXPECT_NE(std::string(msamp_last_error_message()).find("negative rank"),
            std::string::npos);
  EXPECT_EQ(msamp_checkpoint_shard_path(nullptr, 0, buf, sizeof(buf)), -1);
}

} // namespace
