//===- Session.cpp - A loaded train step and the state it updates ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Session.h"
#include "Random.h"
#include "RankAgreement.h"
#include "Sha256.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/Support/HostCpuFeatures.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>

namespace msamp::session {

namespace {

std::string joinPath(const std::string &dir, const std::string &file) {
  if (dir.empty())
    return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

/// dlopen searches the library path for a name without a slash; a file in
/// the current directory must be named "./file".
std::string dlopenPath(const std::string &path) {
  return path.find('/') == std::string::npos ? "./" + path : path;
}

/// The learning rate recorded in the msamp.optimizer dictionary of
/// train_step.mlir: the resolved one on @train_step (all keys present), else
/// the module's. The manifest (ABI v1) does not carry it; reading one number
/// out of the printed attribute avoids linking an MLIR parser.
std::optional<double> findCompiledLR(const std::string &text) {
  auto scan = [&](size_t from, size_t to) -> std::optional<double> {
    size_t dict = text.find("msamp.optimizer = {", from);
    if (dict == std::string::npos || dict >= to)
      return std::nullopt;
    size_t close = text.find('}', dict);
    for (const char *key : {"{lr = ", " lr = "}) {
      size_t at = text.find(key, dict);
      if (at == std::string::npos || at >= close)
        continue;
      const char *begin = text.c_str() + at + std::strlen(key);
      char *end = nullptr;
      double lr = std::strtod(begin, &end);
      if (end != begin && std::isfinite(lr))
        return lr;
    }
    return std::nullopt;
  };
  size_t func = text.find("func.func @train_step(");
  if (func != std::string::npos)
    if (auto lr = scan(func, text.find('\n', func)))
      return lr;
  return scan(0, std::string::npos);
}

/// Makes the runtime library's symbols visible to libraries dlopened later.
/// A process that links libmsamp_session normally has the runtime in its
/// global scope already; a host that dlopened us RTLD_LOCAL (Python ctypes'
/// default) does not, and the step's _mlir_ciface_msamp_rt_* references
/// would fail to resolve.
void promoteRuntimeToGlobalScope() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&msamp_rt_abi_version), &info) &&
      info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

} // namespace

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
static uint64_t availableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:")
      return kib * 1024;
  }
  return 0;
}

/// The runtime's sticky error as a session error, cleared.
static Error runtimeFailure(const std::string &what) {
  std::string message = msamp_rt_get_last_error_message();
  msamp_rt_clear_error();
  return Error(MSAMP_ERROR_RUNTIME, what + ": " + message);
}

