//===- BackendRegistry.cpp - Name-keyed backend registry ------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Backends register a factory under a name from a static initializer in
// their own file (MSAMP_RT_REGISTER_BACKEND), the way IREE's driver registry
// and CIRCT's REGISTER_ACCELERATOR work, so adding the CUDA backend touches
// no code here. Each backend is instantiated at most once and never
// destroyed: kernel calls may be in flight on another thread while a session
// switches backends, and a process-lifetime object is simpler than reference
// counting for an object that costs nothing when idle.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "Status.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace msamp::runtime {

Backend::~Backend() = default;

namespace {

struct Entry {
  std::string name;
  BackendFactory factory = nullptr;
  Backend *instance = nullptr; // created on first selection, then kept
};

// A fixed table keeps registration free of allocation-order questions in
// static initializers; there will be a handful of backends, not dozens.
constexpr int kMaxBackends = 16;

struct Registry {
  std::mutex mutex;
  Entry entries[kMaxBackends];
  int count = 0;
  std::atomic<Backend *> current{nullptr};
};

Registry &registry() {
  // Leaked on purpose (see the file comment); function-local so that it is
  // constructed before the first static registration uses it.
  static Registry *r = new Registry();
  return *r;
}

std::string availableNames(const Registry &r) {
  std::string names;
  for (int i = 0; i < r.count; ++i) {
    if (i)
      names += ", ";
    names += r.entries[i].name;
  }
  return names;
}

/// Selects `name` with the registry lock held.
msamp_rt_status selectLocked(Registry &r, const char *name) {
  Entry *entry = nullptr;
  for (int i = 0; i < r.count; ++i)
    if (r.entries[i].name == name)
      entry = &r.entries[i];
  if (!entry)
    return recordError(MSAMP_RT_ERROR_UNKNOWN_BACKEND,
                       "msamp_rt_set_backend: unknown backend '%s' "
                       "(available: %s)",
                       name, availableNames(r).c_str());
  if (!entry->instance) {
    std::unique_ptr<Backend> created = entry->factory();
    if (!created)
      return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                         "msamp_rt_set_backend: backend '%s' is not "
                         "available on this machine",
                         name);
    entry->instance = created.release();
  }
  r.current.store(entry->instance, std::memory_order_release);
  return MSAMP_RT_OK;
}

} // namespace

bool registerBackend(const char *name, BackendFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!name || !factory || r.count == kMaxBackends)
    return false;
  for (int i = 0; i < r.count; ++i)
    if (r.entries[i].name == name)
      return false;
  r.entries[r.count].name = name;
  r.entries[r.count].factory = factory;
  ++r.count;
  return true;
}

Backend *currentBackend() {
  Registry &r = registry();
  if (Backend *b = r.current.load(std::memory_order_acquire))
    return b;
  std::lock_guard<std::mutex> lock(r.mutex);
  if (Backend *b = r.current.load(std::memory_order_acquire))
    return b;
  const char *env = std::getenv("MSAMP_BACKEND");
  const char *name = (env && *env) ? env : "cpu";
  if (selectLocked(r, name) != MSAMP_RT_OK) {
    recordError(MSAMP_RT_ERROR_NO_BACKEND,
                "msamp runtime: no backend selected (MSAMP_BACKEND='%s')",
                name);
    return nullptr;
  }
  return r.current.load(std::memory_order_acquire);
}

msamp_rt_status selectBackend(const char *name) {
  if (!name)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_set_backend: name is null");
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return selectLocked(r, name);
}

} // namespace msamp::runtime

using namespace msamp::runtime;

extern "C" {

MSAMP_RT_EXPORT msamp_rt_status msamp_rt_set_backend(const char *name) {
  return selectBackend(name);
}

MSAMP_RT_EXPORT const char *msamp_rt_get_backend(void) {
  Backend *b = currentBackend();
  return b ? b->name() : nullptr;
}

} // extern "C"
