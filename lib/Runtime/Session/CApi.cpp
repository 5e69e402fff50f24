//===- CApi.cpp - The C boundary of libmsamp_session ----------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every exported function validates its pointers, calls into the C++ session
// inside a try block and turns an Error into its status code plus the
// thread-local message. Nothing thrown below (std::bad_alloc, a JSON library
// exception that slipped through) may unwind into C, Python or compiled
// code, so every entry point catches everything.
//
//===----------------------------------------------------------------------===//

#include "Session.h"
#include "Sha256.h"
#include "Vocabulary.h"

#include "MSAMP/Runtime/msamp_session.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <new>
#include <set>

#ifndef MSAMP_VERSION_STRING
#define MSAMP_VERSION_STRING "unknown"
#endif

using namespace msamp::session;

struct msamp_session {
  std::unique_ptr<Session> impl;
};

namespace {

thread_local std::string lastMessage;

msamp_status report(const Error &error) {
  if (error)
    lastMessage = error.message();
  return error.code();
}

msamp_status invalid(const std::string &message) {
  return report(Error(MSAMP_ERROR_INVALID_ARGUMENT, message));
}

/// Runs `body` (returning Error) with every exception mapped to a status.
template <typename Fn>
msamp_status guarded(const char *function, Fn body) {
  try {
    return report(body());
  } catch (const std::bad_alloc &) {
    return report(Error(MSAMP_ERROR_OUT_OF_MEMORY,
                        std::string(function) + ": out of memory"));
  } catch (const std::exception &e) {
    return report(
        Error(MSAMP_ERROR_INTERNAL,
              std::string(function) + ": internal error: " + e.what()));
  } catch (...) {
    return report(Error(MSAMP_ERROR_INTERNAL,
                        std::string(function) + ": internal error"));
  }
}

/// `info` for `buffer` of `session`. A device buffer's `data` is its host
/// copy, made current (Session::refreshHostCopy; writes go through
/// msamp_session_write_tensor).
Error fillInfo(const Session &session, const TensorBuffer &buffer,
               msamp_tensor_info *info) {
  if (Error e = session.refreshHostCopy(buffer))
    return e;
  const TensorSpec &spec = buffer.spec();
  info->name = spec.name.c_str();
  info->role = spec.role.c_str();
  info->dtype = mlirName(spec.dtype);
  info->rank = static_cast<int32_t>(spec.shape.size());
  info->shape = spec.shape.data();
  info->num_elements = spec.numElements;
  info->num_bytes = spec.numBytes;
  info->data = const_cast<void *>(buffer.data());
  return Error::success();
}

/// msamp_session.h's step flags by name, for msamp_step_flag_name/_bit.
struct StepFlag {
  const char *name;
  uint32_t bit;
};
constexpr StepFlag kStepFlags[] = {
#define MSAMP_STEP_FLAG_ENTRY(ID, name) {name, MSAMP_STEP_##ID},
    MSAMP_STEP_FLAG_LIST(MSAMP_STEP_FLAG_ENTRY)
#undef MSAMP_STEP_FLAG_ENTRY
};

} // namespace

