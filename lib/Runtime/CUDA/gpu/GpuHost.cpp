//===- GpuHost.cpp - Kernels of GPU-compiled steps on the backend ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The plugin's half of the host wrappers of steps compiled with
// --msamp-lower-to-gpu (../GpuHost.h, docs/RuntimeABI.md 13):
//
//  * Modules and launches use the CUDA driver API (cuModuleLoadDataEx JITs
//    the embedded PTX, cuModuleGetFunction, cuLaunchKernel). With
//    $MSAMP_CUDA_CUBIN_DIR a PTX module whose ahead-of-time cubin is there
//    (common/LibrarySearch.h, cubinFileName; the GPU kit makes them with
//    ptxas) is loaded from it instead, and nothing is JIT-compiled. The plugin
//    does not link libcuda: the entry points are resolved at run time
//    through cudart's cudaGetDriverEntryPointByVersion, in the primary
//    context cudart uses, on the backend's device.
//  * Kernels run on the backend's stream, so they are ordered with the
//    runtime's own kernels and cuBLASLt. A launch does not wait: the step
//    synchronizes only before host code that reads memory
//    (msamp-gpu-async-launches). cuLaunchKernel's own result reports a
//    launch that could not start, naming the kernel; a fault while it runs
//    is reported by the next synchronization.
//  * The step's own buffers that its static arena does not hold are managed
//    memory (cudaMallocManaged, alloc): kernels, the host code of the step
//    and the backend (which uses managed pointers in place, 10.2) all reach
//    them. Freed buffers are kept in a per-size cache: a training step
//    frees and allocates the same sizes every time. The session's buffers
//    (state, inputs, loss, metrics, the state's copy) are device memory
//    (deviceAlloc, cudaMalloc), which the host reaches only by copies.
//  * A step's static arenas (arena): one cudaMalloc'd and one
//    cudaMallocHost'd block per device, which the step views its buffers
//    in; the session reserves them at open, every step reuses them.
//  * For the session's CUDA graph of a step (graph*): the capture of the
//    backend's stream, its instantiation and launches.
//  * For the session: its per-step copy and non-finite check of the state
//    run on the device (copyBuffers, findAllOnes with gpu/state_scan.cu),
//    so the managed state never migrates to the host; memoryInfo lets it
//    refuse a state that does not fit before allocating it.
//
//===----------------------------------------------------------------------===//

#include "../../GpuHost.h"
#include "../../Status.h"
#include "../CudaBackend.h"
#include "../Kernels.h"
#include "../common/CudaCheck.h"
#include "../common/LibrarySearch.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace msamp::runtime::cuda {
namespace {

/// The driver entry points, resolved once through cudart.
struct Driver {
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned,
                               CUjit_option *, void **) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **) = nullptr;
  CUresult (*getErrorString)(CUresult, const char **) = nullptr;
};

msamp_rt_status resolve(const char *symbol, void **fn) {
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  MSAMP_CUDA_TRY_CTX(cudaGetDriverEntryPointByVersion(
                         symbol, fn, 12000, cudaEnableDefault, &found),
                     "symbol=%s", symbol);
  if (found != cudaDriverEntryPointSuccess || !*fn)
    return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                       "the CUDA driver has no %s (query result %d)", symbol,
                       static_cast<int>(found));
  return MSAMP_RT_OK;
}

msamp_rt_status driver(const Driver *&out) {
  static std::once_flag once;
  static Driver d;
  static msamp_rt_status status = MSAMP_RT_OK;
  std::call_once(once, [] {
    std::pair<const char *, void **> symbols[] = {
        {"cuModuleLoadDataEx", reinterpret_cast<void **>(&d.moduleLoadDataEx)},
        {"cuModuleGetFunction",
         reinterpret_cast<void **>(&d.moduleGetFunction)},
        {"cuLaunchKernel", reinterpret_cast<void **>(&d.launchKernel)},
        {"cuGetErrorString", reinterpret_cast<void **>(&d.getErrorString)},
    };
    for (auto &[name, fn] : symbols)
      if ((status = resolve(name, fn)) != MSAMP_RT_OK)
        return;
  });
  if (status != MSAMP_RT_OK)
    return recordError(status, "the CUDA driver API could not be resolved");
  out = &d;
  return MSAMP_RT_OK;
}

