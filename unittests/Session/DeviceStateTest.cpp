//===- DeviceStateTest.cpp - Session buffers in device memory -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A GPU step's session buffers are device memory that the host reaches only
// through copies (BufferDevice.h, docs/GPU.md "Session buffers in device
// memory"). Without a GPU, ProtectedDevice stands in for one: its memory is
// host pages mapped PROT_NONE except while the device works on them (a
// copy, a scan, the step), so any host access the session makes by mistake
// faults here. A step compiled for the CPU (the MLP example at O2: Adam,
// FP8 moments, delayed scaling) runs on that memory and must give the
// losses, metrics and checkpoint bytes of the same step on host memory.
//
//===----------------------------------------------------------------------===//

#include "Session.h"
#include "TestUtils.h"

#include "MSAMP/Runtime/msamp_session.h"

#include "gtest/gtest.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace {

using msamp::session::BufferDevice;
using msamp::session::Error;
using msamp::session::Session;
using msamp::session::TensorBuffer;
using msamp_session_test::readBytes;
using msamp_session_test::TempDir;

class ProtectedDevice : public BufferDevice {
public:
  ~ProtectedDevice() override {
    for (auto &[ptr, bytes] : regions_)
      munmap(ptr, bytes);
  }
  void *allocate(size_t bytes, std::string &error) override {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = (bytes + page - 1) / page * page;
    void *ptr = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                     0); // zero-filled
    if (ptr == MAP_FAILED) {
      error = "mmap failed";
      return nullptr;
    }
    regions_[ptr] = size;
    return ptr;
  }
  void release(void *ptr) override {
    auto it = regions_.find(ptr);
    ASSERT_NE(it, regions_.end()) << "freeing memory the device never gave";
    munmap(ptr, it->second);
    regions_.erase(it);
  }
  std::string copy(void *const *dst, const void *const *src,
                   const size_t *bytes, int64_t n) override {
    ++copies;
    open();
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(dst[k], src[k], bytes[k]);
    close();
    return "";
  }
  std::string findAllOnes(const void *const *data, const int64_t *counts,
                          const int32_t *widths, const uint64_t *masks,
                          int64_t n, int64_t *first) override {
    ++scans;
    open();
    for (int64_t k = 0; k < n; ++k) {
      first[k] = -1;
      for (int64_t i = 0; i < counts[k] && first[k] < 0; ++i) {
        uint64_t bits = 0;
        std::memcpy(&bits, static_cast<const char *>(data[k]) + i * widths[k],
                    static_cast<size_t>(widths[k]));
        if ((bits & masks[k]) == masks[k])
          first[k] = i;
      }
    }
    close();
    return "";
  }
  std::string memoryInfo(size_t &freeBytes, size_t &totalBytes) override {
    freeBytes = freeBytes_;
    totalBytes = 2 * freeBytes_;
    return "";
  }
  void run(const std::function<void()> &work) override {
    ++runs;
    open();
    work();
    close();
  }
  void synchronize() override {}

  size_t freeBytes_ = size_t(1) << 40;
  int copies = 0, scans = 0, runs = 0;

private:
  void protect(int prot) {
    for (auto &[ptr, bytes] : regions_)
      ASSERT_EQ(mprotect(ptr, bytes, prot), 0);
  }
  void open() { protect(PROT_READ | PROT_WRITE); }
  void close() { protect(PROT_NONE); }
  std::map<void *, size_t> regions_;
};

/// `model` compiled for the CPU at `level` into `dir`.
void compileStep(const std::string &dir,
                 const std::string &model = MSAMP_MLP_MODEL,
                 const std::string &level = "O2") {
  const std::string cmd = std::string("'") + MSAMP_COMPILE_PATH + "' '" +
                          model + "' --opt-level " + level + " -o '" + dir +
                          "' > '" + dir + ".log' 2>&1";
  const int status = std::system(cmd.c_str());
  const std::vector<uint8_t> log = readBytes(dir + ".log");
  ASSERT_EQ(status, 0) << std::string(log.begin(), log.end());
}

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    Error e_ = (expr);                                                         \
    ASSERT_FALSE(e_) << e_.message();                                          \
  } while (false)