Error Session::open(const std::string &dir, std::unique_ptr<Session> &out,
                    BufferDevice *testDevice) {
  std::unique_ptr<Session> s(new Session());
  s->dir_ = dir;
  if (Error e = loadManifest(joinPath(dir, "manifest.json"), s->manifest_))
    return e;
  const Manifest &m = s->manifest_;

  if (msamp_rt_abi_version() != MSAMP_RT_ABI_VERSION)
    return Error(MSAMP_ERROR_LOAD, "libmsamp_runtime implements ABI version " +
                                       std::to_string(msamp_rt_abi_version()) +
                                       ", this session was built for version " +
                                       std::to_string(MSAMP_RT_ABI_VERSION));
  // A replicated step (O0-O2: manifest world size 1) runs unchanged on any
  // number of data-parallel ranks: its all-reduce means divide by the
  // group's size at run time. Only a step compiled for a fixed group
  // (O3's sharded state) must match the launcher.
  if (m.worldSize > 1 && m.worldSize != msamp_rt_world_size())
    return Error(MSAMP_ERROR_LOAD,
                 dir + ": the step was compiled for world size " +
                     std::to_string(m.worldSize) +
                     ", but the runtime's collective has " +
                     std::to_string(msamp_rt_world_size()) + " rank(s)");
  if (m.rank >= 0 && m.rank != msamp_rt_rank())
    return Error(MSAMP_ERROR_LOAD, dir + ": the step was compiled for rank " +
                                       std::to_string(m.rank) +
                                       " (O3 compiles one program per "
                                       "rank), but this process is rank " +
                                       std::to_string(msamp_rt_rank()));

  // The graph hash identifies the compiled step in checkpoints.
  std::string text;
  if (Error e = readGraph(dir, text, s->graphHash_))
    return e;
  if (m.lr)
    s->defaultLR_ = *m.lr;
  else if (std::optional<double> lr = findCompiledLR(text))
    s->defaultLR_ = *lr;

  // Host code generated for another CPU stops on an illegal instruction.
  if (m.hostCpu) {
    std::vector<std::string> missing =
        msamp_cpu::missingCpuFeatures(m.hostCpu->features);
    if (!missing.empty()) {
      std::string list;
      for (const std::string &name : missing)
        list += (list.empty() ? "" : ", ") + name;
      return Error(MSAMP_ERROR_LOAD,
                   dir + ": train_step.so was compiled for CPU '" +
                       m.hostCpu->name + "', and this CPU lacks " + list +
                       "; compile the model on this machine, or with "
                       "msamp-compile --host-cpu x86-64-v3 for any AVX2 "
                       "machine");
    }
  }
  promoteRuntimeToGlobalScope();
  const std::string soPath = joinPath(dir, "train_step.so");
  // A truncated object maps fine and faults (SIGBUS) at its first call.
  if (m.object) {
    struct stat st;
    if (stat(soPath.c_str(), &st) != 0)
      return Error(MSAMP_ERROR_LOAD,
                   "cannot read '" + soPath + "': " + systemError(errno));
    if (st.st_size != m.object->bytes)
      return Error(MSAMP_ERROR_LOAD,
                   "'" + soPath + "' has " + std::to_string(st.st_size) +
                       " bytes, but manifest.json records " +
                       std::to_string(m.object->bytes) +
                       " (truncated or replaced: compile the model again)");
    std::string sha256;
    if (Error e = sha256File(soPath, sha256))
      return e;
    if (sha256 != m.object->sha256)
      return Error(MSAMP_ERROR_LOAD,
                   "'" + soPath +
                       "' does not match the sha256 manifest.json records "
                       "(modified or replaced: compile the model again)");
  }
  void *library = dlopen(dlopenPath(soPath).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return Error(MSAMP_ERROR_LOAD, "cannot load '" + soPath +
                                       "': " + (why ? why : "unknown error"));
  }
  // The library stays loaded for the life of the process: another session
  // may run the same code, and unloading buys nothing in a training run.
  auto abiVersion = reinterpret_cast<int64_t (*)()>(
      dlsym(library, "msamp_train_step_abi_version"));
  auto numArgs = reinterpret_cast<int64_t (*)()>(
      dlsym(library, "msamp_train_step_num_args"));
  s->packed_ = reinterpret_cast<void (*)(void **)>(
      dlsym(library, "msamp_train_step_packed"));
  s->checkInputs_ = reinterpret_cast<int32_t (*)(void **)>(
      dlsym(library, "msamp_train_step_check_inputs"));
  if (!abiVersion || !numArgs || !s->packed_)
    return Error(MSAMP_ERROR_LOAD,
                 soPath + " lacks msamp_train_step_packed, "
                          "msamp_train_step_abi_version or "
                          "msamp_train_step_num_args (not built by "
                          "msamp-compile?)");
  if (abiVersion() != MSAMP_RT_ABI_VERSION)
    return Error(MSAMP_ERROR_LOAD,
                 soPath + " was compiled for runtime ABI version " +
                     std::to_string(abiVersion()) + ", this runtime has " +
                     std::to_string(MSAMP_RT_ABI_VERSION) + "; recompile it");
  // The packed entry point takes the N arguments, the loss and one output
  // per metric (docs/RuntimeABI.md 11).
  const int64_t numMetrics = static_cast<int64_t>(m.metrics.size());
  if (numArgs() != m.numArgs + 1 + numMetrics)
    return Error(MSAMP_ERROR_LOAD,
                 soPath + " takes " + std::to_string(numArgs()) +
                     " arguments, but manifest.json describes " +
                     std::to_string(m.numArgs) + " plus the loss and " +
                     std::to_string(numMetrics) +
                     " metric(s); the two do not belong together");

  // A step compiled with --target cuda runs kernels on its buffers: they
  // are device memory, which needs the CUDA backend now. A step whose own
  // host code reads or writes a buffer (msamp-gpu-graph-check recorded it
  // as the blocker of its CUDA graph; msamp-compile warned: only a host
  // check of a computed index is left, docs/GPU.md) keeps them in managed
  // memory, which that code reaches too.
  BufferMemory memory = BufferMemory::Host;
  auto *blocker = static_cast<const char *>(
      dlsym(library, "msamp_train_step_graph_blocker"));
  // Test hook: no step the compiler accepts has a blocker left (docs/GPU.md
  // "No managed memory, every step a CUDA graph"), so the device test of
  // the fallback (eager steps, managed memory, a note) names one.
  if (const char *hook = std::getenv("MSAMP_TEST_GRAPH_BLOCKER"); hook && *hook)
    blocker = hook;
  if (auto *target =
          static_cast<const char *>(dlsym(library, "msamp_train_step_target"));
      target && std::strcmp(target, "cuda") == 0) {
    if (!msamp_rt_gpu_available())
      return Error(MSAMP_ERROR_LOAD,
                   soPath + " was compiled for CUDA (msamp-compile --target "
                            "cuda); select the cuda backend before opening it "
                            "(msamp_rt_set_backend(\"cuda\"), msamp-run "
                            "--backend cuda)");
    s->cudaStep_ = true;
    s->device_ = &runtimeBufferDevice();
    memory =
        blocker && !*blocker ? BufferMemory::Device : BufferMemory::Managed;
  }
  if (testDevice) {
    s->device_ = testDevice;
    memory = BufferMemory::Device;
  }

  // The state and the inputs are allocated and zeroed here (the step's
  // intermediates come on top at each step): refuse what cannot fit before
  // the out-of-memory killer does (a 2^31 dimension was killed at 24 GB).
  // The copy of the state that a refused step is undone from is part of
  // it (Design.md "Bad data and bad updates"), so the state counts twice.
  uint64_t stateBytes = 0;
  for (const TensorSpec &spec : m.state)
    stateBytes += static_cast<uint64_t>(spec.numBytes);
  if (memory != BufferMemory::Managed) {
    // Device memory: the host copies of the state and the inputs (the
    // state's copy is the device's).
    const bool device = memory == BufferMemory::Device;
    uint64_t required = (device ? 1 : 2) * stateBytes;
    for (const TensorSpec &spec : m.inputs)
      required += static_cast<uint64_t>(spec.numBytes);
    const uint64_t available = availableMemoryBytes();
    if (available && required > available)
      return Error(MSAMP_ERROR_OUT_OF_MEMORY,
                   dir +
                       (device ? ": the host copies of the state and the "
                                 "inputs (a GPU step's buffers) need "
                               : ": the state, its copy (to undo a refused "
                                 "step) and the inputs need ") +
                       std::to_string(required) + " bytes (" +
                       std::to_string(required >> 20) + " MiB), but " +
                       std::to_string(available) + " bytes (" +
                       std::to_string(available >> 20) +
                       " MiB) of memory are available (MemAvailable)");
  }
  if (memory != BufferMemory::Host) {
    // The state, its device copy, the inputs and the step's device arena
    // (its buffers, laid out by the compiler: manifest.json's "gpu_arena")
    // must fit in the free device memory before anything is allocated
    // (managed memory can be asked for beyond it, which can stall the
    // whole GPU rather than fail).
    uint64_t required = 2 * stateBytes;
    for (const TensorSpec &spec : m.inputs)
      required += static_cast<uint64_t>(spec.numBytes);
    const uint64_t arenaBytes =
        m.gpuArena ? static_cast<uint64_t>(m.gpuArena->deviceBytes) : 0;
    required += arenaBytes;
    size_t freeBytes = 0, totalBytes = 0;
    if (std::string why = s->device_->memoryInfo(freeBytes, totalBytes);
        !why.empty())
      return Error(MSAMP_ERROR_RUNTIME,
                   dir + ": reading the GPU's free memory: " + why);
    if (required > freeBytes)
      return Error(MSAMP_ERROR_OUT_OF_MEMORY,
                   dir +
                       ": the state, its copy (to undo a refused step), "
                       "the inputs and the step's device arena (" +
                       std::to_string(arenaBytes) + " bytes) need " +
                       std::to_string(required) + " bytes (" +
                       std::to_string(required >> 20) +
                       " MiB) of GPU "
                       "memory, but the GPU has " +
                       std::to_string(freeBytes) + " bytes (" +
                       std::to_string(freeBytes >> 20) + " MiB) free of " +
                       std::to_string(totalBytes >> 20) + " MiB");
    // Once, here: every step reuses them (msamp_rt_gpu_arena).
    if (s->cudaStep_ && m.gpuArena &&
        msamp_rt_gpu_reserve_arenas(
            static_cast<size_t>(m.gpuArena->deviceBytes),
            static_cast<size_t>(m.gpuArena->hostBytes)) != MSAMP_RT_OK)
      return runtimeFailure(dir + ": allocating the step's GPU arenas");
  }
  s->memory_ = memory;
  if (s->cudaStep_) {
    // A CUDA graph replays only what the step enqueued when it was
    // captured: the compiler recorded whether its host code does more
    // (msamp-gpu-graph-check).
    if (!blocker)
      s->graphWhyNot_ = "train_step.so was compiled before msamp could tell "
                        "whether its step can be captured (compile it again)";
    else if (*blocker)
      s->graphWhyNot_ =
          std::string("the step's host code cannot be captured: ") + blocker;
    else if (msamp_rt_world_size() > 1)
      s->graphWhyNot_ = "data-parallel ranks (world size " +
                        std::to_string(msamp_rt_world_size()) +
                        "): collectives across processes are not captured";
    bool graphs = true;
    if (const char *env = std::getenv("MSAMP_CUDA_GRAPHS"); env && *env)
      if (!parseCudaGraphsSetting(env, graphs))
        return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                     std::string("MSAMP_CUDA_GRAPHS is '") + env +
                         "': use 1 or on, 0 or off");
    s->setCudaGraphs(graphs);
  }
  if (memory != BufferMemory::Host) {
    // The step's computed-index checks run where its buffers are; their
    // record is read after the step's wait (RuntimeABI.md 3.11.1).
    s->indexChecks_ = msamp_rt_index_checks_create();
    if (!s->indexChecks_)
      return runtimeFailure(dir + ": allocating the record of the step's "
                                  "computed-index checks");
    // Touched by the device only (copyState).
    std::string why;
    s->deviceSnapshot_ = s->device_->allocate(
        static_cast<size_t>(stateBytes ? stateBytes : 1), why);
    if (!s->deviceSnapshot_)
      return Error(MSAMP_ERROR_OUT_OF_MEMORY,
                   dir + ": cannot allocate the state's device copy (" +
                       std::to_string(stateBytes) + " bytes): " + why);
  } else {
    s->snapshot_.resize(static_cast<size_t>(stateBytes));
  }

  s->descriptors_.assign(static_cast<size_t>(m.numArgs + 1 + numMetrics),
                         nullptr);
  for (bool isState : {true, false})
    for (const TensorSpec &spec : isState ? m.state : m.inputs) {
      std::unique_ptr<TensorBuffer> buffer;
      // An input's host copy is what the entry point's index checks read.
      if (Error e = TensorBuffer::create(spec, buffer, memory, s->device_,
                                         /*hostCopy=*/!isState))
        return e;
      s->descriptors_[spec.index] = buffer->descriptor();
      if (spec.role == "step")
        s->stepState_ = buffer.get();
      // Hyperparams by name: a step may have several (lr, max_grad_norm).
      if (spec.role == "hyperparam" && spec.name == "lr")
        s->lrInput_ = buffer.get();
      if (spec.role == "hyperparam" && spec.name == "max_grad_norm")
        s->maxGradNormInput_ = buffer.get();
      if (spec.role == "hyperparam" && spec.name == "training")
        s->trainingInput_ = buffer.get();
      if (spec.role == "rank")
        s->rankInput_ = buffer.get();
      (isState ? s->state_ : s->inputs_).push_back(std::move(buffer));
    }
  TensorSpec lossSpec;
  lossSpec.name = "loss";
  lossSpec.role = "loss";
  lossSpec.numBytes = sizeof(float);
  if (Error e = TensorBuffer::create(lossSpec, s->loss_, memory, s->device_))
    return e;
  s->descriptors_[static_cast<size_t>(m.numArgs)] = s->loss_->descriptor();
  for (const TensorSpec &spec : m.metrics) {
    std::unique_ptr<TensorBuffer> buffer;
    if (Error e = TensorBuffer::create(spec, buffer, memory, s->device_))
      return e;
    s->descriptors_[static_cast<size_t>(m.numArgs) + 1 + s->metrics_.size()] =
        buffer->descriptor();
    if (spec.name == "nonfinite")
      s->nonFiniteMetric_ = buffer.get();
    s->metrics_.push_back(std::move(buffer));
  }
  if (s->rankInput_) {
    float rank = static_cast<float>(msamp_rt_rank());
    encodeFromF32(s->rankInput_->spec().dtype, &rank, 1, 1.0f,
                  s->rankInput_->data());
    if (Error e = s->rankInput_->upload())
      return e;
  }
  s->dataTensors_.assign(s->inputs_.size(), nullptr);
  out = std::move(s);
  return Error::success();
}