msamp_rt_status driverFailure(const Driver &d, CUresult result,
                              const char *call, const std::string &context) {
  const char *text = nullptr;
  if (d.getErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = "unknown error";
  return recordError(
      result == CUDA_ERROR_OUT_OF_MEMORY ? MSAMP_RT_ERROR_OUT_OF_MEMORY
                                         : MSAMP_RT_ERROR_INTERNAL,
      "%s failed: CUresult %d (%s)%s%s", call, static_cast<int>(result), text,
      context.empty() ? "" : " ", context.c_str());
}

/// The ahead-of-time cubin of a PTX module from $MSAMP_CUDA_CUBIN_DIR, into
/// `cubin`; false (and `cubin` empty) when the directory is unset or has
/// none. With $MSAMP_CUDA_REQUIRE_CUBIN=1 a missing cubin is an error.
msamp_rt_status findCubin(const char *ptx, const DeviceContext &ctx,
                          std::string &cubin) {
  cubin.clear();
  const char *dir = std::getenv("MSAMP_CUDA_CUBIN_DIR");
  if (!dir || !*dir)
    return MSAMP_RT_OK;
  const std::string path = std::string(dir) + "/" +
                           cubinFileName(ptx, ctx.ccMajor * 10 + ctx.ccMinor);
  std::ifstream in(path, std::ios::binary);
  if (in)
    cubin.assign(std::istreambuf_iterator<char>(in), {});
  const char *require = std::getenv("MSAMP_CUDA_REQUIRE_CUBIN");
  if (cubin.empty() && require && std::strcmp(require, "1") == 0)
    return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                       "msamp_rt_gpu_module_load: no ahead-of-time cubin %s "
                       "for this PTX module on sm_%d%d "
                       "(MSAMP_CUDA_REQUIRE_CUBIN=1)",
                       path.c_str(), ctx.ccMajor, ctx.ccMinor);
  return MSAMP_RT_OK;
}

msamp_rt_status moduleLoad(const void *image, size_t, int32_t isPtx,
                           int32_t optLevel, void **module) {
  return withActiveBackend(
      "msamp_rt_gpu_module_load", [&](const DeviceContext &ctx) {
        const Driver *d = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(driver(d));
        std::string cubin;
        if (isPtx) {
          MSAMP_RT_RETURN_IF_ERROR(
              findCubin(static_cast<const char *>(image), ctx, cubin));
          if (!cubin.empty()) {
            image = cubin.data();
            isPtx = 0;
          }
        }
        // The JIT's error log names the PTX line that failed.
        static char log[8192];
        log[0] = 0;
        CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                                  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                  CU_JIT_OPTIMIZATION_LEVEL};
        void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                          reinterpret_cast<void *>(static_cast<uintptr_t>(
                              optLevel < 0   ? 0
                              : optLevel > 4 ? 4
                                             : optLevel))};
        CUmodule result = nullptr;
        CUresult r = d->moduleLoadDataEx(&result, image, isPtx ? 3u : 2u,
                                         options, values);
        if (r != CUDA_SUCCESS)
          return driverFailure(*d, r, "cuModuleLoadDataEx",
                               std::string(isPtx ? "(PTX JIT" : "(cubin") +
                                   (log[0] ? std::string(": ") + log : "") +
                                   ")");
        *module = result;
        return MSAMP_RT_OK;
      });
}

msamp_rt_status moduleGetFunction(void *module, const char *name,
                                  void **function) {
  return withActiveBackend(
      "msamp_rt_gpu_module_get_function", [&](const DeviceContext &) {
        const Driver *d = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(driver(d));
        CUfunction f = nullptr;
        CUresult r =
            d->moduleGetFunction(&f, static_cast<CUmodule>(module), name);
        if (r != CUDA_SUCCESS)
          return driverFailure(*d, r, "cuModuleGetFunction",
                               std::string("(kernel ") + name + ")");
        *function = f;
        return MSAMP_RT_OK;
      });
}

void *stream() {
  const DeviceContext *ctx = activeBackendContext();
  return ctx ? static_cast<void *>(ctx->stream) : nullptr;
}

msamp_rt_status streamSynchronize(void *s) {
  return withActiveBackend(
      "msamp_rt_gpu_stream_synchronize", [&](const DeviceContext &) {
        // Launches do not wait: a kernel that faulted is reported here.
        MSAMP_CUDA_TRY_CTX(cudaStreamSynchronize(static_cast<cudaStream_t>(s)),
                           "%s",
                           "(a kernel or runtime call enqueued since the last "
                           "synchronization failed)");
        return MSAMP_RT_OK;
      });
}