/// What one run of the scenario below leaves: every value the host reads.
struct Outcome {
  std::vector<float> losses, gradNorms;
  std::vector<int64_t> steps;
  std::vector<uint8_t> checkpoint, resumed, weights;
  std::vector<float> param;
  std::string checksum;
};

/// init -> 2 steps -> save -> step -> load -> a skipped step (an Inf
/// input) -> an evaluation -> 2 steps -> save, and the C API's copies.
void runScenario(Session &s, const TempDir &dir, const std::string &tag,
                 Outcome &out) {
  ASSERT_OK(s.initialize(7, nullptr, nullptr));
  auto step = [&](int64_t k, uint32_t flags = 0) {
    ASSERT_OK(s.syntheticBatch(7, k, 2));
    float loss = 0;
    ASSERT_OK(s.step(1e-2f * static_cast<float>(k), flags, loss));
    float norm = 0;
    ASSERT_OK(s.metricValue("grad_norm", norm));
    out.losses.push_back(loss);
    out.gradNorms.push_back(norm);
    out.steps.push_back(s.completedSteps());
  };
  ASSERT_NO_FATAL_FAILURE(step(1));
  ASSERT_NO_FATAL_FAILURE(step(2));
  const std::string ckpt = dir.file(tag + ".safetensors");
  ASSERT_OK(s.save(ckpt));
  ASSERT_NO_FATAL_FAILURE(step(3));
  ASSERT_OK(s.load(ckpt));
  out.steps.push_back(s.completedSteps());
  // A non-finite input: refused before the step, counted as skipped.
  std::vector<float> x(12, 1.0f);
  x[5] = std::numeric_limits<float>::infinity();
  ASSERT_OK(s.setInput("x", x.data(), 48));
  float loss = 0;
  ASSERT_OK(s.step(1e-2f, MSAMP_STEP_SKIP_NONFINITE, loss));
  EXPECT_EQ(s.numSkipped(), 1);
  EXPECT_NE(s.lastSkipReason().find("'x' holds inf at element 5"),
            std::string::npos)
      << s.lastSkipReason();
  out.steps.push_back(s.completedSteps());
  ASSERT_NO_FATAL_FAILURE(step(4, MSAMP_STEP_EVAL));
  ASSERT_NO_FATAL_FAILURE(step(5));
  // The C API's copy-in: a param written between steps is what the next
  // step reads.
  std::vector<float> bias = {0.5f, -0.25f, 0.125f, 1.0f, -1.0f};
  ASSERT_OK(s.writeTensor("fc1.bias", bias.data(), 20));
  std::vector<float> back(5, 0.0f);
  ASSERT_OK(s.readTensor("fc1.bias", back.data(), 20));
  EXPECT_EQ(back, bias);
  ASSERT_NO_FATAL_FAILURE(step(6));
  ASSERT_OK(s.save(dir.file(tag + "-resumed.safetensors")));
  ASSERT_OK(s.exportWeights(dir.file(tag + "-weights.safetensors")));
  out.checkpoint = readBytes(ckpt);
  out.resumed = readBytes(dir.file(tag + "-resumed.safetensors"));
  out.weights = readBytes(dir.file(tag + "-weights.safetensors"));
  out.param.assign(15, 0.0f);
  ASSERT_OK(s.readParam("fc1.weight", out.param.data(), 15));
  out.checksum = s.stateChecksum(false);
}