extern "C" {

const char *msamp_last_error_message(void) { return lastMessage.c_str(); }

const char *msamp_version(void) { return MSAMP_VERSION_STRING; }

const char *msamp_dtype_name(int32_t code) {
  std::optional<ElementType> type = fromRuntimeDtype(code);
  return type ? mlirName(*type) : nullptr;
}

const char *msamp_role_name(int32_t role) {
  if (role < 0 || role >= MSAMP_NUM_ROLES)
    return nullptr;
  return roleName(static_cast<msamp_role>(role));
}

int32_t msamp_role_kind_of(int32_t role) {
  if (role < 0 || role >= MSAMP_NUM_ROLES)
    return -1;
  return roleKind(static_cast<msamp_role>(role));
}

const char *msamp_memory_category_name(int32_t category) {
  if (category < 0 || category >= MSAMP_MEMORY_NUM_CATEGORIES)
    return nullptr;
  return memoryCategoryName(static_cast<msamp_memory_category_id>(category));
}

const char *msamp_step_flag_name(int32_t index) {
  if (index < 0 || index >= static_cast<int32_t>(std::size(kStepFlags)))
    return nullptr;
  return kStepFlags[index].name;
}

uint32_t msamp_step_flag_bit(int32_t index) {
  if (index < 0 || index >= static_cast<int32_t>(std::size(kStepFlags)))
    return 0;
  return kStepFlags[index].bit;
}

const char *msamp_lr_schedule_name(int32_t schedule) {
  switch (schedule) {
  case MSAMP_LR_CONSTANT:
    return "constant";
  case MSAMP_LR_COSINE:
    return "cosine";
  }
  return nullptr;
}

const char *msamp_status_name(msamp_status status) {
  switch (status) {
  case MSAMP_OK:
    return "MSAMP_OK";
  case MSAMP_ERROR_INVALID_ARGUMENT:
    return "MSAMP_ERROR_INVALID_ARGUMENT";
  case MSAMP_ERROR_IO:
    return "MSAMP_ERROR_IO";
  case MSAMP_ERROR_MANIFEST:
    return "MSAMP_ERROR_MANIFEST";
  case MSAMP_ERROR_FORMAT:
    return "MSAMP_ERROR_FORMAT";
  case MSAMP_ERROR_MISMATCH:
    return "MSAMP_ERROR_MISMATCH";
  case MSAMP_ERROR_LOAD:
    return "MSAMP_ERROR_LOAD";
  case MSAMP_ERROR_RUNTIME:
    return "MSAMP_ERROR_RUNTIME";
  case MSAMP_ERROR_NONFINITE:
    return "MSAMP_ERROR_NONFINITE";
  case MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT:
    return "MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT";
  case MSAMP_ERROR_OUT_OF_MEMORY:
    return "MSAMP_ERROR_OUT_OF_MEMORY";
  case MSAMP_ERROR_INTERNAL:
    return "MSAMP_ERROR_INTERNAL";
  }
  return "MSAMP_ERROR_UNKNOWN";
}

msamp_status msamp_session_open(const char *dir, msamp_session **out) {
  if (!dir || !out)
    return invalid("msamp_session_open: null argument");
  *out = nullptr;
  return guarded("msamp_session_open", [&]() -> Error {
    std::unique_ptr<Session> session;
    if (Error e = Session::open(dir, session))
      return e;
    *out = new msamp_session{std::move(session)};
    return Error::success();
  });
}

void msamp_session_close(msamp_session *session) { delete session; }

const char *msamp_session_level(const msamp_session *s) {
  return s ? s->impl->manifest().level.c_str() : "";
}

int64_t msamp_session_world_size(const msamp_session *s) {
  return s ? s->impl->worldSize() : 0;
}

msamp_status msamp_session_state_checksum(const msamp_session *s,
                                          int32_t replicated_only,
                                          char hex[65]) {
  if (!s || !hex)
    return invalid("msamp_session_state_checksum: need a session and a "
                   "65-byte buffer");
  std::string digest = s->impl->stateChecksum(replicated_only != 0);
  std::memcpy(hex, digest.c_str(), digest.size() + 1);
  return MSAMP_OK;
}

const char *msamp_session_graph_hash(const msamp_session *s) {
  return s ? s->impl->graphHash().c_str() : "";
}

double msamp_session_default_lr(const msamp_session *s) {
  return s ? s->impl->defaultLR() : 0.0;
}

int64_t msamp_session_num_state(const msamp_session *s) {
  return s ? static_cast<int64_t>(s->impl->state().size()) : 0;
}

msamp_status msamp_session_state_info(const msamp_session *s, int64_t i,
                                      msamp_tensor_info *info) {
  if (!s || !info)
    return invalid("msamp_session_state_info: null argument");
  if (i < 0 || i >= msamp_session_num_state(s))
    return invalid("msamp_session_state_info: index " + std::to_string(i) +
                   " out of range");
  return guarded("msamp_session_state_info", [&] {
    return fillInfo(*s->impl, *s->impl->state()[static_cast<size_t>(i)], info);
  });
}

int64_t msamp_session_num_inputs(const msamp_session *s) {
  return s ? static_cast<int64_t>(s->impl->inputs().size()) : 0;
}

msamp_status msamp_session_input_info(const msamp_session *s, int64_t i,
                                      msamp_tensor_info *info) {
  if (!s || !info)
    return invalid("msamp_session_input_info: null argument");
  if (i < 0 || i >= msamp_session_num_inputs(s))
    return invalid("msamp_session_input_info: index " + std::to_string(i) +
                   " out of range");
  return guarded("msamp_session_input_info", [&] {
    return fillInfo(*s->impl, *s->impl->inputs()[static_cast<size_t>(i)], info);
  });
}

msamp_status msamp_session_find(const msamp_session *s, const char *name,
                                msamp_tensor_info *info) {
  if (!s || !name || !info)
    return invalid("msamp_session_find: null argument");
  return guarded("msamp_session_find", [&]() -> Error {
    TensorBuffer *buffer = s->impl->findState(name);
    if (!buffer)
      buffer = s->impl->findInput(name);
    if (!buffer)
      return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                   std::string("no state or input named '") + name + "'");
    return fillInfo(*s->impl, *buffer, info);
  });
}

