//===- GpuHostABI.cpp - Host wrappers of GPU-compiled steps ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The exported msamp_rt_gpu_* functions (msamp_gpu_host.h). They are always
// built, with or without CUDA, so a GPU-compiled step always links against
// the runtime; they forward to the CUDA plugin's table (GpuHost.h), which
// the CUDA loader installs when backend "cuda" is created. Without it every
// call records MSAMP_RT_ERROR_BACKEND_UNAVAILABLE ("select the cuda
// backend"), and an allocation aborts.
//
// Module loads are only recorded here: the step's global constructors run
// at dlopen, possibly before the backend exists. The first function lookup
// of a module loads it through the plugin. The generated code looks a
// kernel up before every launch: each (module, name) is resolved by the
// driver once and then served from the module's table.
//
//===----------------------------------------------------------------------===//

#include "GpuHost.h"
#include "Status.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

namespace msamp::runtime {
namespace {

std::atomic<const GpuHostTable *> theTable{nullptr};

/// A gpu.binary of a loaded step: the image until the first lookup, then
/// the plugin's module too.
struct ModuleRecord {
  const void *image = nullptr;
  size_t bytes = 0;
  bool isPtx = false;
  int32_t optLevel = 3;
  void *module = nullptr;
  /// Resolved kernels by name.
  std::unordered_map<std::string, void *> functions;
  std::mutex lock;
};

/// Every resolved kernel's name, for launch errors.
struct KernelNames {
  std::mutex lock;
  std::unordered_map<void *, std::string> names;
};

KernelNames &kernelNames() {
  static auto *names = new KernelNames; // never destroyed: used until exit
  return *names;
}

const GpuHostTable *tableOrError(const char *op) {
  const GpuHostTable *table = theTable.load(std::memory_order_acquire);
  if (!table)
    recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                "%s: this step was compiled for CUDA (msamp-compile --target "
                "cuda); select the cuda backend first",
                op);
  return table;
}

} // namespace

const GpuHostTable *installedGpuHost() {
  return theTable.load(std::memory_order_acquire);
}

void installGpuHost(const GpuHostTable *table) {
  if (table && table->version == kGpuHostVersion)
    theTable.store(table, std::memory_order_release);
}

} // namespace msamp::runtime

using namespace msamp::runtime;

extern "C" {

void *msamp_rt_gpu_module_load(const void *image, size_t bytes) {
  auto *record = new ModuleRecord;
  record->image = image;
  record->bytes = bytes;
  return record;
}

void *msamp_rt_gpu_module_load_jit(const char *ptx, int32_t opt_level) {
  auto *record = new ModuleRecord;
  record->image = ptx;
  record->isPtx = true;
  record->optLevel = opt_level;
  return record;
}

void msamp_rt_gpu_module_unload(void *module) {
  // Runs from the step's global destructors, at exit: the driver may be
  // shutting down, so the device module is left to process teardown.
  delete static_cast<ModuleRecord *>(module);
}

void *msamp_rt_gpu_module_get_function(void *module, const char *name) {
  const char *op = "msamp_rt_gpu_module_get_function";
  const GpuHostTable *table = tableOrError(op);
  if (!table)
    return nullptr;
  if (!module) {
    // The step registers its modules in global constructors at dlopen;
    // without them every launch would be skipped and the step "succeed".
    recordError(MSAMP_RT_ERROR_INTERNAL,
                "%s: kernel %s has no loaded module: the step's global "
                "constructors did not run (was train_step.so linked without "
                ".init_array?)",
                op, name ? name : "?");
    return nullptr;
  }
  auto *record = static_cast<ModuleRecord *>(module);
  std::lock_guard<std::mutex> guard(record->lock);
  auto found = record->functions.find(name);
  if (found != record->functions.end())
    return found->second;
  if (!record->module &&
      table->moduleLoad(record->image, record->bytes, record->isPtx,
                        record->optLevel, &record->module) != MSAMP_RT_OK)
    return nullptr;
  void *function = nullptr;
  if (table->moduleGetFunction(record->module, name, &function) != MSAMP_RT_OK)
    return nullptr;
  record->functions.emplace(name, function);
  KernelNames &names = kernelNames();
  std::lock_guard<std::mutex> namesGuard(names.lock);
  names.names.emplace(function, name);
  return function;
}

void *msamp_rt_gpu_stream_create(void) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_stream_create");
  return table ? table->stream() : nullptr;
}

void msamp_rt_gpu_stream_synchronize(void *stream) {
  if (const GpuHostTable *table =
          tableOrError("msamp_rt_gpu_stream_synchronize"))
    table->streamSynchronize(stream);
}

void msamp_rt_gpu_stream_destroy(void *) {}

