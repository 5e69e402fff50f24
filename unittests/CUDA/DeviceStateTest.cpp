//===- DeviceStateTest.cpp - A GPU session's buffers in device memory -----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// docs/GPU.md "Session buffers in device memory": a step compiled with
// --target cuda whose host code touches no buffer gets its state, inputs,
// loss and metrics (and the state's copy) as cudaMalloc'd device memory,
// which the session reaches only through copies. On a GPU:
//
//  * every session buffer is cudaMemoryTypeDevice (no managed memory);
//  * the state survives init -> steps -> save -> load -> steps byte for
//    byte: a run resumed from its own checkpoint in the middle gives the
//    losses and checkpoint of a straight run (the MLP's eager and graph
//    steps are deterministic: CudaGraphStep.ReplayedStepsMatchEagerSteps-
//    Bitwise), and the C API's copies read what the device holds;
//  * the entry point's index checks read the inputs' host copies: a bad id
//    is refused before the step (a host read of the device buffer would
//    fault instead).
//
// The steps: the kit's precompiled ones ($MSAMP_TEST_CUDA_STEPS/mlp-o2,
// lm-o2, which run.py sets), else the MLP compiled here with the build's
// msamp-compile; without either a test skips naming what is missing. The
// same scenario without a GPU: unittests/Session/DeviceStateTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "Session.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using msamp::session::Error;
using msamp::session::Session;
using msamp::session::TensorBuffer;

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    Error e_ = (expr);                                                         \
    ASSERT_FALSE(e_) << e_.message();                                          \
  } while (false)

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string scratchDir(const std::string &name) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") +
                    "/msamp-device-state-" + name + "-" +
                    std::to_string(::getpid());
  EXPECT_EQ(
      std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()),
      0);
  return dir;
}

/// The directory of step `name` (mlp-o2, mlp-sgd-o2, lm-o2): the kit's, or
/// for the MLP one compiled into `scratch`; "" with `why` when there is
/// none.
std::string stepDir(const std::string &name, const std::string &scratch,
                    std::string &why) {
  if (const char *steps = std::getenv("MSAMP_TEST_CUDA_STEPS");
      steps && *steps) {
    const std::string dir = std::string(steps) + "/" + name;
    if (::access((dir + "/manifest.json").c_str(), R_OK) == 0)
      return dir;
    why = "no " + dir + "/manifest.json";
    return "";
  }
  if (name != "mlp-o2" || ::access(MSAMP_COMPILE_PATH, X_OK) != 0) {
    why = "no precompiled step " + name +
          " (set MSAMP_TEST_CUDA_STEPS, as the GPU kit does) and no "
          "msamp-compile at " MSAMP_COMPILE_PATH;
    return "";
  }
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const std::string chip = major == 8 && minor == 9 ? "sm_89" : "sm_90";
  const std::string dir = scratch + "/mlp-o2";
  const std::string cmd = std::string("'") + MSAMP_COMPILE_PATH + "' '" +
                          MSAMP_MLP_MODEL +
                          "' --opt-level O2 --target cuda --chip " + chip +
                          " -o '" + dir + "' > '" + dir + ".log' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    why = "compiling the MLP failed: " + readFile(dir + ".log");
    return "";
  }
  return dir;
}

#define MSAMP_REQUIRE_STEP(var, name, scratch)                                 \
  std::string var;                                                             \
  do {                                                                         \
    std::string why_;                                                          \
    var = stepDir(name, scratch, why_);                                        \
    if (var.empty())                                                           \
      GTEST_SKIP() << why_;                                                    \
  } while (false)

class CudaDeviceState : public msamp_cuda_test::CudaTest {
protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    use("cuda");
    scratch_ = scratchDir(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    (void)std::system(("rm -rf '" + scratch_ + "'").c_str());
    CudaTest::TearDown();
  }
  std::string scratch_;
};

bool isDeviceMemory(const void *ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice;
}

/// Opens step `dir`, checks that every session buffer is device memory
/// with a host copy, and runs one step (the caller checks the runtime's
/// recorded error).
void expectEveryBufferOnDevice(const std::string &dir) {
  std::unique_ptr<Session> s;
  ASSERT_OK(Session::open(dir, s));
  std::vector<const TensorBuffer *> buffers = {&s->lossBuffer()};
  for (const auto *list : {&s->state(), &s->inputs(), &s->metrics()})
    for (const auto &buffer : *list)
      buffers.push_back(buffer.get());
  for (const TensorBuffer *buffer : buffers) {
    EXPECT_TRUE(buffer->onDevice()) << buffer->spec().name;
    EXPECT_TRUE(isDeviceMemory(buffer->stepData())) << buffer->spec().name;
    // The host copy is host memory, not a mapping of the device's.
    EXPECT_FALSE(isDeviceMemory(buffer->data())) << buffer->spec().name;
  }
  ASSERT_OK(s->initialize(7, nullptr, nullptr));
  ASSERT_OK(s->syntheticBatch(7, 1, 2));
  float loss = 0;
  ASSERT_OK(s->step(1e-3f, 0, loss));
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(s->completedSteps(), 1);
  float norm = -1;
  ASSERT_OK(s->metricValue("grad_norm", norm));
  EXPECT_GT(norm, 0.0f);
}