msamp_rt_status launchKernel(void *function, const char *name, intptr_t gx,
                             intptr_t gy, intptr_t gz, intptr_t bx, intptr_t by,
                             intptr_t bz, int32_t shared, void *s,
                             void **params, void **extra) {
  return withActiveBackend(
      "msamp_rt_gpu_launch_kernel", [&](const DeviceContext &) {
        const Driver *d = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(driver(d));
        if (gx <= 0 || gy <= 0 || gz <= 0)
          return MSAMP_RT_OK; // an empty grid (a zero-size tensor)
        CUresult r = d->launchKernel(
            static_cast<CUfunction>(function), static_cast<unsigned>(gx),
            static_cast<unsigned>(gy), static_cast<unsigned>(gz),
            static_cast<unsigned>(bx), static_cast<unsigned>(by),
            static_cast<unsigned>(bz), static_cast<unsigned>(shared),
            static_cast<CUstream>(s), params, extra);
        if (r != CUDA_SUCCESS)
          return driverFailure(
              *d, r, "cuLaunchKernel",
              std::string("(kernel ") + (name ? name : "?") + ", grid " +
                  std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                  std::to_string(gz) + ", block " + std::to_string(bx) + "x" +
                  std::to_string(by) + "x" + std::to_string(bz) + ")");
        return MSAMP_RT_OK;
      });
}

/// Managed buffers by size, for reuse; and the size of each live one.
struct ManagedCache {
  std::mutex lock;
  std::multimap<size_t, void *> free;
  std::unordered_map<void *, size_t> live;
};

ManagedCache &cache() {
  static auto *c = new ManagedCache; // never destroyed: used until exit
  return *c;
}

msamp_rt_status alloc(size_t bytes, void **ptr) {
  *ptr = nullptr;
  if (bytes == 0)
    bytes = 1; // a distinct, freeable pointer
  ManagedCache &c = cache();
  {
    std::lock_guard<std::mutex> guard(c.lock);
    auto it = c.free.find(bytes);
    if (it != c.free.end()) {
      *ptr = it->second;
      c.free.erase(it);
      c.live.emplace(*ptr, bytes);
      return MSAMP_RT_OK;
    }
  }
  return withActiveBackend("msamp_rt_gpu_alloc", [&](const DeviceContext &ctx) {
    MSAMP_CUDA_TRY_CTX(cudaMallocManaged(ptr, bytes, cudaMemAttachGlobal),
                       "bytes=%zu, device %d", bytes, ctx.device);
    std::lock_guard<std::mutex> guard(c.lock);
    c.live.emplace(*ptr, bytes);
    return MSAMP_RT_OK;
  });
}

void release(void *ptr) {
  ManagedCache &c = cache();
  std::lock_guard<std::mutex> guard(c.lock);
  auto it = c.live.find(ptr);
  if (it == c.live.end())
    return; // not ours: nothing to do (the step never frees foreign memory)
  c.free.emplace(it->second, ptr);
  c.live.erase(it);
}

msamp_rt_status copyBuffers(void *const *dst, const void *const *src,
                            const size_t *bytes, int64_t n) {
  return withActiveBackend(
      "msamp_rt_gpu_copy_buffers", [&](const DeviceContext &ctx) {
        for (int64_t k = 0; k < n; ++k)
          if (bytes[k])
            MSAMP_CUDA_TRY_CTX(cudaMemcpyAsync(dst[k], src[k], bytes[k],
                                               cudaMemcpyDefault, ctx.stream),
                               "buffer %lld of %lld, %zu bytes",
                               static_cast<long long>(k),
                               static_cast<long long>(n), bytes[k]);
        MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
        return MSAMP_RT_OK;
      });
}