/// The scenario on host memory and on a protected device, compiled into
/// `step`: every value the host reads is the same.
void expectDeviceRunEqualsHostRun(const TempDir &dir, const std::string &step) {
  ProtectedDevice device; // outlives the session
  std::unique_ptr<Session> host, onDevice;
  ASSERT_OK(Session::open(step, host));
  ASSERT_OK(Session::open(step, onDevice, &device));
  for (const auto &buffer : onDevice->state())
    ASSERT_TRUE(buffer->onDevice()) << buffer->spec().name;
  for (const auto &buffer : onDevice->inputs())
    ASSERT_TRUE(buffer->onDevice()) << buffer->spec().name;
  for (const auto &buffer : onDevice->metrics())
    ASSERT_TRUE(buffer->onDevice()) << buffer->spec().name;

  Outcome a, b;
  ASSERT_NO_FATAL_FAILURE(runScenario(*host, dir, "host", a));
  ASSERT_NO_FATAL_FAILURE(runScenario(*onDevice, dir, "device", b));
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(a.gradNorms, b.gradNorms);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.steps, (std::vector<int64_t>{1, 2, 3, 2, 3, 3, 4, 5}));
  ASSERT_FALSE(a.checkpoint.empty());
  EXPECT_TRUE(a.checkpoint == b.checkpoint);
  EXPECT_TRUE(a.resumed == b.resumed);
  EXPECT_TRUE(a.weights == b.weights);
  EXPECT_EQ(a.param, b.param);
  EXPECT_EQ(a.checksum, b.checksum);
  // The losses moved: the steps did train.
  EXPECT_NE(a.losses[0], a.losses[1]);
  // 6 steps ran on the device (the skipped one did not); every access went
  // through the device's copies and scans.
  EXPECT_EQ(device.runs, 6);
  EXPECT_GT(device.copies, 20);
  EXPECT_GT(device.scans, 0);
}

TEST(DeviceState, StateRoundTripEqualsHostMemoryByteForByte) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(compileStep(dir.file("mlp")));
  expectDeviceRunEqualsHostRun(dir, dir.file("mlp"));
}

// The same MLP trained with SGD (Nesterov momentum, weight decay): a GPU
// SGD step has no graph blocker now, so its session buffers, momentum
// buffers included, are device memory too (docs/GPU.md "No managed memory,
// every step a CUDA graph"); the session path must give the host's bytes.
TEST(DeviceState, AnSgdStateRoundTripEqualsHostMemoryByteForByte) {
  TempDir dir;
  const std::vector<uint8_t> bytes = readBytes(MSAMP_MLP_MODEL);
  std::string text(bytes.begin(), bytes.end());
  const std::string from = "msamp.optimizer = {";
  const size_t begin = text.find(from);
  const size_t end = text.find("}} {", begin);
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  text.replace(begin, end + 1 - begin,
               "msamp.optimizer = {kind = \"sgd\", lr = 1.0e-02 : f64, "
               "momentum = 0.9 : f64, nesterov = true, weight_decay = 1.0e-02 "
               ": f64}");
  const std::string model = dir.file("mlp-sgd.mlir");
  {
    std::ofstream out(model, std::ios::binary);
    out << text;
  }
  ASSERT_NO_FATAL_FAILURE(compileStep(dir.file("sgd"), model));
  // Two state tensors per parameter: the weight and its momentum buffer.
  const std::vector<uint8_t> manifest =
      readBytes(dir.file("sgd") + "/manifest.json");
  ASSERT_NE(std::string(manifest.begin(), manifest.end()).find("momentum"),
            std::string::npos);
  expectDeviceRunEqualsHostRun(dir, dir.file("sgd"));
}

// The device's memory is the device's: a host access faults, so a session
// that forgot a copy would crash these tests rather than read stale bytes.
TEST(DeviceStateDeathTest, AHostAccessToDeviceMemoryFaults) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(compileStep(dir.file("mlp")));
  ProtectedDevice device; // outlives the session
  std::unique_ptr<Session> s;
  ASSERT_OK(Session::open(dir.file("mlp"), s, &device));
  TensorBuffer *bias = s->findState("fc1.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_NE(bias->stepData(), bias->data());
  EXPECT_DEATH(
      {
        volatile float v = *static_cast<volatile float *>(bias->stepData());
        (void)v;
      },
      "");
}