msamp_status msamp_session_read_tensor(const msamp_session *s, const char *name,
                                       void *out, int64_t num_bytes) {
  if (!s || !name || (!out && num_bytes))
    return invalid("msamp_session_read_tensor: null argument");
  return guarded("msamp_session_read_tensor",
                 [&] { return s->impl->readTensor(name, out, num_bytes); });
}

msamp_status msamp_session_write_tensor(msamp_session *s, const char *name,
                                        const void *data, int64_t num_bytes) {
  if (!s || !name || (!data && num_bytes))
    return invalid("msamp_session_write_tensor: null argument");
  return guarded("msamp_session_write_tensor",
                 [&] { return s->impl->writeTensor(name, data, num_bytes); });
}

msamp_status msamp_session_read_param(const msamp_session *s, const char *name,
                                      float *out, int64_t count) {
  if (!s || !name || !out)
    return invalid("msamp_session_read_param: null argument");
  return guarded("msamp_session_read_param",
                 [&] { return s->impl->readParam(name, out, count); });
}

msamp_status msamp_session_init(msamp_session *s, uint64_t seed,
                                const char *init_file, int64_t *num_from_file) {
  if (!s)
    return invalid("msamp_session_init: null session");
  return guarded("msamp_session_init", [&]() -> Error {
    std::string path = init_file ? init_file : "";
    int64_t fromFile = 0;
    Error e = s->impl->initialize(seed, init_file ? &path : nullptr, &fromFile);
    if (num_from_file)
      *num_from_file = fromFile;
    return e;
  });
}

msamp_status msamp_session_export_weights(const msamp_session *s,
                                          const char *path) {
  if (!s || !path)
    return invalid("msamp_session_export_weights: null argument");
  return guarded("msamp_session_export_weights",
                 [&] { return s->impl->exportWeights(path); });
}

msamp_status msamp_export_checkpoint_weights(const char *checkpoint,
                                             const char *step_dir,
                                             const char *path) {
  if (!checkpoint || !path)
    return invalid("msamp_export_checkpoint_weights: null argument");
  return guarded("msamp_export_checkpoint_weights", [&] {
    return exportCheckpointWeights(checkpoint, step_dir ? step_dir : "", path);
  });
}

int64_t msamp_checkpoint_shard_path(const char *checkpoint, int64_t rank,
                                    char *out, int64_t size) {
  if (!checkpoint || rank < 0 || size < 0 || (size > 0 && !out)) {
    (void)invalid("msamp_checkpoint_shard_path: null checkpoint or output, "
                  "or a negative rank or size");
    return -1;
  }
  const std::string path = shardPath(checkpoint, rank);
  if (size > 0) {
    const size_t n = std::min(path.size(), static_cast<size_t>(size - 1));
    std::memcpy(out, path.data(), n);
    out[n] = '\0';
  }
  return static_cast<int64_t>(path.size());
}

msamp_status msamp_session_save(const msamp_session *s, const char *path) {
  if (!s || !path)
    return invalid("msamp_session_save: null argument");
  return guarded("msamp_session_save", [&] { return s->impl->save(path); });
}