msamp_rt_status findAllOnes(const void *const *data, const int64_t *counts,
                            const int32_t *widths, const uint64_t *masks,
                            int64_t n, int64_t *first) {
  return withActiveBackend(
      "msamp_rt_gpu_find_all_ones", [&](const DeviceContext &ctx) {
        if (n <= 0)
          return MSAMP_RT_OK;
        // One result per buffer, then the launch's table; one launch, one
        // wait.
        std::vector<ScanBuffer> buffers(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k)
          buffers[k] = ScanBuffer{data[k], counts[k], masks[k], widths[k]};
        unsigned long long *results = nullptr;
        const size_t bytes = static_cast<size_t>(n) * sizeof(*results);
        MSAMP_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void **>(&results),
                                       bytes + findAllOnesScratchBytes(n),
                                       ctx.stream));
        msamp_rt_status status = [&]() -> msamp_rt_status {
          MSAMP_CUDA_TRY(cudaMemsetAsync(results, 0xFF, bytes, ctx.stream));
          int64_t bad = -1;
          if (const cudaError_t error = launchFindAllOnes(
                  buffers.data(), n, results + n, results, ctx.stream, &bad);
              error != cudaSuccess)
            return bad < 0
                       ? cudaFailure(error, "launchFindAllOnes", "%lld buffers",
                                     static_cast<long long>(n))
                       : cudaFailure(error, "launchFindAllOnes",
                                     "buffer %lld, %lld elements of %d "
                                     "bytes",
                                     static_cast<long long>(bad),
                                     static_cast<long long>(counts[bad]),
                                     widths[bad]);
          std::vector<unsigned long long> host(static_cast<size_t>(n));
          MSAMP_CUDA_TRY(cudaMemcpyAsync(host.data(), results, bytes,
                                         cudaMemcpyDeviceToHost, ctx.stream));
          MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
          for (int64_t k = 0; k < n; ++k)
            first[k] = host[k] == ~0ull ? -1 : static_cast<int64_t>(host[k]);
          return MSAMP_RT_OK;
        }();
        cudaFreeAsync(results, ctx.stream);
        return status;
      });
}

msamp_rt_status memoryInfo(size_t *freeBytes, size_t *totalBytes) {
  return withActiveBackend(
      "msamp_rt_gpu_memory_info", [&](const DeviceContext &ctx) {
        MSAMP_CUDA_TRY_CTX(cudaMemGetInfo(freeBytes, totalBytes), "device %d",
                           ctx.device);
        return MSAMP_RT_OK;
      });
}

/// A step's static arenas (msamp-gpu-static-arena): per device, one of
/// device memory and one of pinned host memory, kept for every later step.
struct Arenas {
  struct Arena {
    void *ptr = nullptr;
    size_t bytes = 0;
  };
  std::mutex lock;
  std::map<std::pair<int, int32_t>, Arena> byDeviceAndKind;
};

Arenas &arenas() {
  static auto *a = new Arenas; // never destroyed: used until exit
  return *a;
}

msamp_rt_status arena(int32_t kind, size_t bytes, void **ptr) {
  const bool device = kind == 0;
  return withActiveBackend(
      device ? "msamp_rt_gpu_arena" : "msamp_rt_gpu_host_arena",
      [&](const DeviceContext &ctx) {
        Arenas &all = arenas();
        std::lock_guard<std::mutex> guard(all.lock);
        Arenas::Arena &a = all.byDeviceAndKind[{ctx.device, kind}];
        if (a.ptr && a.bytes >= bytes) {
          *ptr = a.ptr;
          return MSAMP_RT_OK;
        }
        if (a.ptr) {
          // Kernels and calls still queued may use the old one.
          MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
          if (device)
            cudaFree(a.ptr);
          else
            cudaFreeHost(a.ptr);
          a = Arenas::Arena();
        }
        const size_t size = bytes ? bytes : 256; // a distinct pointer
        if (device)
          MSAMP_CUDA_TRY_CTX(cudaMalloc(&a.ptr, size),
                             "the step's device arena, %zu bytes, device %d",
                             size, ctx.device);
        else
          MSAMP_CUDA_TRY_CTX(cudaMallocHost(&a.ptr, size),
                             "the step's pinned host arena, %zu bytes", size);
        a.bytes = size;
        *ptr = a.ptr;
        return MSAMP_RT_OK;
      });
}

msamp_rt_status graphBeginCapture() {
  return withActiveBackend(
      "msamp_rt_gpu_graph_begin_capture", [&](const DeviceContext &ctx) {
        // Thread-local: a call of this thread that cannot be captured (a
        // synchronization, cudaMalloc) fails the capture instead of
        // running; other threads are not affected.
        MSAMP_CUDA_TRY_CTX(cudaStreamBeginCapture(
                               ctx.stream, cudaStreamCaptureModeThreadLocal),
                           "device %d", ctx.device);
        return MSAMP_RT_OK;
      });
}