// The open-time check counts the state twice (its copy), the inputs and
// the arena against the device's free memory, naming both.
TEST(DeviceState, AStateThatDoesNotFitIsRefusedAtOpen) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(compileStep(dir.file("mlp")));
  std::unique_ptr<Session> host;
  ASSERT_OK(Session::open(dir.file("mlp"), host));
  int64_t required = 0;
  for (const auto &buffer : host->state())
    required += 2 * buffer->spec().numBytes;
  for (const auto &buffer : host->inputs())
    required += buffer->spec().numBytes;
  ProtectedDevice device; // outlives the session
  device.freeBytes_ = static_cast<size_t>(required) - 1;
  std::unique_ptr<Session> s;
  Error e = Session::open(dir.file("mlp"), s, &device);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(e.message().find("need " + std::to_string(required) + " bytes"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("has " + std::to_string(required - 1) + " bytes"),
            std::string::npos)
      << e.message();
  device.freeBytes_ = static_cast<size_t>(required);
  ASSERT_OK(Session::open(dir.file("mlp"), s, &device));
}

// The host copies take host memory: a state beyond the host's is refused
// at open before anything is allocated (test/Tools/msamp-run/
// memory-limit.mlir's 1 TiB param, with its Adam moments), even where the
// device would have room.
TEST(DeviceState, HostCopiesThatDoNotFitAreRefusedAtOpen) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(
      compileStep(dir.file("big"), MSAMP_MEMORY_LIMIT_MODEL, "O0"));
  ProtectedDevice device; // outlives the session
  device.freeBytes_ = size_t(1) << 60;
  std::unique_ptr<Session> s;
  Error e = Session::open(dir.file("big"), s, &device);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_OUT_OF_MEMORY);
  // The state (w and two moments of 2^40 bytes, the step) and the inputs.
  EXPECT_NE(e.message().find("the host copies of the state and the inputs (a "
                             "GPU step's buffers) need 329853488334"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("(MemAvailable)"), std::string::npos)
      << e.message();
}

