//===- IndexChecks.cpp - Computed-index checks read after the step --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_index_checks_* (RuntimeABI.md 3.11): see IndexChecks.h.
//
//===----------------------------------------------------------------------===//

#include "IndexChecks.h"
#include "GpuHost.h"
#include "Status.h"

#include <cstring>
#include <vector>

using namespace msamp::runtime;

/// One step's deferred checks: a slot of two words per call in step order
/// (the lowest bad linear index, all ones when none; its value) and what
/// the message of each call needs, which stays on the host.
struct msamp_rt_index_checks {
  /// Slots the record holds: one per check a step makes. Fixed, because
  /// the device record cannot grow while the step is captured.
  static constexpr int64_t kSlots = 4096;

  struct Site {
    std::string what;
    std::vector<int64_t> sizes;
    int64_t upper = 0, ignoreIndex = 0;
    int32_t hasIgnore = 0;
  };

  const GpuHostTable *gpu = nullptr; ///< null: the slots are host memory
  void *deviceSlots = nullptr;
  std::vector<unsigned long long> slots; ///< host slots, or their copy
  std::vector<Site> sites; ///< every call the step's host code made
  int64_t next = 0;        ///< the next call's slot
};

namespace {

constexpr unsigned long long kNone = ~0ull;

thread_local msamp_rt_index_checks *current = nullptr;

} // namespace

namespace msamp::runtime {

bool deferComputedIndexCheck(const char *fn, const std::string &what,
                             const View &ids, int32_t dtype, int64_t upper,
                             int64_t ignoreIndex, int32_t hasIgnore) {
  msamp_rt_index_checks *checks = current;
  if (!checks)
    return false;
  const int64_t slot = checks->next++;
  if (slot >= msamp_rt_index_checks::kSlots) {
    recordError(MSAMP_RT_ERROR_INTERNAL,
                "%s: %s: more than %lld computed-index checks in one step "
                "(the device record's slots)",
                fn, what.c_str(),
                static_cast<long long>(msamp_rt_index_checks::kSlots));
    return true;
  }
  // The host's half: what the message needs. A replayed graph does not run
  // this code, so it must stay valid until the next eager run or capture
  // overwrites it with the same values.
  if (static_cast<int64_t>(checks->sites.size()) <= slot)
    checks->sites.resize(static_cast<size_t>(slot) + 1);
  msamp_rt_index_checks::Site &site = checks->sites[slot];
  site.what = what;
  site.sizes.assign(ids.sizes, ids.sizes + ids.rank);
  site.upper = upper;
  site.ignoreIndex = ignoreIndex;
  site.hasIgnore = hasIgnore;
  const int32_t width = dtype == MSAMP_RT_I64 ? 8 : 4;
  if (checks->gpu) {
    // The device's half, on the stream: no wait.
    checks->gpu->checkIndex(
        ids.data, ids.numel, width, upper, ignoreIndex, hasIgnore,
        static_cast<unsigned long long *>(checks->deviceSlots) + 2 * slot);
    return true;
  }
  // No device: the same record, filled on the host now.
  unsigned long long *record = checks->slots.data() + 2 * slot;
  record[0] = record[1] = kNone;
  for (int64_t i = 0; i < ids.numel; ++i) {
    const int64_t value = width == 8
                              ? static_cast<const int64_t *>(ids.data)[i]
                              : static_cast<const int32_t *>(ids.data)[i];
    if ((value >= 0 && value < upper) || (hasIgnore && value == ignoreIndex))
      continue;
    record[0] = static_cast<unsigned long long>(i);
    record[1] = static_cast<unsigned long long>(value);
    break;
  }
  return true;
}

} // namespace msamp::runtime

extern "C" {

MSAMP_RT_EXPORT msamp_rt_index_checks *msamp_rt_index_checks_create(void) {
  auto *checks = new msamp_rt_index_checks;
  checks->slots.assign(2 * msamp_rt_index_checks::kSlots, kNone);
  // On the CUDA backend the indices are device memory: the record is too.
  const GpuHostTable *gpu = installedGpuHost();
  const char *backend = msamp_rt_get_backend();
  if (gpu && backend && std::strcmp(backend, "cuda") == 0) {
    if (gpu->deviceAlloc(checks->slots.size() * sizeof(unsigned long long),
                         &checks->deviceSlots) != MSAMP_RT_OK) {
      delete checks;
      return nullptr;
    }
    checks->gpu = gpu;
  }
  return checks;
}

MSAMP_RT_EXPORT void msamp_rt_index_checks_destroy(msamp_rt_index_checks *c) {
  if (!c)
    return;
  if (current == c)
    current = nullptr;
  if (c->gpu && c->deviceSlots)
    c->gpu->deviceFree(c->deviceSlots);
  delete c;
}

MSAMP_RT_EXPORT void msamp_rt_index_checks_begin(msamp_rt_index_checks *c) {
  current = c;
  if (c)
    c->next = 0;
}

MSAMP_RT_EXPORT msamp_rt_status
msamp_rt_index_checks_end(msamp_rt_index_checks *c) {
  if (current == c)
    current = nullptr;
  if (!c || c->sites.empty())
    return MSAMP_RT_OK;
  const int64_t used = static_cast<int64_t>(c->sites.size());
  if (c->gpu) {
    void *dst = c->slots.data();
    const void *src = c->deviceSlots;
    const size_t bytes =
        static_cast<size_t>(2 * used) * sizeof(unsigned long long);
    if (msamp_rt_status s = c->gpu->copyBuffers(&dst, &src, &bytes, 1))
      return s;
  }
  // The first failing call in step order, as the immediate check (which
  // keeps an error recorded earlier) would have reported it.
  for (int64_t k = 0; k < used; ++k) {
    const unsigned long long *record = c->slots.data() + 2 * k;
    if (record[0] == kNone)
      continue;
    const msamp_rt_index_checks::Site &site = c->sites[k];
    return recordIndexError(
        "msamp_train_step", site.what.c_str(), site.sizes.data(),
        static_cast<int64_t>(site.sizes.size()),
        static_cast<int64_t>(record[0]), static_cast<int64_t>(record[1]), 0,
        site.upper, site.ignoreIndex, site.hasIgnore);
  }
  return MSAMP_RT_OK;
}

} // extern "C"