TensorBuffer *Session::findState(const std::string &name) const {
  for (const auto &buffer : state_)
    if (buffer->spec().name == name)
      return buffer.get();
  return nullptr;
}

TensorBuffer *Session::findInput(const std::string &name) const {
  for (const auto &buffer : inputs_)
    if (buffer->spec().name == name)
      return buffer.get();
  return nullptr;
}

Error readGraph(const std::string &dir, std::string &text, std::string &hash) {
  const std::string mlirPath = joinPath(dir, "train_step.mlir");
  std::ifstream mlirFile(mlirPath, std::ios::binary);
  if (!mlirFile)
    return Error(MSAMP_ERROR_LOAD, "cannot read '" + mlirPath +
                                       "' (the graph hash is computed from "
                                       "it): " +
                                       systemError(errno));
  std::stringstream mlirText;
  mlirText << mlirFile.rdbuf();
  text = mlirText.str();
  Sha256 sha;
  sha.update(text.data(), text.size());
  hash = "sha256:" + sha.hexDigest();
  return Error::success();
}

Error Session::initialize(uint64_t seed, const std::string *initFile,
                          int64_t *numFromFile) {
  std::unique_ptr<SafeTensorsReader> reader;
  if (initFile)
    if (Error e = SafeTensorsReader::open(*initFile, reader))
      return e;
  // The init file's state_dict layout (msamp.export records it) names the
  // weights msamp_session_export_weights writes.
  std::vector<LayoutEntry> layout;
  if (reader)
    if (Error e = readStateDictLayout(*reader, layout))
      return e;
  std::vector<TensorBuffer *> state;
  for (const auto &buffer : state_)
    state.push_back(buffer.get());
  if (Error e = initializeState(state, seed, reader.get(), numFromFile))
    return e;
  // Initialized on the host copies: the whole state in one copy.
  if (Error e = uploadAll(state_))
    return e;
  stateDictLayout_ = std::move(layout);
  localSteps_ = 0;
  initialized_ = true;
  return Error::success();
}