// A bad id in a device input: the entry point's check refuses the step
// (it reads the input's host copy on a GPU), the state is restored from
// the device copy and no step is counted; the next good batch trains.
TEST(DeviceState, ABadIndexInputIsRefusedAndUndone) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(
      compileStep(dir.file("emb"), MSAMP_EMBEDDING_GRAD_MODEL, "O0"));
  ProtectedDevice device; // outlives the session
  std::unique_ptr<Session> host, s;
  ASSERT_OK(Session::open(dir.file("emb"), host));
  ASSERT_OK(Session::open(dir.file("emb"), s, &device));
  for (Session *session : {host.get(), s.get()}) {
    ASSERT_OK(session->initialize(7, nullptr, nullptr));
    ASSERT_OK(session->syntheticBatch(7, 1, 4099));
    float loss = 0;
    ASSERT_OK(session->step(1.0f, 0, loss));
    std::vector<int64_t> ids(512, 3);
    ids[100] = 4099;
    ASSERT_OK(session->setInput("ids", ids.data(), 512 * 8));
    Error e = session->step(1.0f, 0, loss);
    ASSERT_TRUE(e);
    EXPECT_NE(e.message().find("input 'ids': value 4099 at [1, 36] is "
                               "outside the valid range [0, 4099)"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(session->completedSteps(), 1);
    ASSERT_OK(session->syntheticBatch(7, 2, 4099));
    ASSERT_OK(session->step(1.0f, 0, loss));
  }
  EXPECT_EQ(host->stateChecksum(false), s->stateChecksum(false));
  EXPECT_EQ(device.runs, 3);
}

// A computed index out of range (msamp.check_index) in a step on device
// memory: the check is deferred to the step's wait (the session's
// msamp_rt_index_checks_begin/_end; filled on the host here, where no CUDA
// backend is current, by the CUDA kernel on a GPU), the session refuses
// the step with the message a host-memory session gives, the state is
// restored and the next good batch trains.
TEST(DeviceState, AComputedIndexOutOfRangeIsRefusedAfterTheStepsWait) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(
      compileStep(dir.file("ci"), MSAMP_COMPUTED_INDEX_MODEL, "O0"));
  ProtectedDevice device; // outlives the session
  std::unique_ptr<Session> host, s;
  ASSERT_OK(Session::open(dir.file("ci"), host));
  ASSERT_OK(Session::open(dir.file("ci"), s, &device));
  std::string messages[2];
  int k = 0;
  for (Session *session : {host.get(), s.get()}) {
    ASSERT_OK(session->initialize(7, nullptr, nullptr));
    std::vector<int64_t> ids = {0, 1, 2, 3, 4, 5, 6, 0};
    ASSERT_OK(session->setInput("input_ids", ids.data(), 8 * 8));
    float loss = 0;
    ASSERT_OK(session->step(1.0f, 0, loss));
    ids[6] = 8; // 11 after the graph adds 3: [1, 2] of the 10-row table
    ASSERT_OK(session->setInput("input_ids", ids.data(), 8 * 8));
    Error e = session->step(1.0f, 0, loss);
    ASSERT_TRUE(e);
    messages[k++] = e.message();
    EXPECT_NE(e.message().find("computed-index.mlir:25:10: value 11 at "
                               "[1, 2] is outside the valid range [0, 10)"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(session->completedSteps(), 1);
    ids[6] = 6;
    ASSERT_OK(session->setInput("input_ids", ids.data(), 8 * 8));
    ASSERT_OK(session->step(1.0f, 0, loss));
    EXPECT_EQ(session->completedSteps(), 2);
  }
  EXPECT_EQ(messages[0], messages[1]);
  EXPECT_EQ(host->stateChecksum(false), s->stateChecksum(false));
  EXPECT_EQ(device.runs, 3);
}

// The C API's copies on a CPU session (the same calls serve a GPU one):
// read and write by name, sizes checked, info's data the tensor itself.
TEST(DeviceState, CApiReadsAndWritesTensors) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(compileStep(dir.file("mlp")));
  msamp_session *s = nullptr;
  ASSERT_EQ(msamp_session_open(dir.file("mlp").c_str(), &s), MSAMP_OK)
      << msamp_last_error_message();
  ASSERT_EQ(msamp_session_init(s, 3, nullptr, nullptr), MSAMP_OK)
      << msamp_last_error_message();
  float bias[2] = {0.75f, -2.0f};
  ASSERT_EQ(msamp_session_write_tensor(s, "fc2.bias", bias, 8), MSAMP_OK)
      << msamp_last_error_message();
  float back[2] = {0, 0};
  ASSERT_EQ(msamp_session_read_tensor(s, "fc2.bias", back, 8), MSAMP_OK);
  EXPECT_EQ(back[0], 0.75f);
  EXPECT_EQ(back[1], -2.0f);
  msamp_tensor_info info;
  ASSERT_EQ(msamp_session_find(s, "fc2.bias", &info), MSAMP_OK);
  EXPECT_EQ(std::memcmp(info.data, bias, 8), 0);
  float x[12] = {1, 2, 3};
  ASSERT_EQ(msamp_session_write_tensor(s, "x", x, 48), MSAMP_OK);
  ASSERT_EQ(msamp_session_find(s, "x", &info), MSAMP_OK);
  EXPECT_EQ(std::memcmp(info.data, x, 48), 0);
  EXPECT_EQ(msamp_session_read_tensor(s, "fc2.bias", back, 4),
            MSAMP_ERROR_MISMATCH);
  EXPECT_NE(std::string(msamp_last_error_message())
                .find("'fc2.bias' has 8 bytes, the caller's buffer 4"),
            std::string::npos)
      << msamp_last_error_message();
  EXPECT_EQ(msamp_session_write_tensor(s, "nothing", bias, 8),
            MSAMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(msamp_session_read_tensor(s, nullptr, back, 8),
            MSAMP_ERROR_INVALID_ARGUMENT);
  msamp_session_close(s);
}

} // namespace
