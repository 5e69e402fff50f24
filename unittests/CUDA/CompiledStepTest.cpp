//===- CompiledStepTest.cpp - A whole GPU-compiled step vs the CPU --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// End-to-end test of the compiler's GPU target (--msamp-lower-to-gpu,
// docs/RuntimeABI.md 13): msamp-run trains the same model from the same
// seed and synthetic batches twice, once compiled for the CPU with
// --backend cpu and once with --backend cuda (msamp-compile --target cuda:
// elementwise and reduction linalg as generated PTX kernels, GEMMs in
// cuBLASLt, buffers in managed memory), and the per-step losses must agree.
//
// Tolerances: at O0 the steps differ only in f32 accumulation order
// (cuBLASLt vs OpenBLAS, per-thread row sums) and libdevice vs libm
// transcendental functions (a few ulp); at O2 a value on an FP8 rounding
// boundary may round the other way and the difference grows over steps.
//
// EmbeddingGradMatchesCpuBitwise compares checkpoints instead: a graph
// whose only gradient, an embedding's, is exact on both targets.
//
// Without an sm_89+ device every test skips by name with the reason. The
// tools and inputs are found at the build's paths unless the environment
// names others (MSAMP_RUN, MSAMP_TEST_MLP_MODEL,
// MSAMP_TEST_EMBEDDING_GRAD_MODEL, MSAMP_TEST_PYTHON). The GPU kit has no
// compiler: there every test runs the kit's steps compiled ahead for both
// backends ($MSAMP_TEST_CUDA_STEPS/unit, scripts/gpu-kit.sh).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_session.h"

#include "gtest/gtest.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

/// $VAR if set, else the build's value.
std::string fromEnv(const char *var, const char *buildValue) {
  const char *value = std::getenv(var);
  return value && *value ? value : buildValue;
}

std::string msampRun() { return fromEnv("MSAMP_RUN", MSAMP_RUN_PATH); }

/// msamp-compile: $MSAMP_COMPILE, else next to msamp-run.
std::string msampCompile() {
  const char *compile = std::getenv("MSAMP_COMPILE");
  const std::string run = msampRun();
  return compile && *compile
             ? compile
             : run.substr(0, run.rfind('/') + 1) + "msamp-compile";
}

/// The GPU kit's steps for these tests ($MSAMP_TEST_CUDA_STEPS/unit, each
/// model compiled ahead for both backends by scripts/gpu-kit.sh), used
/// where this copy has no msamp-compile: the kit carries no compiler (its
/// MLIR and LLVM libraries alone are several times the kit's size).
std::string precompiledSteps() {
  const char *steps = std::getenv("MSAMP_TEST_CUDA_STEPS");
  if (!steps || !*steps || ::access(msampCompile().c_str(), X_OK) == 0)
    return "";
  const std::string unit = std::string(steps) + "/unit";
  return ::access(unit.c_str(), R_OK) == 0 ? unit : "";
}