int64_t Session::boundBytes() const {
  int64_t bytes = loss_ ? static_cast<int64_t>(loss_->numBytes()) : 0;
  for (const auto *buffers : {&state_, &inputs_, &metrics_})
    for (const auto &buffer : *buffers)
      bytes += static_cast<int64_t>(buffer->numBytes());
  return bytes;
}

int64_t Session::completedSteps() const {
  if (!stepState_)
    return localSteps_;
  // A device counter is read by a copy (the step advanced it); a failed
  // copy leaves the last value read, and the device's error fails the next
  // step.
  (void)stepState_->download();
  int64_t steps;
  std::memcpy(&steps, stepState_->data(), sizeof(steps));
  return steps;
}

Error Session::setCompletedSteps(int64_t steps) {
  if (!stepState_) {
    localSteps_ = steps;
    return Error::success();
  }
  std::memcpy(stepState_->data(), &steps, sizeof(steps));
  return stepState_->upload();
}

Error Session::copyState(bool toSnapshot) {
  if (memory_ != BufferMemory::Host) {
    // On the device: device memory is not the host's (and a host memcpy of
    // managed memory would migrate every page of the state to the host).
    std::vector<void *> dst;
    std::vector<const void *> src;
    std::vector<size_t> bytes;
    char *snapshot = static_cast<char *>(deviceSnapshot_);
    for (const auto &buffer : state_) {
      dst.push_back(toSnapshot ? snapshot : buffer->stepData());
      src.push_back(toSnapshot ? buffer->stepData() : snapshot);
      bytes.push_back(buffer->numBytes());
      snapshot += buffer->numBytes();
    }
    if (std::string why = device_->copy(dst.data(), src.data(), bytes.data(),
                                        static_cast<int64_t>(dst.size()));
        !why.empty())
      return Error(MSAMP_ERROR_RUNTIME,
                   std::string(toSnapshot ? "copying the state before the step"
                                          : "undoing the step's update") +
                       ": " + why);
    return Error::success();
  }
  size_t at = 0;
  for (const auto &buffer : state_) {
    if (toSnapshot)
      std::memcpy(snapshot_.data() + at, buffer->data(), buffer->numBytes());
    else
      std::memcpy(buffer->data(), snapshot_.data() + at, buffer->numBytes());
    at += buffer->numBytes();
  }
  return Error::success();
}

