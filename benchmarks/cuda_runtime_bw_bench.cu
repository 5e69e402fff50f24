//===- cuda_runtime_bw_bench.cu - Adam and state-scan bandwidth -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Measures the two runtime kernels of docs/GPU.md "Runtime kernels at
// bandwidth" through the C ABI, on device memory, at GPT-2-small's
// parameter shapes (148 tensors, 124.4M elements):
//
//   adam_o2    msamp_rt_adam_update_multi with MS-AMP O2's states (f16
//              param, E4M3 grad and m, f16 v; two passes)
//   adam_f32   the same with every state f32 (one pass)
//   state_scan msamp_rt_gpu_find_all_ones over param, m and v (444
//              buffers), as the session's non-finite check calls it
//   adam_layer_weights, adam_layer_norms
//              the per-layer calls of an O2 step whose layers are outlined
//              (docs/GPU.md "Each layer lowered once"): a layer's four
//              GEMM weights (O2's states) and its eight biases and norms
//              (f32 param and grad, E4M3 m, f16 v), the 12 layers' calls
//              back to back in each timed call; us per layer's call, with
//              the chunk size the runtime picks and with the fixed 4-tile
//              chunk it used before ("old_us", forced through the plugin's
//              test hook, TestHooks.h), in the same run (docs/GPU.md "Adam
//              chunks follow the call")
//
// and prints the median time of --iters calls and GB/s of the minimal
// traffic (every buffer read once, every output written once; Adam's two
// O2 passes read the inputs twice, which the figure does not count). Each
// timed call is followed by cudaDeviceSynchronize.
//
//   cuda_runtime_bw_bench [--iters 20]
//
// Without a usable device it prints the reason and exits 0. Lines starting
// with "RESULT" are for scripts (the GPU kit's "gemm" section).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "cuda_bench_descriptor.h"

#include "../lib/Runtime/CUDA/TestHooks.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace {

/// GPT-2 small (12 layers, d 768, vocab 50257, 1024 positions).
std::vector<int64_t> gpt2SmallSizes() {
  const int64_t d = 768, f = 3072;
  std::vector<int64_t> sizes = {50257 * d, 1024 * d};
  for (int layer = 0; layer < 12; ++layer)
    for (int64_t n :
         {d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * f, f, f * d, d})
      sizes.push_back(n);
  sizes.push_back(d);
  sizes.push_back(d);
  return sizes;
}

int elementBytes(int32_t dtype) {
  return dtype == MSAMP_RT_F32 ? 4 : dtype == MSAMP_RT_F16 ? 2 : 1;
}

/// Finite values of magnitude about 1 or less: f16 (signed, or >= 0 with
/// `positive`), E4M3 (signed) or f32.
__global__ void fillKernel(void *out, int64_t n, int32_t dtype, bool positive,
                           uint32_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const uint32_t sign = positive ? 0u : h >> 31;
    if (dtype == MSAMP_RT_F16)
      static_cast<uint16_t *>(out)[i] =
          static_cast<uint16_t>(sign << 15 | (h % 0x3C00u));
    else if (dtype == MSAMP_RT_F32)
      static_cast<float *>(out)[i] =
          (sign ? -1.0f : 1.0f) * static_cast<float>(h % 1000u) * 1e-3f;
    else
      static_cast<uint8_t *>(out)[i] =
          static_cast<uint8_t>(sign << 7 | (h % 0x78u));
  }
}

bool check(cudaError_t error, const char *what) {
  if (error == cudaSuccess)
    return true;
  std::fprintf(stderr, "cuda_runtime_bw_bench: %s: %s\n", what,
               cudaGetErrorString(error));
  return false;
}

bool runtimeOk(const char *what) {
  if (msamp_rt_get_last_error() == MSAMP_RT_OK)
    return true;
  std::fprintf(stderr, "cuda_runtime_bw_bench: %s: %s\n", what,
               msamp_rt_get_last_error_message());
  return false;
}

using msamp_bench::Descriptor;