/// What msamp-run is given for `model` at `level` on `backend`: the graph,
/// compiled when the run starts, or the kit's step compiled ahead from it,
/// named <model's file name without extension>-<level>-<backend>.
std::string stepFor(const std::string &model, const std::string &level,
                    const std::string &backend) {
  const std::string unit = precompiledSteps();
  if (unit.empty())
    return model;
  std::string stem = model.substr(model.rfind('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  return unit + "/" + stem + "-" + level + "-" + backend;
}

/// Why this copy cannot run the steps ("" when it can): msamp-run needs
/// msamp-compile next to it or as $MSAMP_COMPILE, or the kit's steps.
std::string missingTools() {
  const std::string run = msampRun();
  if (::access(run.c_str(), X_OK) != 0)
    return "msamp-run not found at " + run + " (set MSAMP_RUN)";
  const std::string compiler = msampCompile();
  if (::access(compiler.c_str(), X_OK) != 0 && precompiledSteps().empty())
    return "msamp-compile not found at " + compiler +
           " (set MSAMP_COMPILE, or MSAMP_TEST_CUDA_STEPS to the GPU kit's "
           "steps)";
  return "";
}

#define MSAMP_REQUIRE_TOOLS()                                                  \
  do {                                                                         \
    const std::string missing_ = missingTools();                               \
    if (!missing_.empty())                                                     \
      GTEST_SKIP() << missing_;                                                \
  } while (false)

/// The model's graph, or with the kit's steps the step of `level` for
/// both backends.
#define MSAMP_REQUIRE_STEP(model, level)                                       \
  do {                                                                         \
    for (const char *backend_ : {"cpu", "cuda"}) {                             \
      const std::string path_ = stepFor(model, level, backend_);               \
      if (::access(path_.c_str(), R_OK) != 0)                                  \
        GTEST_SKIP() << "input not found: " << path_;                          \
    }                                                                          \
  } while (false)

std::string testDir(const std::string &name) {
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") +
                    "/msamp-compiled-step-" + name + "-" +
                    std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

/// Runs `cmd` through the shell; the output goes to `log`.
int run(const std::string &cmd, const std::string &log) {
  std::string full = cmd + " > '" + log + "' 2>&1";
  return std::system(full.c_str());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The "loss" of every line of an msamp-run --log-json file.
std::vector<double> losses(const std::string &path) {
  std::vector<double> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("\"loss\": ");
    if (at != std::string::npos)
      out.push_back(std::strtod(line.c_str() + at + 8, nullptr));
  }
  return out;
}

/// sm_89 PTX for an sm_89 device, else sm_90.
std::string chipOfDevice() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major == 8 && minor == 9 ? "sm_89" : "sm_90";
}

/// msamp-run trains `model` at `level` for `steps` synthetic steps from
/// seed 7 with the CPU backend, then the CUDA one, each also given
/// `args` with BACKEND replaced by "cpu" or "cuda" (its files in `dir`).
void runOnBothBackends(const std::string &dir, const std::string &model,
                       const std::string &level, int steps,
                       const std::string &args) {
  for (std::string backend : {"cpu", "cuda"}) {
    std::string extra = args;
    for (size_t at; (at = extra.find("BACKEND")) != std::string::npos;)
      extra.replace(at, 7, backend);
    if (backend == "cuda")
      extra += " --cuda-chip " + chipOfDevice();
    const std::string log = dir + "/" + backend + ".log";
    const std::string cmd =
        std::string("MSAMP_CACHE_DIR='") + dir + "/cache' '" + msampRun() +
        "' '" + stepFor(model, level, backend) + "' --opt-level " + level +
        " --steps " + std::to_string(steps) + " --synthetic --seed 7 --quiet";
    ASSERT_EQ(run(cmd + " --backend " + backend + " " + extra, log), 0)
        << readFile(log);
  }
}

void compareCudaWithCpu(const std::string &name, const std::string &model,
                        const std::string &level, int steps, double relTol) {
  const std::string dir = testDir(name);
  runOnBothBackends(dir, model, level, steps,
                    "--log-json '" + dir + "/BACKEND.jsonl'");
  if (::testing::Test::HasFatalFailure())
    return;
  const std::vector<double> cpu = losses(dir + "/cpu.jsonl");
  const std::vector<double> cuda = losses(dir + "/cuda.jsonl");
  ASSERT_EQ(cpu.size(), static_cast<size_t>(steps));
  ASSERT_EQ(cuda.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_TRUE(std::isfinite(cuda[i])) << "step " << i + 1;
    EXPECT_LE(std::fabs(cuda[i] - cpu[i]),
              relTol * std::max(1e-6, std::fabs(cpu[i])))
        << name << " step " << i + 1 << ": cpu " << cpu[i] << ", cuda "
        << cuda[i];
  }
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

std::string mlpModel() {
  return fromEnv("MSAMP_TEST_MLP_MODEL", MSAMP_MLP_MODEL);
}

std::string python() { return fromEnv("MSAMP_TEST_PYTHON", MSAMP_PYTHON); }

/// A transformer LM graph from python/msamp/graphs (2 blocks, the tests'
/// default sizes); with the kit's steps only its name, "lm".
std::string transformerModel() {
  if (!precompiledSteps().empty())
    return "lm.mlir";
  static const std::string path = [] {
    std::string dir = testDir("lm-graph");
    std::string out = dir + "/lm.mlir";
    std::string cmd = "PYTHONPATH='" MSAMP_PYTHON_DIR "' '" + python() +
                      "' -m msamp.graphs transformer-lm -o '" + out + "'";
    EXPECT_EQ(run(cmd, dir + "/graph.log"), 0) << readFile(dir + "/graph.log");
    return out;
  }();
  return path;
}

#define MSAMP_REQUIRE_PYTHON()                                                 \
  do {                                                                         \
    if (precompiledSteps().empty() &&                                          \
        (::access(python().c_str(), X_OK) != 0 ||                              \
         ::access(MSAMP_PYTHON_DIR "/msamp/graphs", R_OK) != 0))               \
      GTEST_SKIP() << "no " << python() << " with " MSAMP_PYTHON_DIR           \
                   << "/msamp (set MSAMP_TEST_PYTHON)";                        \
  } while (false)

/// The one SGD step of test/Codegen/GPU/Inputs/embedding-grad-step.mlir,
/// whose only gradient is an embedding's computed exactly, with ids drawn
/// from the whole table: the GPU step (msamp-gpu-one-hot-scatter) must
/// save the CPU step's parameters bit for bit (docs/GPU.md "Embedding
/// gradient"), which no loss tolerance can show.
void compareCheckpointsWithCpu(const std::string &name,
                               const std::string &model,
                               const std::string &extra) {
  const std::string dir = testDir(name);
  auto common = [&](const std::string &backend) {
    return std::string("MSAMP_CACHE_DIR='") + dir + "/cache' '" + msampRun() +
           "' '" + stepFor(model, "O0", backend) +
           "' --opt-level O0 --steps 1 --synthetic --seed 7 --quiet " + extra;
  };
  ASSERT_EQ(
      run(common("cpu") + " --backend cpu --save '" + dir + "/cpu.safetensors'",
          dir + "/cpu.log"),
      0)
      << readFile(dir + "/cpu.log");
  ASSERT_EQ(run(common("cuda") + " --backend cuda --cuda-chip " +
                    chipOfDevice() + " --save '" + dir + "/cuda.safetensors'",
                dir + "/cuda.log"),
            0)
      << readFile(dir + "/cuda.log");
  // The tensors' bytes: what follows the JSON header (its length is the
  // file's first 8 bytes, little endian), which holds no values.
  auto tensorBytes = [](const std::string &file) {
    uint64_t header = 0;
    for (int i = 7; i >= 0 && file.size() >= 8; --i)
      header = header << 8 | static_cast<unsigned char>(file[i]);
    return file.size() >= 8 + header ? file.substr(8 + header) : "";
  };
  const std::string cpu = tensorBytes(readFile(dir + "/cpu.safetensors"));
  ASSERT_FALSE(cpu.empty());
  EXPECT_TRUE(cpu == tensorBytes(readFile(dir + "/cuda.safetensors")))
      << name << ": the GPU step's parameters differ from the CPU's";
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

std::string splitColumnSumModel() {
  return fromEnv("MSAMP_TEST_SPLIT_COLUMN_SUM_MODEL",
                 MSAMP_SPLIT_COLUMN_SUM_MODEL);
}

std::string constantTableModel() {
  return fromEnv("MSAMP_TEST_CONSTANT_TABLE_MODEL", MSAMP_CONSTANT_TABLE_MODEL);
}

std::string embeddingGradModel() {
  return fromEnv("MSAMP_TEST_EMBEDDING_GRAD_MODEL", MSAMP_EMBEDDING_GRAD_MODEL);
}

/// test/Tools/msamp-run/Inputs/computed-index.mlir: its index is computed
/// by a kernel and checked on the host, the one kind of step that still
/// cannot be a CUDA graph (docs/GPU.md "Session buffers in device memory").
std::string computedIndexModel() {
  return fromEnv("MSAMP_TEST_COMPUTED_INDEX_MODEL", MSAMP_COMPUTED_INDEX_MODEL);
}

TEST(CudaCompiledStep, EmbeddingGradMatchesCpuBitwise) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(embeddingGradModel(), "O0");
  compareCheckpointsWithCpu("embedding-grad", embeddingGradModel(),
                            "--synthetic-classes 4099");
}

TEST(CudaCompiledStep, MlpO0MatchesCpu) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(mlpModel(), "O0");
  compareCudaWithCpu("mlp-o0", mlpModel(), "O0", 5, 1e-4);
}

TEST(CudaCompiledStep, MlpO2MatchesCpu) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(mlpModel(), "O2");
  compareCudaWithCpu("mlp-o2", mlpModel(), "O2", 5, 2e-2);
}

TEST(CudaCompiledStep, TransformerLmO0MatchesCpu) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_PYTHON();
  MSAMP_REQUIRE_STEP(transformerModel(), "O0");
  compareCudaWithCpu("lm-o0", transformerModel(), "O0", 3, 1e-4);
}