Error Session::snapshotState() { return copyState(/*toSnapshot=*/true); }

Error Session::restoreState() { return copyState(/*toSnapshot=*/false); }

Session::~Session() {
  msamp_rt_index_checks_destroy(indexChecks_);
  if (deviceSnapshot_)
    device_->release(deviceSnapshot_);
}

/// "nan", "inf" or "-inf".
static std::string spellFloat(float v) {
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

std::string Session::findNonFiniteTensor(
    const std::vector<std::unique_ptr<TensorBuffer>> &buffers,
    bool dataOnly) const {
  std::vector<const TensorBuffer *> scanned;
  for (const auto &buffer : buffers) {
    const std::string &role = buffer->spec().role;
    if (!dataOnly || role == "input" || role == "target")
      scanned.push_back(buffer.get());
  }
  std::vector<int64_t> first(scanned.size(), -1);
  if (memory_ != BufferMemory::Host) {
    // On the device, for the reason of copyState; one wait for all.
    std::vector<const void *> data;
    std::vector<int64_t> counts, at;
    std::vector<int32_t> widths;
    std::vector<uint64_t> masks;
    for (size_t k = 0; k < scanned.size(); ++k) {
      int32_t width = 0;
      uint64_t mask = 0;
      if (!nonFiniteBits(scanned[k]->spec().dtype, width, mask))
        continue;
      data.push_back(scanned[k]->stepData());
      counts.push_back(scanned[k]->spec().numElements);
      widths.push_back(width);
      masks.push_back(mask);
      at.push_back(static_cast<int64_t>(k));
    }
    std::vector<int64_t> found(data.size(), -1);
    if (std::string message = device_->findAllOnes(
            data.data(), counts.data(), widths.data(), masks.data(),
            static_cast<int64_t>(data.size()), found.data());
        !message.empty())
      return "(the check on the device failed: " + message + ")";
    for (size_t j = 0; j < found.size(); ++j)
      first[static_cast<size_t>(at[j])] = found[j];
  } else {
    for (size_t k = 0; k < scanned.size(); ++k)
      first[k] = findNonFinite(scanned[k]->spec().dtype, scanned[k]->data(),
                               scanned[k]->spec().numElements);
  }
  for (size_t k = 0; k < scanned.size(); ++k)
    if (first[k] >= 0) {
      const TensorSpec &spec = scanned[k]->spec();
      // The value, from the device (rare: the step is refused).
      if (Error e = scanned[k]->download())
        return "'" + spec.name + "' holds a non-finite value at element " +
               std::to_string(first[k]) + " (" + e.message() + ")";
      return "'" + spec.name + "' holds " +
             spellNonFinite(spec.dtype, scanned[k]->data(), first[k]) +
             " at element " + std::to_string(first[k]);
    }
  return "";
}

Error Session::step(float lr, uint32_t flags, float &loss) {
  // The state of a fresh session is whatever the allocator left there: a
  // step on it fails somewhere later, with a misleading message.
  if (!initialized_)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "the session is not initialized: call msamp_session_init "
                 "or msamp_session_load before stepping it");
  const bool eval = flags & MSAMP_STEP_EVAL;
  const bool skipNonFinite = flags & MSAMP_STEP_SKIP_NONFINITE;
  const int64_t before = completedSteps();
  const int64_t number = before + 1;
  // The step multiplies the update by lr: NaN or Inf turns every parameter
  // into NaN (with a finite loss, so the checks below would not see it
  // until the next step) and a negative one ascends the loss. 0 is a
  // finished schedule.
  if (!(lr >= 0.0f) || std::isinf(lr))
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "step " + std::to_string(number) +
                     ": the learning rate must be finite and >= 0, got " +
                     (std::isnan(lr) || std::isinf(lr) ? spellFloat(lr)
                                                       : std::to_string(lr)));
  if (lrInput_)
    std::memcpy(lrInput_->data(), &lr, sizeof(lr));
  if (maxGradNormInput_)
    std::memcpy(maxGradNormInput_->data(), &maxGradNorm_, sizeof(maxGradNorm_));
  if (trainingInput_) {
    const float training = eval ? 0.0f : 1.0f;
    std::memcpy(trainingInput_->data(), &training, sizeof(training));
  }
  // The batch and the values above into the step's fixed input buffers
  // (a CUDA graph replays on their addresses): one copy, one wait.
  if (Error e = uploadAll(inputs_))
    return e;
  // Non-finite data: FP8 casts saturate an Inf input to the format's
  // maximum, so at O1-O3 the loss can stay finite; read the inputs. One
  // process decides before the step, so nothing runs and nothing needs
  // undoing; data-parallel ranks run the step and agree on the flag after
  // it (a rank that stayed out of the step's collectives would hang them).
  const std::string badInput = findNonFiniteTensor(inputs_, /*dataOnly=*/true);
  const std::string at = " at step " + std::to_string(number);
  if (!badInput.empty() && msamp_rt_world_size() == 1) {
    const std::string message = "non-finite input" + at + ": " + badInput;
    if (eval || !skipNonFinite)
      return Error(MSAMP_ERROR_NONFINITE, message);
    return skipStep(before, message);
  }
  // A bad index input on one data-parallel rank: the compiled step would
  // not run there and leave the other ranks in its collectives. Every rank
  // runs the step's index checks first, and all refuse together
  // (RankAgreement.h), naming the rank.
  if (msamp_rt_world_size() > 1 && checkInputs_) {
    msamp_rt_clear_error();
    std::string mine;
    if (int32_t status = checkInputs_(descriptors_.data()))
      mine = "the runtime reported error " + std::to_string(status) + ": " +
             msamp_rt_get_last_error_message();
    msamp_rt_clear_error();
    std::string agreed;
    if (Error e = agreeOnRefusal(!mine.empty(), mine, agreed))
      return e;
    if (!agreed.empty())
      return Error(MSAMP_ERROR_RUNTIME,
                   "step " + std::to_string(number) + ": " + agreed);
  }
  // Every step may be refused after it ran (a non-finite update, a
  // computed index out of range, another rank's fault): the copy it is
  // undone from is taken always, into the buffer allocated at open.
  if (Error e = snapshotState())
    return e;

  msamp_rt_clear_error();
  // The step's own heap (RuntimeABI.md 14), counted on this thread.
  msamp_rt_reset_step_peak_bytes();
  const int64_t liveBefore = msamp_rt_step_live_bytes();
  auto recorded = [] {
    std::string error;
    if (msamp_rt_status status = msamp_rt_get_last_error())
      error = "the runtime reported error " +
              std::to_string(static_cast<int>(status)) + ": " +
              msamp_rt_get_last_error_message();
    msamp_rt_clear_error();
    return error;
  };
  // A runtime error in the step (an index computed in the graph out of
  // range: the step ran on, clamped) refuses it; data-parallel ranks agree
  // on it, so that all undo the step and none waits in the agreement below.
  std::string runtimeError = graph_.run(
      runtimeGraphDevice(),
      [&] {
        // Every run of the step's host code (eager, warm-up, capture)
        // numbers its checks from 0; a replay reuses the captured ones.
        msamp_rt_index_checks_begin(indexChecks_);
        if (device_)
          device_->run([&] { packed_(descriptors_.data()); });
        else
          packed_(descriptors_.data());
        return recorded();
      },
      [&] { (void)restoreState(); },
      [&] {
        if (checkInputs_)
          checkInputs_(descriptors_.data());
        return recorded();
      });
  if (memory_ != BufferMemory::Host) {
    // A GPU step returns with its work enqueued (RuntimeABI.md 13.1): the
    // loss, the metrics and any kernel's fault are there after this wait.
    device_->synchronize();
    // A computed index out of range, found on the stream: the CPU's error
    // of the first failing check in step order, unless one came earlier.
    msamp_rt_index_checks_end(indexChecks_);
    if (std::string late = recorded(); runtimeError.empty())
      runtimeError = late;
  }
  stepPeakBytes_ =
      std::max(stepPeakBytes_, msamp_rt_step_peak_bytes() - liveBefore);
  if (!runtimeError.empty() || msamp_rt_world_size() > 1) {
    std::string agreed;
    Error e = agreeOnRefusal(!runtimeError.empty(), runtimeError, agreed);
    if (e || !agreed.empty()) {
      if (Error undone = restoreState())
        return undone;
      if (e)
        return e;
      return Error(MSAMP_ERROR_RUNTIME,
                   "step " + std::to_string(number) + ": " + agreed);
    }
  }
  // The loss and the metrics, read back from the device in one copy.
  std::vector<const TensorBuffer *> outputs = {loss_.get()};
  for (const auto &metric : metrics_)
    outputs.push_back(metric.get());
  if (Error e = copyBuffers(outputs, /*toDevice=*/false)) {
    if (Error undone = restoreState())
      return undone;
    return e;
  }
  std::memcpy(&loss, loss_->data(), sizeof(loss));
  if (eval) {
    if (Error undone = restoreState())
      return undone;
    if (!badInput.empty())
      return Error(MSAMP_ERROR_NONFINITE,
                   "non-finite input" + at + ": " + badInput);
    return Error::success();
  }
  if (!stepState_)
    ++localSteps_;
  // A non-finite gradient is as fatal to the update as a non-finite loss,
  // but FP8 casts saturate: the step reports it from the recorded amaxes
  // and the gradient norm (its "nonfinite" metric), not from the bytes.
  float nonFinite = 0.0f;
  if (nonFiniteMetric_)
    std::memcpy(&nonFinite, nonFiniteMetric_->data(), sizeof(nonFinite));
  bool dataBad = !badInput.empty();
  bool lossBad = !std::isfinite(loss);
  bool gradsBad = nonFinite != 0.0f;
  // A finite loss and gradient norm can still overflow the update (Adam's
  // second moment in f16 at O2 under a huge lr): the state decides.
  std::string badState;
  if (!dataBad && !lossBad && !gradsBad)
    badState = findNonFiniteTensor(state_, /*dataOnly=*/false);
  bool stateBad = !badState.empty();
  // Each rank's loss is over its own batch, so one rank may see a
  // non-finite loss the others do not. Skipping (restoring the state) or
  // stopping on some ranks only would let the replicas diverge: every rank
  // decides on the flags of all ranks. The gradients are all-reduced inside
  // the step, so their flag already agrees; it rides along for free.
  if (msamp_rt_world_size() > 1) {
    float flags[4] = {lossBad ? 1.0f : 0.0f, gradsBad ? 1.0f : 0.0f,
                      dataBad ? 1.0f : 0.0f, stateBad ? 1.0f : 0.0f};
    if (msamp_rt_allreduce_f32(flags, 4, /*max=*/1) != MSAMP_RT_OK) {
      std::string message = msamp_rt_get_last_error_message();
      msamp_rt_clear_error();
      if (Error undone = restoreState())
        return undone;
      return Error(MSAMP_ERROR_RUNTIME,
                   "step " + std::to_string(number) +
                       ": agreeing on the non-finite check across ranks "
                       "failed: " +
                       message);
    }
    if (flags[2] != 0.0f && !dataBad)
      return finishNonFinite(skipNonFinite, before,
                             "non-finite input on another rank" + at);
    if (flags[0] != 0.0f && !lossBad && !dataBad)
      return finishNonFinite(skipNonFinite, before,
                             "non-finite loss on another rank" + at);
    gradsBad = gradsBad || flags[1] != 0.0f;
    if (flags[3] != 0.0f && !stateBad && !gradsBad && !lossBad && !dataBad)
      return finishNonFinite(skipNonFinite, before,
                             "non-finite state after the update on another "
                             "rank" +
                                 at);
  }
  if (!dataBad && !lossBad && !gradsBad && !stateBad) {
    consecutiveSkipped_ = 0;
    return Error::success();
  }
  if (dataBad)
    return finishNonFinite(skipNonFinite, before,
                           "non-finite input" + at + ": " + badInput);
  if (lossBad)
    return finishNonFinite(skipNonFinite, before,
                           "non-finite loss (" + spellFloat(loss) + ")" + at);
  if (gradsBad) {
    std::string norm;
    float gradNorm = 0.0f;
    if (!metricValue("grad_norm", gradNorm))
      norm = std::isfinite(gradNorm) ? std::to_string(gradNorm)
                                     : spellFloat(gradNorm);
    return finishNonFinite(
        skipNonFinite, before,
        "non-finite gradients (detected from amax)" + at +
            (norm.empty() ? "" : " (grad norm " + norm + ")"));
  }
  return finishNonFinite(skipNonFinite, before,
                         "non-finite state after the update" + at + ": " +
                             badState + " (the update was undone)");
}