msamp_rt_status graphEndCapture(void **exec) {
  *exec = nullptr;
  return withActiveBackend(
      "msamp_rt_gpu_graph_end_capture", [&](const DeviceContext &ctx) {
        cudaGraph_t graph = nullptr;
        // Ends the capture even when a call inside it failed (the capture
        // is then invalidated and the error names why).
        const cudaError_t ended = cudaStreamEndCapture(ctx.stream, &graph);
        if (ended != cudaSuccess) {
          // Not sticky: the next call's cudaGetLastError must not see it.
          (void)cudaGetLastError();
          if (graph)
            cudaGraphDestroy(graph);
          MSAMP_CUDA_TRY_CTX(ended, "%s",
                             "(a call of the step could not be captured: a "
                             "synchronization, an allocation or a copy from "
                             "pageable host memory)");
        }
        cudaGraphExec_t instance = nullptr;
        const cudaError_t status =
            cudaGraphInstantiate(&instance, graph, /*flags=*/0);
        cudaGraphDestroy(graph); // the instance holds what it needs
        if (status != cudaSuccess)
          (void)cudaGetLastError();
        MSAMP_CUDA_TRY_CTX(status, "%s", "(instantiating the captured step)");
        *exec = instance;
        return MSAMP_RT_OK;
      });
}

msamp_rt_status graphLaunch(void *exec) {
  return withActiveBackend(
      "msamp_rt_gpu_graph_launch", [&](const DeviceContext &ctx) {
        MSAMP_CUDA_TRY(
            cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), ctx.stream));
        return MSAMP_RT_OK;
      });
}

void graphDestroy(void *exec) {
  if (exec)
    cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
}

msamp_rt_status deviceAlloc(size_t bytes, void **ptr) {
  *ptr = nullptr;
  return withActiveBackend(
      "msamp_rt_gpu_device_alloc", [&](const DeviceContext &ctx) {
        const size_t size = bytes ? bytes : 256; // a distinct pointer
        MSAMP_CUDA_TRY_CTX(cudaMalloc(ptr, size), "%zu bytes, device %d", size,
                           ctx.device);
        // Zeroed like a host buffer, and before any host copy reaches it.
        const cudaError_t zeroed = cudaMemsetAsync(*ptr, 0, size, ctx.stream);
        const cudaError_t waited =
            zeroed == cudaSuccess ? cudaStreamSynchronize(ctx.stream) : zeroed;
        if (waited != cudaSuccess) {
          cudaFree(*ptr);
          *ptr = nullptr;
          MSAMP_CUDA_TRY(waited);
        }
        return MSAMP_RT_OK;
      });
}

void deviceFree(void *ptr) {
  if (ptr)
    cudaFree(ptr); // waits for the work that may still use it
}

msamp_rt_status checkIndex(const void *ids, int64_t numel, int32_t width,
                           int64_t upper, int64_t ignoreIndex,
                           int32_t hasIgnore, void *record) {
  return withActiveBackend(
      "msamp_rt_check_computed_index", [&](const DeviceContext &ctx) {
        MSAMP_CUDA_TRY_CTX(
            launchCheckIndex(ids, numel, width, upper, ignoreIndex, hasIgnore,
                             static_cast<unsigned long long *>(record),
                             ctx.stream),
            "%lld indices of %d bytes", static_cast<long long>(numel), width);
        return MSAMP_RT_OK;
      });
}

const GpuHostTable theTable = {kGpuHostVersion,
                               moduleLoad,
                               moduleGetFunction,
                               stream,
                               streamSynchronize,
                               launchKernel,
                               alloc,
                               release,
                               copyBuffers,
                               findAllOnes,
                               memoryInfo,
                               arena,
                               graphBeginCapture,
                               graphEndCapture,
                               graphLaunch,
                               graphDestroy,
                               deviceAlloc,
                               deviceFree,
                               checkIndex};

} // namespace
} // namespace msamp::runtime::cuda

extern "C" __attribute__((visibility("default")))
const msamp::runtime::GpuHostTable *
msamp_rt_cuda_plugin_gpu_host() {
  return &msamp::runtime::cuda::theTable;
}