TEST(CudaCompiledStep, TransformerLmO2MatchesCpu) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_PYTHON();
  MSAMP_REQUIRE_STEP(transformerModel(), "O2");
  compareCudaWithCpu("lm-o2", transformerModel(), "O2", 3, 2e-2);
}

/// The data of a safetensors file (everything after its header), empty
/// when the file cannot be read.
std::string safetensorsData(const std::string &path) {
  std::string bytes = readFile(path);
  if (bytes.size() < 8)
    return {};
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | static_cast<unsigned char>(bytes[i]);
  if (headerSize > bytes.size() - 8)
    return {};
  return bytes.substr(8 + headerSize);
}

// Column sums split in two stages (msamp-split-column-reductions, both
// targets): w's gradient is the column sum of a [1024, 48] input, which
// the pass splits into 16 chunks of 64 rows; one SGD step with lr 1 leaves
// w - sum. Each output's order is fixed (stage 1 walks its chunk's rows, stage
// 2 the chunks, one thread each), so the GPU's w equals the CPU's bit for
// bit: a kernel reading other rows or chunks, or a partial left
// uninitialized, changes it.
TEST(CudaCompiledStep, SplitColumnSumMatchesCpuExactly) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(splitColumnSumModel(), "O0");
  const std::string dir = testDir("split-column-sum");
  const std::string model = splitColumnSumModel();
  runOnBothBackends(dir, model, "O0", 1,
                    "--save '" + dir + "/BACKEND.safetensors'");
  if (::testing::Test::HasFatalFailure())
    return;
  // The step counter (8 bytes) and w (48 floats), in the same layout.
  const std::string cpu = safetensorsData(dir + "/cpu.safetensors");
  const std::string cuda = safetensorsData(dir + "/cuda.safetensors");
  ASSERT_EQ(cpu.size(), 8u + 48u * 4u);
  EXPECT_TRUE(cuda == cpu) << "w differs from the CPU's";
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// A kernel reads a ranked constant table (test/Codegen/GPU/Inputs/
// constant-table-step.mlir: w's gradient is x * table). The table's staging
// copy kernel read the host image of train_step.so before
// msamp-gpu-sink-globals (an illegal address); now the table is a global of
// the kernel module. One SGD step with lr 1 leaves w - x * table, one
// multiply per element on both targets: the GPU's w equals the CPU's bit
// for bit.
TEST(CudaCompiledStep, AConstantTableIsReadFromDeviceMemory) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(constantTableModel(), "O0");
  const std::string dir = testDir("constant-table");
  runOnBothBackends(dir, constantTableModel(), "O0", 1,
                    "--save '" + dir + "/BACKEND.safetensors'");
  if (::testing::Test::HasFatalFailure())
    return;
  // The step counter (8 bytes) and w (8 floats), in the same layout.
  const std::string cpu = safetensorsData(dir + "/cpu.safetensors");
  const std::string cuda = safetensorsData(dir + "/cuda.safetensors");
  ASSERT_EQ(cpu.size(), 8u + 8u * 4u);
  EXPECT_TRUE(cuda == cpu) << "w differs from the CPU's";
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

} // namespace