void msamp_rt_gpu_launch_kernel(void *function, intptr_t grid_x,
                                intptr_t grid_y, intptr_t grid_z,
                                intptr_t block_x, intptr_t block_y,
                                intptr_t block_z, int32_t shared_bytes,
                                void *stream, void **params, void **extra,
                                size_t) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_launch_kernel");
  if (!table)
    return;
  if (!function) {
    // The failed lookup recorded why; never skip a kernel in silence.
    if (msamp_rt_get_last_error() == MSAMP_RT_OK)
      recordError(MSAMP_RT_ERROR_INTERNAL,
                  "msamp_rt_gpu_launch_kernel: no kernel to launch (its "
                  "lookup failed)");
    return;
  }
  std::string name;
  {
    KernelNames &names = kernelNames();
    std::lock_guard<std::mutex> guard(names.lock);
    auto found = names.names.find(function);
    if (found != names.names.end())
      name = found->second;
  }
  table->launchKernel(function, name.c_str(), grid_x, grid_y, grid_z, block_x,
                      block_y, block_z, shared_bytes, stream, params, extra);
}

void *msamp_rt_gpu_aligned_alloc(size_t alignment, size_t bytes) {
  const char *op = "msamp_rt_gpu_alloc";
  void *ptr = nullptr;
  const GpuHostTable *table = tableOrError(op);
  if (table && alignment > 256)
    recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "%s: alignment %zu is above the 256 bytes managed memory "
                "guarantees",
                op, alignment);
  else if (table && table->alloc(bytes, &ptr) == MSAMP_RT_OK)
    return ptr;
  // The step has no way to fail: say why and stop.
  std::fprintf(stderr, "msamp: cannot allocate %zu bytes for a CUDA step: %s\n",
               bytes, msamp_rt_get_last_error_message());
  std::abort();
}

void *msamp_rt_gpu_alloc(size_t bytes) {
  return msamp_rt_gpu_aligned_alloc(64, bytes);
}

void msamp_rt_gpu_free(void *ptr) {
  if (!ptr)
    return;
  if (const GpuHostTable *table = theTable.load(std::memory_order_acquire))
    table->free(ptr);
}

namespace {
void *arenaOrAbort(int32_t kind, int64_t bytes) {
  const char *op = kind == 0 ? "msamp_rt_gpu_arena" : "msamp_rt_gpu_host_arena";
  void *ptr = nullptr;
  const GpuHostTable *table = tableOrError(op);
  if (table && bytes < 0)
    recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT, "%s: %lld bytes", op,
                static_cast<long long>(bytes));
  else if (table &&
           table->arena(kind, static_cast<size_t>(bytes), &ptr) == MSAMP_RT_OK)
    return ptr;
  // The step has no way to fail: say why and stop.
  std::fprintf(stderr,
               "msamp: cannot allocate the %lld-byte %s arena of a CUDA step: "
               "%s\n",
               static_cast<long long>(bytes), kind == 0 ? "device" : "host",
               msamp_rt_get_last_error_message());
  std::abort();
}
} // namespace

void *msamp_rt_gpu_arena(int64_t bytes) { return arenaOrAbort(0, bytes); }

void *msamp_rt_gpu_host_arena(int64_t bytes) { return arenaOrAbort(1, bytes); }

msamp_rt_status msamp_rt_gpu_reserve_arenas(size_t device_bytes,
                                            size_t host_bytes) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_reserve_arenas");
  if (!table)
    return MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
  void *ptr = nullptr;
  if (msamp_rt_status s = table->arena(0, device_bytes, &ptr))
    return s;
  return table->arena(1, host_bytes, &ptr);
}

int32_t msamp_rt_gpu_available(void) {
  return theTable.load(std::memory_order_acquire) ? 1 : 0;
}

msamp_rt_status msamp_rt_gpu_copy_buffers(void *const *dst,
                                          const void *const *src,
                                          const size_t *bytes, int64_t n) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_copy_buffers");
  return table ? table->copyBuffers(dst, src, bytes, n)
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

msamp_rt_status msamp_rt_gpu_memory_info(size_t *free_bytes,
                                         size_t *total_bytes) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_memory_info");
  return table ? table->memoryInfo(free_bytes, total_bytes)
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

msamp_rt_status msamp_rt_gpu_find_all_ones(const void *const *data,
                                           const int64_t *counts,
                                           const int32_t *widths,
                                           const uint64_t *masks, int64_t n,
                                           int64_t *first) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_find_all_ones");
  return table ? table->findAllOnes(data, counts, widths, masks, n, first)
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

msamp_rt_status msamp_rt_gpu_graph_begin_capture(void) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_graph_begin_capture");
  return table ? table->graphBeginCapture()
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

msamp_rt_status msamp_rt_gpu_graph_end_capture(void **graph) {
  *graph = nullptr;
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_graph_end_capture");
  return table ? table->graphEndCapture(graph)
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

msamp_rt_status msamp_rt_gpu_graph_launch(void *graph) {
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_graph_launch");
  return table ? table->graphLaunch(graph) : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

void msamp_rt_gpu_graph_destroy(void *graph) {
  if (const GpuHostTable *table = theTable.load(std::memory_order_acquire))
    table->graphDestroy(graph);
}

msamp_rt_status msamp_rt_gpu_device_alloc(size_t bytes, void **ptr) {
  *ptr = nullptr;
  const GpuHostTable *table = tableOrError("msamp_rt_gpu_device_alloc");
  return table ? table->deviceAlloc(bytes, ptr)
               : MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
}

void msamp_rt_gpu_device_free(void *ptr) {
  if (const GpuHostTable *table = theTable.load(std::memory_order_acquire))
    table->deviceFree(ptr);
}

} // extern "C"