void Session::setCudaGraphs(bool on) {
  if (cudaStep_)
    graph_.configure(on, graphWhyNot_);
}

Error Session::finishNonFinite(bool skip, int64_t before,
                               const std::string &message) {
  if (Error undone = restoreState())
    return undone;
  if (!skip) {
    if (Error e = setCompletedSteps(before))
      return e;
    return Error(MSAMP_ERROR_NONFINITE, message);
  }
  return skipStep(before, message);
}

Error Session::skipStep(int64_t before, const std::string &message) {
  if (Error e = setCompletedSteps(before + 1))
    return e;
  ++numSkipped_;
  ++consecutiveSkipped_;
  lastSkipReason_ = message;
  return Error::success();
}

int64_t Session::worldSize() const {
  return manifest_.worldSize > 1 ? manifest_.worldSize
                                 : static_cast<int64_t>(msamp_rt_world_size());
}

bool Session::isRankLocal(const TensorSpec &spec) const {
  // Buffers (running statistics) come from each rank's own batch. Scaling
  // state belongs to the tensor it quantizes: a param's (`fc1.weight.scale`)
  // follows the replicated param, an activation's or output gradient's
  // (`fc1.fprop.input.amax_history`) records this rank's amaxes.
  if (spec.role == "buffer" || spec.sharded)
    return true;
  if (spec.role != "scaling_state")
    return false;
  for (const char *suffix : {".scale", ".amax_history"}) {
    const std::string tail = suffix;
    if (spec.name.size() > tail.size() &&
        spec.name.compare(spec.name.size() - tail.size(), tail.size(), tail) ==
            0) {
      const TensorBuffer *owner =
          findState(spec.name.substr(0, spec.name.size() - tail.size()));
      return !owner || owner->spec().role != "param";
    }
  }
  return true;
}

