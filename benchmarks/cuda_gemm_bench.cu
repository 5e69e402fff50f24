//===- cuda_gemm_bench.cu - FP8 vs BF16 GEMM throughput through the ABI ---===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Measures msamp_rt_gemm on the "cuda" backend, through the C ABI exactly as
// a compiled step calls it, with device-resident operands (the zero-copy
// path of the memory policy):
//
//   fp8-fast   E4M3 x E4M3^T -> bf16, fast accumulation (MS-AMP's fprop)
//   fp8        the same with split accumulation (dgrad/wgrad precision)
//   bf16       bf16 x bf16^T -> bf16 (cuBLASLt, the same entry point)
//
// for each shape M x N x K, in one run on one device, and prints TFLOP/s
// (2*M*N*K per GEMM) and the FP8/BF16 ratio. Every call synchronizes (the
// ABI's kernels are blocking), so the time includes that; at the default
// shapes it is well under 1 %.
//
//   cuda_gemm_bench [--shapes 4096x4096x4096,8192x8192x8192] [--iters 20]
//
// Without a usable device it prints the reason and exits 0 (the self-test
// reports it as skipped). Lines starting with "RESULT" are for scripts.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_runtime.h"
#include "cuda_bench_descriptor.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using msamp_bench::Descriptor;

/// Deterministic small values: FP8 codes of magnitude <= 1 (bits 0x00-0x38
/// with random sign), or bf16 patterns of the same range.
__global__ void fillKernel(uint8_t *bytes, int64_t n, int elementBytes,
                           uint32_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    if (elementBytes == 1) {
      bytes[i] = static_cast<uint8_t>((h % 0x39u) | (h & 0x80u));
    } else {
      // bf16 in [-1, 1): exponent 0x70-0x7E, random mantissa and sign.
      const uint16_t bits = static_cast<uint16_t>(
          ((h & 0x8000u) | ((0x70u + (h >> 8) % 15u) << 7) | (h & 0x7Fu)));
      reinterpret_cast<uint16_t *>(bytes)[i] = bits;
    }
  }
}

bool check(cudaError_t error, const char *what) {
  if (error == cudaSuccess)
    return true;
  std::fprintf(stderr, "cuda_gemm_bench: %s: %s\n", what,
               cudaGetErrorString(error));
  return false;
}

struct Shape {
  int64_t m, n, k;
};

std::vector<Shape> parseShapes(const char *text) {
  std::vector<Shape> shapes;
  std::string s = text;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos)
      comma = s.size();
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(s.substr(pos, comma - pos).c_str(), "%lldx%lldx%lld", &m,
                    &n, &k) == 3 &&
        m > 0 && n > 0 && k > 0)
      shapes.push_back({m, n, k});
    pos = comma + 1;
  }
  return shapes;
}

/// One msamp_rt_gemm call; false (error printed) on a runtime error.
bool callGemm(const char *label, Descriptor &a, Descriptor &b, Descriptor &out,
              Descriptor &aScale, Descriptor &bScale, int32_t dtype,
              int32_t flags) {
  _mlir_ciface_msamp_rt_gemm(a.get(), aScale.get(), b.get(), bScale.get(),
                             out.get(), nullptr, dtype, dtype, MSAMP_RT_BF16,
                             flags);
  if (msamp_rt_get_last_error() == MSAMP_RT_OK)
    return true;
  std::fprintf(stderr, "cuda_gemm_bench: %s: %s\n", label,
               msamp_rt_get_last_error_message());
  msamp_rt_clear_error();
  return false;
}

/// Seconds per GEMM over `iters` calls, after `warmup` untimed ones (the
/// first builds and caches the cuBLASLt plan); negative on an error.
double timeGemm(const char *label, Descriptor &a, Descriptor &b,
                Descriptor &out, Descriptor &aScale, Descriptor &bScale,
                int32_t dtype, int32_t flags, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i)
    if (!callGemm(label, a, b, out, aScale, bScale, dtype, flags))
      return -1.0;
  // A call on device memory returns before its kernel has run (runtime ABI
  // 3, RuntimeABI.md 7): the clock starts and stops on an idle device.
  if (!check(cudaDeviceSynchronize(), label))
    return -1.0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    if (!callGemm(label, a, b, out, aScale, bScale, dtype, flags))
      return -1.0;
  if (!check(cudaDeviceSynchronize(), label))
    return -1.0;
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start).count() / iters;
}

} // namespace