template <typename F>
double medianMs(int iters, F &&call) {
  std::vector<double> ms;
  for (int i = 0; i < iters + 2; ++i) {
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    if (!call())
      return -1.0;
    cudaDeviceSynchronize();
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 2) // two warm-up calls
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Device buffers of one Adam group; false on an error (printed).
struct AdamState {
  int32_t p, g, m, v;
  std::vector<int64_t> sizes;
  std::vector<void *> buffers; // per tensor: param, grad, m, v
  float *scales = nullptr;     // per tensor: param, grad inv, m, v
  float *lr = nullptr;
  int64_t *step = nullptr;
  int64_t elements = 0;

  bool allocate() {
    for (size_t k = 0; k < sizes.size(); ++k) {
      elements += sizes[k];
      int32_t types[4] = {p, g, m, v};
      for (int s = 0; s < 4; ++s) {
        void *ptr = nullptr;
        if (!check(cudaMalloc(&ptr, sizes[k] * elementBytes(types[s])),
                   "cudaMalloc"))
          return false;
        fillKernel<<<1024, 256>>>(ptr, sizes[k], types[s], s == 3,
                                  static_cast<uint32_t>(k * 4 + s));
        buffers.push_back(ptr);
      }
    }
    std::vector<float> hostScales(4 * sizes.size());
    for (size_t k = 0; k < sizes.size(); ++k) {
      hostScales[4 * k] = 1.0f;
      hostScales[4 * k + 1] = 1e-3f;
      hostScales[4 * k + 2] = 1.0f;
      hostScales[4 * k + 3] = 1.0f;
    }
    const float lrValue = 1e-4f;
    const int64_t stepValue = 10;
    return check(cudaMalloc(&scales, hostScales.size() * sizeof(float)),
                 "cudaMalloc") &&
           check(cudaMemcpy(scales, hostScales.data(),
                            hostScales.size() * sizeof(float),
                            cudaMemcpyHostToDevice),
                 "cudaMemcpy") &&
           check(cudaMalloc(&lr, sizeof(float)), "cudaMalloc") &&
           check(cudaMalloc(&step, sizeof(int64_t)), "cudaMalloc") &&
           check(
               cudaMemcpy(lr, &lrValue, sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy") &&
           check(cudaMemcpy(step, &stepValue, sizeof(int64_t),
                            cudaMemcpyHostToDevice),
                 "cudaMemcpy") &&
           check(cudaDeviceSynchronize(), "fill");
  }

  void release() {
    for (void *ptr : buffers)
      cudaFree(ptr);
    cudaFree(scales);
    cudaFree(lr);
    cudaFree(step);
  }

  /// In place (out = in), as a training step updates its state.
  std::vector<int64_t> table() const {
    std::vector<int64_t> t;
    auto at = [](const void *ptr) {
      return static_cast<int64_t>(reinterpret_cast<intptr_t>(ptr));
    };
    for (size_t k = 0; k < sizes.size(); ++k) {
      void *const *b = &buffers[4 * k];
      const float *s = scales + 4 * k;
      const int64_t row[MSAMP_RT_ADAM_TABLE_COLUMNS] = {
          sizes[k], at(b[0]),  at(s),     at(b[1]),  at(s + 1),
          at(b[2]), at(s + 2), at(b[3]),  at(s + 3), at(b[0]),
          at(s),    at(b[2]),  at(s + 2), at(b[3]),  at(s + 3)};
      t.insert(t.end(), row, row + MSAMP_RT_ADAM_TABLE_COLUMNS);
    }
    return t;
  }

  /// Bytes of one update read and written once: grad, param, m, v read;
  /// param, m, v written.
  double minimalBytes() const {
    return static_cast<double>(elements) *
           (elementBytes(g) +
            2 * (elementBytes(p) + elementBytes(m) + elementBytes(v)));
  }
};

bool benchAdam(const char *name, int32_t p, int32_t g, int32_t m, int32_t v,
               int iters, AdamState &keep) {
  keep = AdamState{p, g, m, v, gpt2SmallSizes()};
  if (!keep.allocate())
    return false;
  std::vector<int64_t> table = keep.table();
  Descriptor tableRef(table.data(), {static_cast<int64_t>(keep.sizes.size()),
                                     MSAMP_RT_ADAM_TABLE_COLUMNS});
  Descriptor lrRef(keep.lr, {}), stepRef(keep.step, {});
  const double ms = medianMs(iters, [&] {
    _mlir_ciface_msamp_rt_adam_update_multi(
        tableRef.get(), lrRef.get(), stepRef.get(), p, g, m, v, 0.9, 0.999,
        1e-8, 0.01, MSAMP_RT_ADAM_DECOUPLED);
    return runtimeOk(name);
  });
  if (ms < 0)
    return false;
  std::printf("RESULT kernel=%s tensors=%zu elements=%lld ms=%.3f "
              "minimal_gb=%.3f gbps=%.1f\n",
              name, keep.sizes.size(), static_cast<long long>(keep.elements),
              ms, keep.minimalBytes() / 1e9, keep.minimalBytes() / ms / 1e6);
  return true;
}

/// The 12 per-layer calls of one class (`sizes` a layer's tensors), timed
/// with the runtime's chunk size and with the old fixed one.
bool benchLayers(const char *name, std::vector<int64_t> sizes, int32_t p,
                 int32_t g, int32_t m, int32_t v, int iters,
                 msamp_rt_cuda_test_set_adam_chunk_fn setChunk) {
  constexpr int kLayers = 12;
  std::vector<AdamState> layers(kLayers);
  std::vector<std::vector<int64_t>> tables(kLayers);
  // Each descriptor points into itself: no reallocation after the first.
  std::vector<Descriptor> tableRefs, lrRefs, stepRefs;
  tableRefs.reserve(kLayers);
  lrRefs.reserve(kLayers);
  stepRefs.reserve(kLayers);
  bool ok = true;
  for (int l = 0; l < kLayers && ok; ++l) {
    layers[l] = AdamState{p, g, m, v, sizes};
    ok = layers[l].allocate();
    if (ok)
      tables[l] = layers[l].table();
  }
  for (int l = 0; l < kLayers && ok; ++l) {
    tableRefs.emplace_back(
        tables[l].data(),
        std::vector<int64_t>{static_cast<int64_t>(sizes.size()),
                             MSAMP_RT_ADAM_TABLE_COLUMNS});
    lrRefs.emplace_back(layers[l].lr, std::vector<int64_t>{});
    stepRefs.emplace_back(layers[l].step, std::vector<int64_t>{});
  }
  auto time = [&](int64_t chunk) {
    if (setChunk(chunk) != MSAMP_RT_OK)
      return -1.0;
    return medianMs(iters, [&] {
      for (int l = 0; l < kLayers; ++l)
        _mlir_ciface_msamp_rt_adam_update_multi(
            tableRefs[l].get(), lrRefs[l].get(), stepRefs[l].get(), p, g, m, v,
            0.9, 0.999, 1e-8, 0.01, MSAMP_RT_ADAM_DECOUPLED);
      return runtimeOk(name);
    });
  };
  const double msNew = ok ? time(0) : -1.0;
  const double msOld = msNew >= 0 ? time(4 * 2048) : -1.0;
  setChunk(0);
  for (AdamState &layer : layers)
    layer.release();
  if (msNew < 0 || msOld < 0)
    return false;
  std::printf("RESULT kernel=%s tensors=%zu elements=%lld us=%.1f "
              "old_us=%.1f speedup=%.2f\n",
              name, sizes.size(), static_cast<long long>(layers[0].elements),
              msNew * 1e3 / kLayers, msOld * 1e3 / kLayers, msOld / msNew);
  return true;
}

bool benchScan(const AdamState &s, int iters) {
  std::vector<const void *> data;
  std::vector<int64_t> counts;
  std::vector<int32_t> widths;
  std::vector<uint64_t> masks;
  double bytes = 0;
  for (size_t k = 0; k < s.sizes.size(); ++k)
    for (int slot : {0, 2, 3}) {
      const int32_t dtype = slot == 0 ? s.p : slot == 2 ? s.m : s.v;
      data.push_back(s.buffers[4 * k + slot]);
      counts.push_back(s.sizes[k]);
      widths.push_back(elementBytes(dtype));
      masks.push_back(dtype == MSAMP_RT_F16 ? 0x7C00u : 0x7Fu);
      bytes += static_cast<double>(s.sizes[k]) * elementBytes(dtype);
    }
  std::vector<int64_t> first(data.size());
  const double ms = medianMs(iters, [&] {
    return msamp_rt_gpu_find_all_ones(data.data(), counts.data(), widths.data(),
                                      masks.data(),
                                      static_cast<int64_t>(data.size()),
                                      first.data()) == MSAMP_RT_OK ||
           runtimeOk("state_scan");
  });
  if (ms < 0)
    return false;
  int64_t found = 0;
  for (int64_t f : first)
    found += f >= 0;
  std::printf("RESULT kernel=state_scan buffers=%zu gb=%.3f ms=%.3f "
              "gbps=%.1f nonfinite_buffers=%lld\n",
              data.size(), bytes / 1e9, ms, bytes / ms / 1e6,
              static_cast<long long>(found));
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int iters = 20;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
      iters = std::max(1, std::atoi(argv[++i]));
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cuda_runtime_bw_bench: no CUDA device; skipped\n");
    return 0;
  }
  if (msamp_rt_set_backend("cuda") != MSAMP_RT_OK) {
    std::printf("cuda_runtime_bw_bench: backend cuda unavailable: %s\n",
                msamp_rt_get_last_error_message());
    return 0;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  AdamState o2, f32;
  bool ok = benchAdam("adam_o2", MSAMP_RT_F16, MSAMP_RT_F8E4M3FN,
                      MSAMP_RT_F8E4M3FN, MSAMP_RT_F16, iters, o2) &&
            benchScan(o2, iters);
  o2.release();
  ok = ok && benchAdam("adam_f32", MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32,
                       MSAMP_RT_F32, iters, f32);
  f32.release();
  // The plugin's test hook, from the copy the runtime loaded.
  void *plugin = dlopen("libmsamp_runtime_cuda.so", RTLD_NOW | RTLD_NOLOAD);
  auto setChunk = reinterpret_cast<msamp_rt_cuda_test_set_adam_chunk_fn>(
      plugin ? dlsym(plugin, MSAMP_RT_CUDA_TEST_SET_ADAM_CHUNK) : nullptr);
  if (!setChunk) {
    std::fprintf(stderr, "cuda_runtime_bw_bench: no %s in the plugin\n",
                 MSAMP_RT_CUDA_TEST_SET_ADAM_CHUNK);
    return 1;
  }
  const int64_t d = 768, f = 3072;
  ok = ok && benchLayers("adam_layer_weights", {d * 3 * d, d * d, d * f, f * d},
                         MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN,
                         MSAMP_RT_F16, iters, setChunk);
  ok = ok && benchLayers("adam_layer_norms", {d, d, 3 * d, d, d, d, f, d},
                         MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F8E4M3FN,
                         MSAMP_RT_F16, iters, setChunk);
  return ok ? 0 : 1;
}