std::string Session::stateChecksum(bool replicatedOnly) const {
  // SHA-256 of the state's bytes, tensor by tensor in manifest order, each
  // preceded by its name: equal checksums mean byte-identical replicas.
  Sha256 hash;
  if (Error e = downloadAll(state_))
    return "(" + e.message() + ")";
  for (const auto &buffer : state_) {
    if (replicatedOnly && isRankLocal(buffer->spec()))
      continue;
    const std::string &name = buffer->spec().name;
    hash.update(name.c_str(), name.size() + 1);
    hash.update(buffer->data(), static_cast<size_t>(buffer->numBytes()));
  }
  return hash.hexDigest();
}

Error Session::setMaxGradNorm(double maxNorm) {
  if (std::isnan(maxNorm) || std::isinf(maxNorm))
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "the gradient clipping threshold must be finite (<= 0 "
                 "disables clipping)");
  if (!maxGradNormInput_) {
    if (maxNorm > 0)
      return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                   "this compiled step has no max_grad_norm input; recompile "
                   "it with this msamp (msamp-compile) to clip gradients");
    return Error::success();
  }
  // Fed as f32 like every hyperparameter; a positive threshold below the f32
  // range must still turn clipping on, so it never rounds to 0.
  maxGradNorm_ = maxNorm > 0
                     ? std::max(static_cast<float>(maxNorm),
                                std::numeric_limits<float>::denorm_min())
                     : 0.0f;
  return Error::success();
}