msamp_status msamp_session_load(msamp_session *s, const char *path) {
  if (!s || !path)
    return invalid("msamp_session_load: null argument");
  return guarded("msamp_session_load", [&] { return s->impl->load(path); });
}

msamp_status msamp_session_set_input(msamp_session *s, const char *name,
                                     const void *data, int64_t num_bytes) {
  if (!s || !name || !data)
    return invalid("msamp_session_set_input: null argument");
  return guarded("msamp_session_set_input",
                 [&] { return s->impl->setInput(name, data, num_bytes); });
}

msamp_status msamp_session_open_data(msamp_session *s, const char *path,
                                     int64_t *num_batches,
                                     int64_t *num_ignored) {
  if (!s || !path || !num_batches)
    return invalid("msamp_session_open_data: null argument");
  return guarded("msamp_session_open_data", [&]() -> Error {
    int64_t ignored = 0;
    Error e = s->impl->openData(path, *num_batches, ignored);
    if (num_ignored)
      *num_ignored = ignored;
    return e;
  });
}

msamp_status msamp_session_select_batch(msamp_session *s, int64_t k) {
  if (!s)
    return invalid("msamp_session_select_batch: null session");
  return guarded("msamp_session_select_batch",
                 [&] { return s->impl->selectBatch(k); });
}

msamp_status msamp_session_synthetic_batch(msamp_session *s, uint64_t seed,
                                           int64_t step, int64_t num_classes) {
  if (!s)
    return invalid("msamp_session_synthetic_batch: null session");
  return guarded("msamp_session_synthetic_batch", [&] {
    return s->impl->syntheticBatch(seed, step, num_classes);
  });
}

msamp_status msamp_session_step(msamp_session *s, float lr, uint32_t flags,
                                float *loss) {
  if (!s || !loss)
    return invalid("msamp_session_step: null argument");
  if (flags & ~(MSAMP_STEP_SKIP_NONFINITE | MSAMP_STEP_EVAL))
    return invalid("msamp_session_step: unknown flags " +
                   std::to_string(flags));
  return guarded("msamp_session_step",
                 [&] { return s->impl->step(lr, flags, *loss); });
}

msamp_status msamp_session_set_max_grad_norm(msamp_session *s,
                                             double max_norm) {
  if (!s)
    return invalid("msamp_session_set_max_grad_norm: null session");
  return guarded("msamp_session_set_max_grad_norm",
                 [&] { return s->impl->setMaxGradNorm(max_norm); });
}

int64_t msamp_session_num_metrics(const msamp_session *s) {
  return s ? static_cast<int64_t>(s->impl->metrics().size()) : 0;
}

msamp_status msamp_session_metric_info(const msamp_session *s, int64_t i,
                                       msamp_tensor_info *info) {
  if (!s || !info)
    return invalid("msamp_session_metric_info: null argument");
  if (i < 0 || i >= msamp_session_num_metrics(s))
    return invalid("msamp_session_metric_info: index " + std::to_string(i) +
                   " out of range");
  return guarded("msamp_session_metric_info", [&] {
    return fillInfo(*s->impl, *s->impl->metrics()[static_cast<size_t>(i)],
                    info);
  });
}

msamp_status msamp_session_metric(const msamp_session *s, const char *name,
                                  float *value) {
  if (!s || !name || !value)
    return invalid("msamp_session_metric: null argument");
  return guarded("msamp_session_metric",
                 [&] { return s->impl->metricValue(name, *value); });
}

int64_t msamp_session_get_step(const msamp_session *s) {
  return s ? s->impl->completedSteps() : 0;
}

int64_t msamp_session_num_skipped(const msamp_session *s) {
  return s ? s->impl->numSkipped() : 0;
}

int64_t msamp_session_num_consecutive_skipped(const msamp_session *s) {
  return s ? s->impl->consecutiveSkipped() : 0;
}

const char *msamp_session_last_skip_reason(const msamp_session *s) {
  return s ? s->impl->lastSkipReason().c_str() : "";
}

msamp_status msamp_session_set_cuda_graphs(msamp_session *s, int32_t on) {
  if (!s)
    return invalid("msamp_session_set_cuda_graphs: null session");
  s->impl->setCudaGraphs(on != 0);
  return MSAMP_OK;
}