namespace {

/// The integer after `"key": ` in `text`, or -1.
int64_t jsonInteger(const std::string &text, const std::string &key) {
  size_t at = text.find("\"" + key + "\": ");
  return at == std::string::npos
             ? -1
             : std::strtoll(text.c_str() + at + key.size() + 4, nullptr, 10);
}

// The session reserves the step's static arenas at open (manifest.json's
// gpu_arena, msamp-gpu-static-arena): the device arena the step's buffers
// are views of is cudaMalloc'd device memory, not managed memory, and the
// step's own request at its entry gets that same block.
/// Compiles `model` at `level` for this device into DIR/step (the kit's
/// step, copied: the tests edit it).
void compileForCuda(const std::string &dir, const std::string &model,
                    const std::string &level) {
  if (!precompiledSteps().empty()) {
    const std::string copy =
        "cp -r '" + stepFor(model, level, "cuda") + "' '" + dir + "/step'";
    ASSERT_EQ(run(copy, dir + "/compile.log"), 0)
        << readFile(dir + "/compile.log");
    return;
  }
  ASSERT_EQ(run("'" + msampCompile() + "' '" + model + "' --opt-level " +
                    level + " --target cuda --chip " + chipOfDevice() +
                    " -o '" + dir + "/step'",
                dir + "/compile.log"),
            0)
      << readFile(dir + "/compile.log");
}

// A session opening the computed-index step reserves its arena in device
// memory. Its checked indices went to the pinned host arena while the
// check read them on the host; now they are device memory too and the
// step has no host arena (the pinned one is checked when a step has one:
// StaticArena.* in MSAMPCudaTests test it directly).
TEST(CudaCompiledStep, SessionReservesTheArenaInDeviceMemory) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(computedIndexModel(), "O0");
  const std::string dir = testDir("arena");
  ASSERT_NO_FATAL_FAILURE(compileForCuda(dir, computedIndexModel(), "O0"));
  const std::string manifest = readFile(dir + "/step/manifest.json");
  const int64_t deviceBytes = jsonInteger(manifest, "device_bytes");
  const int64_t hostBytes = jsonInteger(manifest, "host_bytes");
  ASSERT_GT(deviceBytes, 0) << manifest;