int main(int argc, char **argv) {
  const char *shapesText = "4096x4096x4096,8192x8192x8192,16384x4096x4096";
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
      shapesText = argv[++i];
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: cuda_gemm_bench [--shapes MxNxK,...] [--iters N]\n");
      return 2;
    }
  }
  if (iters < 1)
    iters = 1;
  const std::vector<Shape> shapes = parseShapes(shapesText);
  if (shapes.empty()) {
    std::fprintf(stderr, "cuda_gemm_bench: no valid shape in '%s'\n",
                 shapesText);
    return 2;
  }

  if (msamp_rt_set_backend("cuda") != MSAMP_RT_OK) {
    std::printf("SKIP cuda_gemm_bench: %s\n",
                msamp_rt_get_last_error_message());
    return 0;
  }
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceProp props;
  if (!check(cudaGetDeviceProperties(&props, device), "device properties"))
    return 1;
  std::printf("device %d: %s (sm_%d%d), %d SMs\n", device, props.name,
              props.major, props.minor, props.multiProcessorCount);
  std::printf("%-22s %12s %12s %12s %10s\n", "M x N x K", "fp8-fast TF/s",
              "fp8 TF/s", "bf16 TF/s", "fp8/bf16");

  float one = 1.0f;
  float *dScale = nullptr;
  if (!check(cudaMalloc(&dScale, sizeof(float)), "cudaMalloc scale") ||
      !check(cudaMemcpy(dScale, &one, sizeof(float), cudaMemcpyHostToDevice),
             "scale upload"))
    return 1;
  Descriptor scaleA(dScale, {}), scaleB(dScale, {});

  int failures = 0;
  for (const Shape &s : shapes) {
    const size_t aCount = static_cast<size_t>(s.m * s.k);
    const size_t bCount = static_cast<size_t>(s.n * s.k);
    const size_t outCount = static_cast<size_t>(s.m * s.n);
    uint8_t *a8 = nullptr, *b8 = nullptr, *a16 = nullptr, *b16 = nullptr,
            *out = nullptr;
    if (!check(cudaMalloc(&a8, aCount), "cudaMalloc") ||
        !check(cudaMalloc(&b8, bCount), "cudaMalloc") ||
        !check(cudaMalloc(&a16, 2 * aCount), "cudaMalloc") ||
        !check(cudaMalloc(&b16, 2 * bCount), "cudaMalloc") ||
        !check(cudaMalloc(&out, 2 * outCount), "cudaMalloc")) {
      ++failures;
      break;
    }
    fillKernel<<<1024, 256>>>(a8, static_cast<int64_t>(aCount), 1, 1u);
    fillKernel<<<1024, 256>>>(b8, static_cast<int64_t>(bCount), 1, 2u);
    fillKernel<<<1024, 256>>>(a16, static_cast<int64_t>(aCount), 2, 3u);
    fillKernel<<<1024, 256>>>(b16, static_cast<int64_t>(bCount), 2, 4u);
    if (!check(cudaDeviceSynchronize(), "fill")) {
      ++failures;
      break;
    }
    // y = x w^T: a = x [M, K], b = w [N, K] with transpose_b (the TN
    // layout cuBLASLt's FP8 kernels take natively).
    Descriptor x8(a8, {s.m, s.k}), w8(b8, {s.n, s.k}), x16(a16, {s.m, s.k}),
        w16(b16, {s.n, s.k}), y(out, {s.m, s.n});
    const int32_t tn = MSAMP_RT_GEMM_TRANSPOSE_B;
    const double fast =
        timeGemm("fp8-fast", x8, w8, y, scaleA, scaleB, MSAMP_RT_F8E4M3FN,
                 tn | MSAMP_RT_GEMM_FAST_ACCUM, 3, iters);
    const double split = timeGemm("fp8", x8, w8, y, scaleA, scaleB,
                                  MSAMP_RT_F8E4M3FN, tn, 3, iters);
    const double bf16 = timeGemm("bf16", x16, w16, y, scaleA, scaleB,
                                 MSAMP_RT_BF16, tn, 3, iters);
    const double flops = 2.0 * s.m * s.n * s.k;
    auto tflops = [flops](double t) { return t > 0 ? flops / t * 1e-12 : -1; };
    char label[64];
    std::snprintf(label, sizeof(label), "%lld x %lld x %lld",
                  static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k));
    std::printf("%-22s %12.1f %12.1f %12.1f %9.2fx\n", label, tflops(fast),
                tflops(split), tflops(bf16),
                bf16 > 0 && fast > 0 ? bf16 / fast : 0.0);
    std::printf("RESULT shape=%lldx%lldx%lld fp8_fast_tflops=%.2f "
                "fp8_tflops=%.2f bf16_tflops=%.2f speedup=%.3f\n",
                static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), tflops(fast), tflops(split),
                tflops(bf16), bf16 > 0 && fast > 0 ? bf16 / fast : 0.0);
    if (fast < 0 || split < 0 || bf16 < 0)
      ++failures;
    cudaFree(a8);
    cudaFree(b8);
    cudaFree(a16);
    cudaFree(b16);
    cudaFree(out);
  }
  cudaFree(dScale);
  return failures ? 1 : 0;
}