int64_t msamp_session_cuda_graph_steps(const msamp_session *s) {
  return s ? s->impl->cudaGraph().replayed() : 0;
}

const char *msamp_session_cuda_graph_note(const msamp_session *s) {
  return s ? s->impl->cudaGraph().note().c_str() : "";
}

double msamp_lr_at(msamp_lr_schedule schedule, double base_lr, int64_t warmup,
                   int64_t total_steps, int64_t step) {
  if (step < 1)
    step = 1;
  if (warmup > 0 && step <= warmup)
    return base_lr * static_cast<double>(step) / static_cast<double>(warmup);
  if (schedule != MSAMP_LR_COSINE)
    return base_lr;
  const int64_t span = total_steps - (warmup > 0 ? warmup : 0);
  if (span <= 0)
    return base_lr;
  double progress = static_cast<double>(step - 1 - (warmup > 0 ? warmup : 0)) /
                    static_cast<double>(span);
  if (progress > 1.0)
    progress = 1.0;
  if (progress < 0.0)
    progress = 0.0;
  return base_lr * 0.5 * (1.0 + std::cos(M_PI * progress));
}

msamp_status msamp_session_peak_bytes(const msamp_session *s,
                                      int64_t *session_bytes,
                                      int64_t *step_bytes) {
  if (!s)
    return invalid("msamp_session_peak_bytes: null session");
  if (session_bytes)
    *session_bytes = s->impl->boundBytes();
  if (step_bytes)
    *step_bytes = s->impl->stepPeakBytes();
  return MSAMP_OK;
}

msamp_status msamp_session_memory_report(
    const msamp_session *s,
    msamp_memory_category categories[MSAMP_MEMORY_NUM_CATEGORIES],
    int64_t *num_params) {
  if (!s || !categories)
    return invalid("msamp_session_memory_report: null argument");
  return guarded("msamp_session_memory_report", [&]() -> Error {
    // The categories of docs/TrainStep.md 3, from roles and state names.
    std::set<std::string> dtypes[MSAMP_MEMORY_NUM_CATEGORIES];
    int64_t bytes[MSAMP_MEMORY_NUM_CATEGORIES] = {0};
    int64_t params = 0;
    for (const auto &buffer : s->impl->state()) {
      const TensorSpec &spec = buffer->spec();
      // The compiler's rule (msamp_vocabulary.h); every state has one.
      int c = msamp_memory_category_of(
          msamp_role_of(spec.role.data(), spec.role.size()), spec.name.data(),
          spec.name.size());
      if (c < 0)
        continue;
      dtypes[c].insert(mlirName(spec.dtype));
      bytes[c] += spec.numBytes;
      if (spec.role == roleName(MSAMP_ROLE_PARAM))
        params += spec.wholeElements(); // a stage 3 piece counts its param
    }
    for (int c = 0; c < MSAMP_MEMORY_NUM_CATEGORIES; ++c) {
      categories[c].name =
          memoryCategoryName(static_cast<msamp_memory_category_id>(c));
      categories[c].bytes = bytes[c];
      // mlirName returns static strings, so the pointer outlives the call.
      categories[c].dtype =
          dtypes[c].empty() ? "none"
          : dtypes[c].size() > 1
              ? "mixed"
              : mlirName(*parseManifestType(*dtypes[c].begin()));
    }
    if (num_params)
      *num_params = params;
    return Error::success();
  });
}

void msamp_sha256(const void *data, size_t size, char hex[65]) {
  if (!hex)
    return;
  try {
    Sha256 hash;
    if (data)
      hash.update(data, size);
    std::string digest = hash.hexDigest();
    std::memcpy(hex, digest.c_str(), 65);
  } catch (...) {
    hex[0] = '\0';
  }
}

msamp_status msamp_sha256_file(const char *path, char hex[65]) {
  if (!path || !hex)
    return invalid("msamp_sha256_file: null argument");
  return guarded("msamp_sha256_file", [&]() -> Error {
    std::string digest;
    if (Error e = sha256File(path, digest))
      return e;
    std::memcpy(hex, digest.c_str(), 65);
    return Error::success();
  });
}

} // extern "C"