TEST_F(CudaDeviceState, EverySessionBufferIsDeviceMemory) {
  MSAMP_REQUIRE_STEP(dir, "mlp-o2", scratch_);
  expectEveryBufferOnDevice(dir);
  expectNoError("the session's step");
}

// An SGD step (the kit's mlp-sgd-o2): SGD reads step and lr on the device,
// so its step has no graph blocker and no managed memory either.
TEST_F(CudaDeviceState, AnSgdStepsBuffersAreDeviceMemoryToo) {
  MSAMP_REQUIRE_STEP(dir, "mlp-sgd-o2", scratch_);
  expectEveryBufferOnDevice(dir);
  expectNoError("the session's step");
}

/// Steps `first`..`last` from synthetic batch k with lr 1e-3 * k (a
/// replayed graph must read each step's lr); their losses.
void runSteps(Session &s, int first, int last, std::vector<float> &losses) {
  for (int k = first; k <= last; ++k) {
    ASSERT_OK(s.syntheticBatch(7, k, 2));
    float loss = 0;
    ASSERT_OK(s.step(1e-3f * static_cast<float>(k), 0, loss));
    losses.push_back(loss);
  }
}

TEST_F(CudaDeviceState, AResumedRunMatchesAStraightRunByteForByte) {
  MSAMP_REQUIRE_STEP(dir, "mlp-o2", scratch_);
  std::vector<float> straight, resumed;
  {
    std::unique_ptr<Session> s;
    ASSERT_OK(Session::open(dir, s));
    ASSERT_OK(s->initialize(7, nullptr, nullptr));
    ASSERT_NO_FATAL_FAILURE(runSteps(*s, 1, 6, straight));
    ASSERT_OK(s->save(scratch_ + "/straight.safetensors"));
  }
  {
    std::unique_ptr<Session> s;
    ASSERT_OK(Session::open(dir, s));
    ASSERT_OK(s->initialize(7, nullptr, nullptr));
    ASSERT_NO_FATAL_FAILURE(runSteps(*s, 1, 3, resumed));
    ASSERT_OK(s->save(scratch_ + "/half.safetensors"));
    // A step on, then back: load must overwrite the device's state.
    std::vector<float> discarded;
    ASSERT_NO_FATAL_FAILURE(runSteps(*s, 4, 4, discarded));
    ASSERT_OK(s->load(scratch_ + "/half.safetensors"));
    EXPECT_EQ(s->completedSteps(), 3);
    ASSERT_NO_FATAL_FAILURE(runSteps(*s, 4, 6, resumed));
    ASSERT_OK(s->save(scratch_ + "/resumed.safetensors"));
    // The C API's copy-out reads the device's values.
    const TensorBuffer *bias = s->findState("fc1.bias");
    ASSERT_NE(bias, nullptr);
    std::vector<char> bytes(bias->numBytes());
    ASSERT_OK(s->readTensor("fc1.bias", bytes.data(),
                            static_cast<int64_t>(bytes.size())));
    std::vector<char> written(bytes.size(), 0);
    ASSERT_OK(s->writeTensor("fc1.bias", written.data(),
                             static_cast<int64_t>(written.size())));
    std::vector<char> back(bytes.size(), 1);
    ASSERT_OK(s->readTensor("fc1.bias", back.data(),
                            static_cast<int64_t>(back.size())));
    EXPECT_EQ(back, written);
  }
  ASSERT_EQ(straight.size(), 6u);
  EXPECT_EQ(straight, resumed);
  const std::string a = readFile(scratch_ + "/straight.safetensors");
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(a == readFile(scratch_ + "/resumed.safetensors"))
      << "the resumed run's checkpoint differs from the straight run's";
  expectNoError("the sessions' steps");
}

TEST_F(CudaDeviceState, IndexChecksReadTheInputsHostCopies) {
  MSAMP_REQUIRE_STEP(dir, "lm-o2", scratch_);
  std::unique_ptr<Session> s;
  ASSERT_OK(Session::open(dir, s));
  ASSERT_OK(s->initialize(7, nullptr, nullptr));
  ASSERT_OK(s->syntheticBatch(7, 1, 2));
  float loss = 0;
  ASSERT_OK(s->step(1e-3f, 0, loss));
  TensorBuffer *ids = nullptr;
  for (const auto &input : s->inputs())
    if (input->spec().role == "input" &&
        input->spec().dtype == msamp::session::ElementType::I64)
      ids = input.get();
  ASSERT_NE(ids, nullptr) << "the LM has no i64 input";
  std::vector<int64_t> bad(static_cast<size_t>(ids->spec().numElements), 0);
  bad.back() = int64_t(1) << 40;
  ASSERT_OK(s->setInput(ids->spec().name, bad.data(),
                        static_cast<int64_t>(bad.size() * sizeof(int64_t))));
  Error e = s->step(1e-3f, 0, loss);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("value 1099511627776"), std::string::npos)
      << e.message();
  EXPECT_EQ(s->completedSteps(), 1);
  msamp_rt_clear_error();
}

} // namespace