  ASSERT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_OK)
      << msamp_rt_get_last_error_message();
  msamp_session *session = nullptr;
  ASSERT_EQ(msamp_session_open((dir + "/step").c_str(), &session), MSAMP_OK)
      << msamp_last_error_message();
  void *arena = msamp_rt_gpu_arena(deviceBytes);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, arena), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  if (hostBytes > 0) {
    void *host = msamp_rt_gpu_host_arena(hostBytes);
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, host), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  }
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK);
  msamp_session_close(session);
  msamp_rt_set_backend("cpu");
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// A step whose device arena cannot fit in the free device memory is
// refused at open, before anything is allocated, naming the arena, the
// required and the free bytes (here manifest.json claims a 1 PiB arena).
TEST(CudaCompiledStep, AnArenaThatDoesNotFitIsRefusedAtOpen) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(mlpModel(), "O2");
  const std::string dir = testDir("arena-too-big");
  ASSERT_NO_FATAL_FAILURE(compileForCuda(dir, mlpModel(), "O2"));
  const std::string path = dir + "/step/manifest.json";
  std::string manifest = readFile(path);
  const size_t at = manifest.find("\"device_bytes\": ");
  ASSERT_NE(at, std::string::npos) << manifest;
  const size_t end = manifest.find(',', at);
  manifest.replace(at, end - at, "\"device_bytes\": 1125899906842624");
  std::ofstream(path) << manifest;

  ASSERT_EQ(msamp_rt_set_backend("cuda"), MSAMP_RT_OK);
  msamp_session *session = nullptr;
  EXPECT_EQ(msamp_session_open((dir + "/step").c_str(), &session),
            MSAMP_ERROR_OUT_OF_MEMORY);
  const std::string message = msamp_last_error_message();
  EXPECT_NE(message.find("the step's device arena (1125899906842624 bytes)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("free of"), std::string::npos) << message;
  msamp_session_close(session);
  msamp_rt_set_backend("cpu");
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

//===----------------------------------------------------------------------===//
// The step as a CUDA graph (docs/GPU.md "The step as a CUDA graph")
//===----------------------------------------------------------------------===//

/// msamp-run trains `model` (--backend cuda) with `args`, its files named
/// `tag` in `dir` (TAG.jsonl, TAG.safetensors, TAG.log); `env` prefixes
/// the command. The learning rate changes every step (a warm-up, then the
/// cosine), so a replayed graph must read each step's lr from the device.
void runCudaSteps(const std::string &dir, const std::string &model,
                  const std::string &level, int steps, const std::string &tag,
                  const std::string &env, const std::string &args) {
  const std::string cmd =
      env + " MSAMP_CACHE_DIR='" + dir + "/cache' '" + msampRun() + "' '" +
      stepFor(model, level, "cuda") + "' --opt-level " + level +
      " --backend cuda --cuda-chip " + chipOfDevice() + " --steps " +
      std::to_string(steps) +
      " --synthetic --seed 7 --lr-schedule cosine --warmup 2 --log-json '" +
      dir + "/" + tag + ".jsonl' --save '" + dir + "/" + tag +
      ".safetensors' " + args;
  ASSERT_EQ(run(cmd, dir + "/" + tag + ".log"), 0)
      << readFile(dir + "/" + tag + ".log");
}

/// Losses and saved state of run `a` and run `b` are bit-identical.
void expectSameRuns(const std::string &dir, const std::string &a,
                    const std::string &b) {
  const std::vector<double> lossesA = losses(dir + "/" + a + ".jsonl");
  EXPECT_FALSE(lossesA.empty());
  EXPECT_EQ(lossesA, losses(dir + "/" + b + ".jsonl")) << a << " vs " << b;
  const std::string stateA = safetensorsData(dir + "/" + a + ".safetensors");
  EXPECT_FALSE(stateA.empty());
  EXPECT_TRUE(stateA == safetensorsData(dir + "/" + b + ".safetensors"))
      << a << " vs " << b << ": the saved state differs";
}

/// The saved state of run `a` and run `b` is bit-identical and their
/// `steps` losses agree to 1e-5: a step whose loss is an atomic sum of many
/// threads (the order of its additions varies from run to run) but whose
/// update is deterministic.
void expectSameStateCloseLosses(const std::string &dir, const std::string &a,
                                const std::string &b, size_t steps) {
  const std::string stateA = safetensorsData(dir + "/" + a + ".safetensors");
  EXPECT_FALSE(stateA.empty());
  EXPECT_TRUE(stateA == safetensorsData(dir + "/" + b + ".safetensors"))
      << a << " vs " << b << ": the saved state differs";
  const std::vector<double> lossesA = losses(dir + "/" + a + ".jsonl");
  const std::vector<double> lossesB = losses(dir + "/" + b + ".jsonl");
  ASSERT_EQ(lossesA.size(), steps);
  ASSERT_EQ(lossesB.size(), steps);
  for (size_t i = 0; i < steps; ++i)
    EXPECT_NEAR(lossesA[i], lossesB[i], 1e-5 * std::fabs(lossesA[i]))
        << a << " vs " << b << ", step " << i + 1;
}

// Six MLP O2 steps (Adam, FP8 GEMMs, delayed scaling): the first eager (the
// warm-up), the second captured, four replays, with lr changing every
// step. Losses and the saved state are those of eager steps bit for bit.
// The eager run is repeated first: the MLP's reductions fit in one block,
// so eager steps are deterministic, and a difference below is the graph's.
TEST(CudaGraphStep, ReplayedStepsMatchEagerStepsBitwise) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(mlpModel(), "O2");
  const std::string dir = testDir("graph-bitwise");
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, mlpModel(), "O2", 6, "eager1",
                                       "MSAMP_CUDA_GRAPHS=0", ""));
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, mlpModel(), "O2", 6, "eager2", "",
                                       "--cuda-graphs off"));
  ASSERT_NO_FATAL_FAILURE(
      runCudaSteps(dir, mlpModel(), "O2", 6, "graph", "", ""));
  expectSameRuns(dir, "eager1", "eager2");
  expectSameRuns(dir, "eager1", "graph");
  const std::string graphLog = readFile(dir + "/graph.log");
  EXPECT_NE(graphLog.find("CUDA graph: 5 of 6 steps launched from it\n"),
            std::string::npos)
      << graphLog;
  EXPECT_EQ(graphLog.find("CUDA graphs off"), std::string::npos) << graphLog;
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// MSAMP_CUDA_GRAPHS=0 and --cuda-graphs off run every step eagerly, with no
// note (nothing was refused); --cuda-graphs on overrides the variable.
TEST(CudaGraphStep, TheSwitchRunsEagerSteps) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(mlpModel(), "O2");
  const std::string dir = testDir("graph-off");
  ASSERT_NO_FATAL_FAILURE(
      runCudaSteps(dir, mlpModel(), "O2", 3, "env", "MSAMP_CUDA_GRAPHS=0", ""));
  ASSERT_NO_FATAL_FAILURE(
      runCudaSteps(dir, mlpModel(), "O2", 3, "flag", "", "--cuda-graphs off"));
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, mlpModel(), "O2", 3, "on",
                                       "MSAMP_CUDA_GRAPHS=off",
                                       "--cuda-graphs on"));
  for (const char *tag : {"env", "flag"}) {
    const std::string log = readFile(dir + "/" + tag + ".log");
    EXPECT_NE(log.find("CUDA graph: 0 of 3 steps launched from it\n"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find("note:"), std::string::npos) << log;
  }
  const std::string on = readFile(dir + "/on.log");
  EXPECT_NE(on.find("CUDA graph: 2 of 3 steps launched from it\n"),
            std::string::npos)
      << on;
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// The embedding-grad step (SGD, its loss a full sum over a lookup) has no
// blocker any more: its SGD update reads step and lr on the device and the
// loss is an atomic-sum kernel. Three steps with lr changing every step:
// the second is captured, the third replayed, and the saved parameters are
// the eager run's bit for bit (the scatter and SGD are deterministic; the
// loss, an atomic sum, may differ in its last bits).
TEST(CudaGraphStep, TheEmbeddingGradSgdStepIsReplayedFromAGraph) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(embeddingGradModel(), "O0");
  const std::string dir = testDir("graph-sgd");
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, embeddingGradModel(), "O0", 3,
                                       "graph", "",
                                       "--synthetic-classes 4099"));
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, embeddingGradModel(), "O0", 3,
                                       "eager", "MSAMP_CUDA_GRAPHS=0",
                                       "--synthetic-classes 4099"));
  const std::string log = readFile(dir + "/graph.log");
  EXPECT_NE(log.find("CUDA graph: 2 of 3 steps launched from it\n"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("CUDA graphs off"), std::string::npos) << log;
  expectSameStateCloseLosses(dir, "eager", "graph", 3);
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// The computed-index step checks its computed index on the stream
// (index_check.cu; the session reads the record after the step's wait), so
// it has no blocker any more: captured at the second step, replayed at the
// third, and the saved state is the eager run's.
TEST(CudaGraphStep, TheComputedIndexStepIsReplayedFromAGraph) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(computedIndexModel(), "O0");
  const std::string dir = testDir("graph-computed-index");
  // Ids below 7: position = id + 3 stays inside the 10-row table.
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, computedIndexModel(), "O0", 3,
                                       "graph", "", "--synthetic-classes 7"));
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, computedIndexModel(), "O0", 3,
                                       "eager", "MSAMP_CUDA_GRAPHS=0",
                                       "--synthetic-classes 7"));
  const std::string log = readFile(dir + "/graph.log");
  EXPECT_NE(log.find("CUDA graph: 2 of 3 steps launched from it\n"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("note:"), std::string::npos) << log;
  expectSameStateCloseLosses(dir, "eager", "graph", 3);
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

// A step that cannot be captured runs eagerly (its buffers in managed
// memory) and the session says why in one line; its results are the eager
// ones. No step the compiler accepts has a blocker left, so the session's
// test hook MSAMP_TEST_GRAPH_BLOCKER names one.
TEST(CudaGraphStep, AStepThatCannotBeCapturedFallsBackWithANote) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(computedIndexModel(), "O0");
  const std::string dir = testDir("graph-fallback");
  ASSERT_NO_FATAL_FAILURE(
      runCudaSteps(dir, computedIndexModel(), "O0", 3, "graph",
                   "MSAMP_TEST_GRAPH_BLOCKER='test.mlir:1:2: a test blocker'",
                   "--synthetic-classes 7"));
  ASSERT_NO_FATAL_FAILURE(runCudaSteps(dir, computedIndexModel(), "O0", 3,
                                       "eager", "MSAMP_CUDA_GRAPHS=0",
                                       "--synthetic-classes 7"));
  const std::string log = readFile(dir + "/graph.log");
  EXPECT_NE(log.find("msamp-run: note: CUDA graphs off: the step's host code "
                     "cannot be captured: test.mlir:1:2: a test blocker"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("CUDA graph: 0 of 3 steps launched from it"),
            std::string::npos)
      << log;
  expectSameStateCloseLosses(dir, "eager", "graph", 3);
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

/// The "error:" line of msamp-run's log `path`, or "".
std::string errorLine(const std::string &path) {
  const std::string log = readFile(path);
  const size_t at = log.find("msamp-run: error: ");
  if (at == std::string::npos)
    return "";
  return log.substr(at, log.find('\n', at) - at);
}

// A bad computed index on the GPU (ids up to 9: positions up to 12 in a
// 10-row table): the step is refused with the CPU backend's error, with
// graphs on and off.
TEST(CudaGraphStep, ABadComputedIndexGivesTheCpuError) {
  MSAMP_REQUIRE_CUDA_DEVICE();
  MSAMP_REQUIRE_TOOLS();
  MSAMP_REQUIRE_STEP(computedIndexModel(), "O0");
  const std::string dir = testDir("bad-computed-index");
  auto runBad = [&](const std::string &backend, const std::string &tag,
                    const std::string &env) {
    const std::string cmd =
        env + " MSAMP_CACHE_DIR='" + dir + "/cache' '" + msampRun() + "' '" +
        stepFor(computedIndexModel(), "O0", backend) +
        "' --opt-level O0 --backend " + backend +
        (backend == "cuda" ? " --cuda-chip " + chipOfDevice() : "") +
        " --steps 3 --synthetic --seed 7 --synthetic-classes 10 --quiet";
    EXPECT_NE(run(cmd, dir + "/" + tag + ".log"), 0)
        << readFile(dir + "/" + tag + ".log");
    return errorLine(dir + "/" + tag + ".log");
  };
  const std::string cpu = runBad("cpu", "cpu", "");
  EXPECT_NE(cpu.find("index computed at "), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("is outside the valid range [0, 10)"), std::string::npos)
      << cpu;
  EXPECT_EQ(runBad("cuda", "graph", ""), cpu);
  EXPECT_EQ(runBad("cuda", "eager", "MSAMP_CUDA_GRAPHS=0"), cpu);
  std::string cleanup = "rm -rf '" + dir + "'";
  (void)std::system(cleanup.c_str());
}

} // namespace