Error Session::metricValue(const std::string &name, float &value) const {
  for (const auto &metric : metrics_)
    if (metric->spec().name == name) {
      std::memcpy(&value, metric->data(), sizeof(value));
      return Error::success();
    }
  return Error(MSAMP_ERROR_INVALID_ARGUMENT,
               "the step has no metric named '" + name +
                   "' (steps compiled by an older msamp have none)");
}

Error Session::readParam(const std::string &name, float *out,
                         int64_t count) const {
  TensorBuffer *buffer = findState(name);
  if (!buffer)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "no state tensor named '" + name + "'");
  const TensorSpec &spec = buffer->spec();
  if (count != spec.numElements || !out)
    return Error(MSAMP_ERROR_MISMATCH,
                 "'" + name + "' has " + std::to_string(spec.numElements) +
                     " elements, the output buffer " + std::to_string(count));
  float scaleInv = 1.0f;
  if (Error e = buffer->download())
    return e;
  if (TensorBuffer *scale = findState(scaleName(name)))
    if (scale->spec().dtype == ElementType::F32 &&
        scale->spec().numElements == 1) {
      if (Error e = scale->download())
        return e;
      float s;
      std::memcpy(&s, scale->data(), sizeof(s));
      scaleInv = 1.0f / s;
    }
  decodeToF32(spec.dtype, buffer->data(), spec.numElements, scaleInv, out);
  return Error::success();
}

} // namespace msamp::session
