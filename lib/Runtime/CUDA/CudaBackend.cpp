//===- CudaBackend.cpp - The "cuda" backend and the plugin entry point ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Binds the Backend interface to the CUDA kernels, cuBLASLt and NCCL, and
// exports the plugin entry point CudaBackendLoader.cpp calls. Each method:
//   1. takes the backend's lock and names the ABI call for error messages;
//   2. stages its pointers (common/Staging.h: device and managed memory in
//      place, host memory copied in and out);
//   3. enqueues the kernels on the backend's stream;
//   4. finishes: copies staged outputs back and synchronizes when host
//      memory is involved; on device and managed memory only it returns
//      without waiting (common/Staging.h).
// Scalars (scales, amaxes, inverse scales) stay on the device; the
// optimizers' kernels derive their step's constants from lr and step in
// device memory (optimizer/adam.cu, optimizer/sgd.cu).
//
// Creation fails cleanly, recording why, when there is no driver or device
// ("no CUDA device: cudaGetDeviceCount returned 35 (...)"), when the
// device is older than sm_89 (the kernels are built for sm_89 and sm_90;
// FP8 GEMMs need sm_89), or when the plugin and the runtime were built from
// different sources.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "../Backend.h"
#include "../Collective.h"
#include "../DType.h"
#include "../Status.h"
#include "CudaPlugin.h"
#include "Kernels.h"
#include "comm/NcclCollective.h"
#include "common/CudaCheck.h"
#include "common/ElementAccess.h"
#include "common/PluginHost.h"
#include "common/Staging.h"
#include "gemm/CublasLtGemm.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace msamp::runtime::cuda {
namespace {

size_t bytesOf(const TensorRef &t) {
  return static_cast<size_t>(t.numel) * static_cast<size_t>(dtypeSize(t.dtype));
}

/// The device index: $MSAMP_CUDA_DEVICE, else $MSAMP_LOCAL_RANK (one process
/// per GPU), else 0.
int chooseDevice(int count, const char *&variable) {
  variable = nullptr;
  for (const char *name : {"MSAMP_CUDA_DEVICE", "MSAMP_LOCAL_RANK"}) {
    const char *text = std::getenv(name);
    if (!text || !*text)
      continue;
    char *end = nullptr;
    const long value = std::strtol(text, &end, 10);
    variable = name;
    if (!end || *end != '\0' || value < 0 || value >= count)
      return -1;
    return static_cast<int>(value);
  }
  return 0;
}

class CudaBackend final : public Backend {
public:
  /// Set-up; on failure the reason is recorded and the backend is unusable.
  msamp_rt_status init();

  const char *name() const override { return "cuda"; }
  msamp_rt_status quantize(const TensorRef &in, const float *scale,
                           const TensorRef &out) override;
  msamp_rt_status dequantize(const TensorRef &in, const float *scaleInv,
                             const TensorRef &out) override;
  msamp_rt_status amax(const TensorRef &in, float *out) override;
  msamp_rt_status computeScale(const ComputeScaleParams &p) override;
  msamp_rt_status updateAmaxHistory(const float *history, int64_t length,
                                    const float *amax, float *out) override;
  msamp_rt_status quantizeJit(const QuantizeJitParams &p) override;
  msamp_rt_status scaleUpdate(const ScaleUpdateParams &p,
                              Collective &collective) override;
  msamp_rt_status quantizeTranspose(const QuantizeTransposeParams &p) override;
  msamp_rt_status gemm(const GemmParams &p) override;
  msamp_rt_status allReduce(const AllReduceParams &p,
                            Collective &collective) override;
  msamp_rt_status broadcast(const void *in, void *out, int64_t bytes,
                            int32_t root, Collective &collective) override;
  msamp_rt_status reduceScatter(const AllReduceParams &p,
                                Collective &collective) override;
  msamp_rt_status allGather(const void *in, void *out, int64_t bytes,
                            Collective &collective) override;
  msamp_rt_status adamUpdate(const AdamParams &p) override;
  msamp_rt_status adamUpdateMulti(const AdamParams *updates,
                                  int64_t count) override;
  msamp_rt_status sgdUpdate(const SgdParams &p) override;

  // Test hooks (TestHooks.cpp) run kernels the ABI does not expose on
  // device pointers, with the same lock and stream.
  std::mutex &lock() { return mutex; }
  const DeviceContext &context() const { return ctx; }

private:
  /// Everything a call needs first: the lock, the op name, the device.
  struct Call {
    Call(CudaBackend &b, const char *op) : guard(b.mutex), scope(op) {
      status = b.ctx.makeCurrent();
    }
    std::lock_guard<std::mutex> guard;
    OpScope scope;
    msamp_rt_status status;
  };

  /// One reduction step of an all-reduce on device buffers, whatever the
  /// collective: NCCL directly, a world of one as a copy, any other
  /// (host-memory) collective through a host round trip.
  msamp_rt_status reduceF32(Collective &collective, const float *in, float *out,
                            int64_t n, CollectiveOp op);
  msamp_rt_status reduceFP8(Collective &collective, const uint8_t *in,
                            uint8_t *out, int64_t n, numerics::Format format,
                            CollectiveOp op);

  DeviceContext ctx;
  CublasLtGemm gemmEngine;
  std::mutex mutex;
};

msamp_rt_status CudaBackend::init() {
  OpScope scope("msamp_rt_set_backend");
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return recordError(
        MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
        "no CUDA device: cudaGetDeviceCount returned %d (%s: %s)",
        static_cast<int>(error), cudaGetErrorName(error),
        cudaGetErrorString(error));
  }
  if (count == 0)
    return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                       "no CUDA device: cudaGetDeviceCount found 0 devices");
  const char *variable = nullptr;
  const int device = chooseDevice(count, variable);
  if (device < 0)
    return recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                       "msamp_rt_set_backend: %s='%s' is not a device index "
                       "below %d",
                       variable, std::getenv(variable), count);
  ctx.device = device;
  MSAMP_RT_RETURN_IF_ERROR(ctx.makeCurrent());
  MSAMP_CUDA_TRY_CTX(cudaDeviceGetAttribute(&ctx.ccMajor,
                                            cudaDevAttrComputeCapabilityMajor,
                                            device),
                     "device %d", device);
  MSAMP_CUDA_TRY_CTX(cudaDeviceGetAttribute(&ctx.ccMinor,
                                            cudaDevAttrComputeCapabilityMinor,
                                            device),
                     "device %d", device);
  MSAMP_CUDA_TRY_CTX(cudaDeviceGetAttribute(
                         &ctx.smCount, cudaDevAttrMultiProcessorCount, device),
                     "device %d", device);
  cudaDeviceProp props;
  MSAMP_CUDA_TRY_CTX(cudaGetDeviceProperties(&props, device), "device %d",
                     device);
  std::snprintf(ctx.name, sizeof(ctx.name), "%s", props.name);
  if (ctx.ccMajor * 10 + ctx.ccMinor < 89)
    return recordError(
        MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
        "msamp_rt_set_backend: CUDA device %d (%s) has compute "
        "capability %d.%d; the cuda backend needs sm_89 or newer "
        "(its kernels are built for sm_89 and sm_90, and FP8 "
        "GEMMs need sm_89)",
        device, ctx.name, ctx.ccMajor, ctx.ccMinor);
  // A few waves of blocks; grid-stride loops cover the rest.
  setMaxGridBlocks(ctx.smCount > 0 ? ctx.smCount * 8 : 1024);

  int pools = 0;
  MSAMP_CUDA_TRY_CTX(
      cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device),
      "device %d", device);
  ctx.memoryPools = pools != 0;
  if (ctx.memoryPools) {
    // Keep freed scratch in the pool instead of returning it to the driver
    // at every synchronization: steady-state steps then allocate nothing.
    cudaMemPool_t pool = nullptr;
    MSAMP_CUDA_TRY_CTX(cudaDeviceGetDefaultMemPool(&pool, device), "device %d",
                       device);
    uint64_t threshold = UINT64_MAX;
    MSAMP_CUDA_TRY(cudaMemPoolSetAttribute(
        pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  MSAMP_CUDA_TRY_CTX(
      cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking),
      "device %d", device);
  MSAMP_RT_RETURN_IF_ERROR(gemmEngine.init(ctx));

  // A multi-process job gets the NCCL collective (NcclCollective.cpp).
  NcclEnvironment env;
  MSAMP_RT_RETURN_IF_ERROR(readNcclEnvironment(env));
  if (env.enabled) {
    std::unique_ptr<NcclCollective> collective =
        NcclCollective::create(ctx, env);
    if (!collective)
      return MSAMP_RT_ERROR_COLLECTIVE;
    getPluginHost()->setCollective(collective.release());
  }
  return MSAMP_RT_OK;
}

//===----------------------------------------------------------------------===//
// Casts, amax, scaling state
//===----------------------------------------------------------------------===//

msamp_rt_status CudaBackend::quantize(const TensorRef &in, const float *scale,
                                      const TensorRef &out) {
  Call call(*this, "msamp_rt_quantize");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (in.numel == 0)
    return MSAMP_RT_OK;
  Staging st(ctx);
  const void *dIn = nullptr;
  const float *dScale = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in.data, bytesOf(in), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.input(scale, sizeof(float), &dScale));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out.data, bytesOf(out), &dOut));
  MSAMP_CUDA_TRY_CTX(launchQuantize(dIn, in.dtype, dScale, dOut, out.dtype,
                                    nullptr, in.numel, ctx.stream),
                     "%s -> %s, %lld elements", dtypeName(in.dtype),
                     dtypeName(out.dtype), static_cast<long long>(in.numel));
  return st.finish();
}

msamp_rt_status CudaBackend::quantizeJit(const QuantizeJitParams &p) {
  Call call(*this, "msamp_rt_quantize_jit");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  Staging st(ctx);
  QuantizeJitLaunchArgs a;
  a.inType = p.in.dtype;
  a.n = p.in.numel;
  a.outType = p.out.dtype;
  a.rows = p.rows;
  a.cols = p.cols;
  a.kind = p.kind;
  a.fpMax = p.fpMax;
  a.margin = p.margin;
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.in.data, bytesOf(p.in), &a.in));
  // prev_scale may be out_scale: one staged buffer then (Staging.h).
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.prevScale, sizeof(float), &a.prevScale));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out.data, bytesOf(p.out), &a.out));
  if (p.outT)
    MSAMP_RT_RETURN_IF_ERROR(st.output(p.outT, bytesOf(p.out), &a.outT));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.outScale, sizeof(float), &a.outScale));
  MSAMP_RT_RETURN_IF_ERROR(
      st.output(p.outScaleInv, sizeof(float), &a.outScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(st.amaxAccumulator(&a.amaxBits));
  MSAMP_CUDA_TRY_CTX(launchQuantizeJit(a, ctx.stream),
                     "%s -> %s, %lld elements%s", dtypeName(p.in.dtype),
                     dtypeName(p.out.dtype), static_cast<long long>(p.in.numel),
                     p.outT ? ", transposed" : "");
  return st.finish();
}

msamp_rt_status CudaBackend::scaleUpdate(const ScaleUpdateParams &p,
                                         Collective &collective) {
  Call call(*this, p.quantize ? "msamp_rt_quantize_scale_update"
                              : "msamp_rt_scale_update");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (p.length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_scale_update: history length %lld is too "
                       "long",
                       static_cast<long long>(p.length));
  Staging st(ctx);
  ScaleUpdateLaunchArgs a;
  const void *dIn = nullptr;
  const size_t historyBytes = static_cast<size_t>(p.length) * sizeof(float);
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.in.data, bytesOf(p.in), &dIn));
  // history may be out_history and prev_scale out_next_scale: one staged
  // buffer each then (Staging.h); the kernel reads before it writes.
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.history, historyBytes, &a.history));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.prevScale, sizeof(float), &a.prevScale));
  if (p.useJit)
    MSAMP_RT_RETURN_IF_ERROR(st.input(p.useJit, 1, &a.useJit));
  MSAMP_RT_RETURN_IF_ERROR(
      st.output(p.outHistory, historyBytes, &a.outHistory));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.outScale, sizeof(float), &a.outScale));
  MSAMP_RT_RETURN_IF_ERROR(
      st.output(p.outScaleInv, sizeof(float), &a.outScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(
      st.output(p.outNextScale, sizeof(float), &a.outNextScale));
  unsigned *bits = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.amaxAccumulator(&bits));
  a.amaxBits = bits;
  a.length = static_cast<int>(p.length);
  a.justInTime = p.justInTime;
  a.kind = p.kind;
  a.algo = p.algo;
  a.fpMax = p.fpMax;
  a.margin = p.margin;
  void *dOut = nullptr, *dOutT = nullptr;
  if (p.quantize) {
    MSAMP_RT_RETURN_IF_ERROR(st.output(p.out.data, bytesOf(p.out), &dOut));
    if (p.outT)
      MSAMP_RT_RETURN_IF_ERROR(st.output(p.outT, bytesOf(p.out), &dOutT));
  }
  // The cast with the scale the update picks (or, for a delayed cast,
  // with prev_scale, which it picks unless the warm-up select says
  // otherwise); with `onlyIf` the kernel runs only when that byte is set.
  auto cast = [&](const float *scale, unsigned *amaxBits,
                  const uint8_t *onlyIf) -> cudaError_t {
    if (dOutT)
      return launchCastTranspose(dIn, p.in.dtype, p.rows, p.cols, scale, dOut,
                                 dOutT, p.out.dtype, amaxBits, ctx.stream,
                                 onlyIf);
    return launchQuantize(dIn, p.in.dtype, scale, dOut, p.out.dtype, amaxBits,
                          p.in.numel, ctx.stream, onlyIf);
  };
  // A delayed cast (no just-in-time scale) reads its input once: the amax
  // is taken inside the cast with prev_scale (Transformer Engine's cast
  // kernels do the same). The just-in-time scale needs the amax first.
  const bool amaxInCast = p.quantize && !p.justInTime;
  if (amaxInCast)
    MSAMP_CUDA_TRY_CTX(
        cast(a.prevScale, bits, nullptr), "%s -> %s, %lld elements%s",
        dtypeName(p.in.dtype), dtypeName(p.out.dtype),
        static_cast<long long>(p.in.numel), dOutT ? ", transposed" : "");
  else
    MSAMP_CUDA_TRY_CTX(
        launchAmax(dIn, p.in.dtype, p.in.numel, bits, ctx.stream),
        "%s, %lld elements", dtypeName(p.in.dtype),
        static_cast<long long>(p.in.numel));
  if (p.reduceAmax && collective.worldSize() > 1) {
    // The collective needs the complete amax: finalize it into an f32 and
    // MAX-reduce it as msamp_rt_all_reduce would.
    void *scratch = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(st.scratch(sizeof(float), &scratch));
    auto *amax = static_cast<float *>(scratch);
    MSAMP_CUDA_TRY(launchFinalizeAmax(bits, amax, ctx.stream));
    MSAMP_RT_RETURN_IF_ERROR(
        reduceF32(collective, amax, amax, 1, CollectiveOp::Max));
    a.amax = amax;
  }
  MSAMP_CUDA_TRY_CTX(launchScaleUpdate(a, ctx.stream),
                     "history length %lld, kind %d, algo %d, margin %d",
                     static_cast<long long>(p.length), static_cast<int>(p.kind),
                     static_cast<int>(p.algo), p.margin);
  if (p.quantize) {
    // The warm-up (use_jit set on the device) casts again with the scale
    // just chosen, overwriting what prev_scale gave; otherwise every block
    // of this launch returns at once. A just-in-time scale (not fused by
    // the compiler, but accepted here) casts after the amax, always.
    const uint8_t *onlyIf = nullptr;
    if (amaxInCast)
      onlyIf = a.useJit;
    if (!amaxInCast || onlyIf)
      MSAMP_CUDA_TRY_CTX(cast(a.outScale, nullptr, onlyIf),
                         "%s -> %s, %lld elements, %s", dtypeName(p.in.dtype),
                         dtypeName(p.out.dtype),
                         static_cast<long long>(p.in.numel),
                         onlyIf ? "warm-up recast" : "after the amax");
  }
  return st.finish();
}

/// Both layouts from one kernel: launchCastTranspose reads each input tile
/// once, quantizes it once and stores the codes in both orientations.
msamp_rt_status
CudaBackend::quantizeTranspose(const QuantizeTransposeParams &p) {
  Call call(*this, "msamp_rt_quantize_transpose");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (p.in.numel == 0)
    return MSAMP_RT_OK;
  Staging st(ctx);
  const void *dIn = nullptr;
  const float *dScale = nullptr;
  void *dOut = nullptr, *dOutT = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.in.data, bytesOf(p.in), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.scale, sizeof(float), &dScale));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out.data, bytesOf(p.out), &dOut));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.outT, bytesOf(p.out), &dOutT));
  MSAMP_CUDA_TRY_CTX(
      launchCastTranspose(dIn, p.in.dtype, p.rows, p.cols, dScale, dOut, dOutT,
                          p.out.dtype, nullptr, ctx.stream),
      "%s -> %s, [%lld, %lld] and transposed", dtypeName(p.in.dtype),
      dtypeName(p.out.dtype), static_cast<long long>(p.rows),
      static_cast<long long>(p.cols));
  return st.finish();
}

msamp_rt_status CudaBackend::dequantize(const TensorRef &in,
                                        const float *scaleInv,
                                        const TensorRef &out) {
  Call call(*this, "msamp_rt_dequantize");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (in.numel == 0)
    return MSAMP_RT_OK;
  Staging st(ctx);
  const void *dIn = nullptr;
  const float *dScaleInv = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in.data, bytesOf(in), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.input(scaleInv, sizeof(float), &dScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out.data, bytesOf(out), &dOut));
  MSAMP_CUDA_TRY_CTX(launchDequantize(dIn, in.dtype, dScaleInv, dOut, out.dtype,
                                      in.numel, ctx.stream),
                     "%s -> %s, %lld elements", dtypeName(in.dtype),
                     dtypeName(out.dtype), static_cast<long long>(in.numel));
  return st.finish();
}

msamp_rt_status CudaBackend::amax(const TensorRef &in, float *out) {
  Call call(*this, "msamp_rt_amax");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  Staging st(ctx);
  const void *dIn = nullptr;
  float *dOut = nullptr;
  unsigned *bits = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in.data, bytesOf(in), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out, sizeof(float), &dOut));
  MSAMP_RT_RETURN_IF_ERROR(st.amaxAccumulator(&bits));
  MSAMP_CUDA_TRY_CTX(launchAmax(dIn, in.dtype, in.numel, bits, ctx.stream),
                     "%s, %lld elements", dtypeName(in.dtype),
                     static_cast<long long>(in.numel));
  MSAMP_CUDA_TRY(launchFinalizeAmax(bits, dOut, ctx.stream));
  return st.finish();
}

msamp_rt_status CudaBackend::computeScale(const ComputeScaleParams &p) {
  Call call(*this, "msamp_rt_compute_scale");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (p.length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_compute_scale: history length %lld is too "
                       "long",
                       static_cast<long long>(p.length));
  Staging st(ctx);
  const float *dHistory = nullptr, *dPrev = nullptr;
  float *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(
      st.input(p.history, static_cast<size_t>(p.length) * 4, &dHistory));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.prevScale, sizeof(float), &dPrev));
  // out may alias prevScale: one buffer then, read before written.
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out, sizeof(float), &dOut));
  MSAMP_CUDA_TRY_CTX(launchComputeScale(dHistory, p.length, dPrev, dOut, p.kind,
                                        p.algo, p.fpMax, p.margin, ctx.stream),
                     "history length %lld, kind %d, algo %d, margin %d",
                     static_cast<long long>(p.length), static_cast<int>(p.kind),
                     static_cast<int>(p.algo), p.margin);
  return st.finish();
}

msamp_rt_status CudaBackend::updateAmaxHistory(const float *history,
                                               int64_t length,
                                               const float *amax, float *out) {
  Call call(*this, "msamp_rt_update_amax_history");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (length > INT_MAX)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_update_amax_history: history length %lld is "
                       "too long",
                       static_cast<long long>(length));
  if (length <= 0)
    return MSAMP_RT_OK;
  const size_t bytes = static_cast<size_t>(length) * sizeof(float);
  Staging st(ctx);
  const float *dHistory = nullptr, *dAmax = nullptr;
  float *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(history, bytes, &dHistory));
  MSAMP_RT_RETURN_IF_ERROR(st.input(amax, sizeof(float), &dAmax));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out, bytes, &dOut));
  if (dHistory == dOut) {
    // In place (out is history): roll from a copy, so no thread reads a
    // slot another thread has already shifted.
    void *copy = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(st.scratch(bytes, &copy));
    MSAMP_CUDA_TRY_CTX(cudaMemcpyAsync(copy, dHistory, bytes,
                                       cudaMemcpyDeviceToDevice, ctx.stream),
                       "bytes=%zu", bytes);
    dHistory = static_cast<const float *>(copy);
  }
  MSAMP_CUDA_TRY_CTX(
      launchRollAmaxHistory(dHistory, length, dAmax, dOut, ctx.stream),
      "history length %lld", static_cast<long long>(length));
  return st.finish();
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

msamp_rt_status CudaBackend::gemm(const GemmParams &p) {
  Call call(*this, "msamp_rt_gemm");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  Staging st(ctx);
  GemmParams d = p;
  if (p.outAmax)
    MSAMP_RT_RETURN_IF_ERROR(st.output(p.outAmax, sizeof(float), &d.outAmax));
  const int64_t outCount = p.batch * p.m * p.n;
  if (outCount == 0) {
    // Nothing to compute; the amax of no elements is 0 (as on the CPU).
    if (d.outAmax)
      MSAMP_CUDA_TRY(cudaMemsetAsync(d.outAmax, 0, sizeof(float), ctx.stream));
    return st.finish();
  }
  const size_t aBytes =
      static_cast<size_t>(p.batch * p.m * p.k) * dtypeSize(p.aType);
  const size_t bBytes =
      static_cast<size_t>(p.batch * p.k * p.n) * dtypeSize(p.bType);
  const size_t outBytes = static_cast<size_t>(outCount) * dtypeSize(p.outType);
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.a, aBytes, &d.a));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.b, bBytes, &d.b));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.aScaleInv, sizeof(float), &d.aScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.bScaleInv, sizeof(float), &d.bScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out, outBytes, &d.out));
  if (p.k == 0) {
    // An empty sum: zeros (all-zero bits are +0 in every output type).
    MSAMP_CUDA_TRY(cudaMemsetAsync(d.out, 0, outBytes, ctx.stream));
    if (d.outAmax)
      MSAMP_CUDA_TRY(cudaMemsetAsync(d.outAmax, 0, sizeof(float), ctx.stream));
    return st.finish();
  }
  MSAMP_RT_RETURN_IF_ERROR(gemmEngine.run(d, st));
  return st.finish();
}

//===----------------------------------------------------------------------===//
// All-reduce
//===----------------------------------------------------------------------===//

bool isDeviceCollective(const Collective &collective) {
  return std::strcmp(collective.name(), "nccl") == 0;
}

/// Host round trip for a collective that works on host memory (an MPI or
/// in-process one): download, reduce, upload. Synchronous.
template <typename T, typename Reduce>
msamp_rt_status viaHost(const DeviceContext &ctx, const T *in, T *out,
                        int64_t n, Reduce &&reduce) {
  std::vector<T> host(static_cast<size_t>(n));
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  MSAMP_CUDA_TRY(cudaMemcpyAsync(host.data(), in, bytes, cudaMemcpyDeviceToHost,
                                 ctx.stream));
  MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  MSAMP_RT_RETURN_IF_ERROR(reduce(host.data()));
  MSAMP_CUDA_TRY(cudaMemcpyAsync(out, host.data(), bytes,
                                 cudaMemcpyHostToDevice, ctx.stream));
  MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  return MSAMP_RT_OK;
}

msamp_rt_status CudaBackend::reduceF32(Collective &collective, const float *in,
                                       float *out, int64_t n, CollectiveOp op) {
  if (isDeviceCollective(collective))
    return collective.allReduceF32(in, out, n, op);
  if (collective.worldSize() == 1) {
    // A group of one returns its input (LocalCollective's definition).
    if (in != out)
      MSAMP_CUDA_TRY(cudaMemcpyAsync(out, in, n * sizeof(float),
                                     cudaMemcpyDeviceToDevice, ctx.stream));
    return MSAMP_RT_OK;
  }
  return viaHost(ctx, in, out, n, [&](float *host) {
    return collective.allReduceF32(host, host, n, op);
  });
}

msamp_rt_status CudaBackend::reduceFP8(Collective &collective,
                                       const uint8_t *in, uint8_t *out,
                                       int64_t n, numerics::Format format,
                                       CollectiveOp op) {
  if (isDeviceCollective(collective))
    return collective.allReduceFP8(in, out, n, format, op);
  if (collective.worldSize() == 1) {
    if (in != out)
      MSAMP_CUDA_TRY(cudaMemcpyAsync(out, in, static_cast<size_t>(n),
                                     cudaMemcpyDeviceToDevice, ctx.stream));
    return MSAMP_RT_OK;
  }
  return viaHost(ctx, in, out, n, [&](uint8_t *host) {
    return collective.allReduceFP8(host, host, n, format, op);
  });
}

msamp_rt_status CudaBackend::broadcast(const void *in, void *out, int64_t bytes,
                                       int32_t root, Collective &collective) {
  Call call(*this, "msamp_rt_broadcast");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (bytes <= 0)
    return MSAMP_RT_OK;
  Staging st(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in, static_cast<size_t>(bytes), &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out, static_cast<size_t>(bytes), &dOut));
  if (dIn != dOut)
    MSAMP_CUDA_TRY(cudaMemcpyAsync(dOut, dIn, static_cast<size_t>(bytes),
                                   cudaMemcpyDeviceToDevice, ctx.stream));
  auto *data = static_cast<uint8_t *>(dOut);
  if (isDeviceCollective(collective)) {
    MSAMP_RT_RETURN_IF_ERROR(collective.broadcast(data, bytes, root));
  } else if (collective.worldSize() > 1) {
    MSAMP_RT_RETURN_IF_ERROR(
        viaHost(ctx, data, data, bytes, [&](uint8_t *host) {
          return collective.broadcast(host, bytes, root);
        }));
  }
  return st.finish();
}

/// ZeRO's reduce-scatter (issue 20): NCCL's on device buffers, or a host
/// round trip through an MPI / in-process collective; the FP8 mean divides
/// the inverse scale, as msamp_rt_all_reduce does.
msamp_rt_status CudaBackend::reduceScatter(const AllReduceParams &p,
                                           Collective &collective) {
  Call call(*this, "msamp_rt_reduce_scatter");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  const CollectiveOp op =
      p.kind == ReduceKind::Max ? CollectiveOp::Max : CollectiveOp::Sum;
  const bool mean = p.kind == ReduceKind::Mean;
  const int world = collective.worldSize();
  const bool fp8 = isFP8(p.dtype);
  const size_t shard =
      static_cast<size_t>(p.numel) * static_cast<size_t>(dtypeSize(p.dtype));
  Staging st(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.in, shard * world, &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out, shard, &dOut));
  const float *dScaleInv = nullptr;
  float *dOutScaleInv = nullptr;
  if (fp8) {
    MSAMP_RT_RETURN_IF_ERROR(st.input(p.scaleInv, sizeof(float), &dScaleInv));
    MSAMP_RT_RETURN_IF_ERROR(
        st.output(p.outScaleInv, sizeof(float), &dOutScaleInv));
  }
  auto scatter = [&](const void *in, void *out) {
    return fp8 ? collective.reduceScatterFP8(static_cast<const uint8_t *>(in),
                                             static_cast<uint8_t *>(out),
                                             p.numel, toFormat(p.dtype), op)
               : collective.reduceScatterF32(static_cast<const float *>(in),
                                             static_cast<float *>(out), p.numel,
                                             op);
  };
  if (p.numel > 0) {
    if (isDeviceCollective(collective) || world == 1) {
      MSAMP_RT_RETURN_IF_ERROR(world == 1 ? MSAMP_RT_OK : scatter(dIn, dOut));
      if (world == 1)
        MSAMP_CUDA_TRY(cudaMemcpyAsync(dOut, dIn, shard,
                                       cudaMemcpyDeviceToDevice, ctx.stream));
    } else {
      std::vector<uint8_t> hostIn(shard * world), hostOut(shard);
      MSAMP_CUDA_TRY(cudaMemcpyAsync(hostIn.data(), dIn, hostIn.size(),
                                     cudaMemcpyDeviceToHost, ctx.stream));
      MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
      MSAMP_RT_RETURN_IF_ERROR(scatter(hostIn.data(), hostOut.data()));
      MSAMP_CUDA_TRY(cudaMemcpyAsync(dOut, hostOut.data(), shard,
                                     cudaMemcpyHostToDevice, ctx.stream));
      MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
    }
  }
  if (fp8)
    MSAMP_CUDA_TRY(launchDivideScalar(dScaleInv,
                                      mean ? static_cast<float>(world) : 1.0f,
                                      dOutScaleInv, ctx.stream));
  else if (mean && world != 1 && p.numel > 0)
    MSAMP_CUDA_TRY(launchDivide(static_cast<float *>(dOut), p.numel,
                                static_cast<float>(world), ctx.stream));
  return st.finish();
}

msamp_rt_status CudaBackend::allGather(const void *in, void *out, int64_t bytes,
                                       Collective &collective) {
  Call call(*this, "msamp_rt_all_gather");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (bytes <= 0)
    return MSAMP_RT_OK;
  const int world = collective.worldSize();
  const size_t part = static_cast<size_t>(bytes);
  Staging st(ctx);
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in, part, &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out, part * world, &dOut));
  if (isDeviceCollective(collective)) {
    MSAMP_RT_RETURN_IF_ERROR(collective.allGather(dIn, dOut, bytes));
  } else if (world == 1) {
    MSAMP_CUDA_TRY(
        cudaMemcpyAsync(dOut, dIn, part, cudaMemcpyDeviceToDevice, ctx.stream));
  } else {
    std::vector<uint8_t> hostIn(part), hostOut(part * world);
    MSAMP_CUDA_TRY(cudaMemcpyAsync(hostIn.data(), dIn, part,
                                   cudaMemcpyDeviceToHost, ctx.stream));
    MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
    MSAMP_RT_RETURN_IF_ERROR(
        collective.allGather(hostIn.data(), hostOut.data(), bytes));
    MSAMP_CUDA_TRY(cudaMemcpyAsync(dOut, hostOut.data(), hostOut.size(),
                                   cudaMemcpyHostToDevice, ctx.stream));
    MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  }
  return st.finish();
}

msamp_rt_status CudaBackend::allReduce(const AllReduceParams &p,
                                       Collective &collective) {
  Call call(*this, "msamp_rt_all_reduce");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  const CollectiveOp op =
      p.kind == ReduceKind::Max ? CollectiveOp::Max : CollectiveOp::Sum;
  const bool mean = p.kind == ReduceKind::Mean;
  const int world = collective.worldSize();
  if (isDeviceCollective(collective)) {
    // Validate against the NCCL table (every pair is mapped or rejected).
    const NcclReduceMapping mapping =
        mapNcclAllReduce(p.dtype, static_cast<int32_t>(p.kind),
                         static_cast<NcclCollective &>(collective).caps());
    if (mapping.strategy == NcclStrategy::Reject)
      return recordError(MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                         "msamp_rt_all_reduce (cuda): %s payload: %s",
                         dtypeName(p.dtype), mapping.reason);
  }

  Staging st(ctx);
  const size_t bytes =
      static_cast<size_t>(p.numel) * static_cast<size_t>(dtypeSize(p.dtype));
  const void *dIn = nullptr;
  void *dOut = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.in, bytes, &dIn));
  MSAMP_RT_RETURN_IF_ERROR(st.output(p.out, bytes, &dOut));

  if (isFP8(p.dtype)) {
    const float *dScaleInv = nullptr;
    float *dOutScaleInv = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(st.input(p.scaleInv, sizeof(float), &dScaleInv));
    MSAMP_RT_RETURN_IF_ERROR(
        st.output(p.outScaleInv, sizeof(float), &dOutScaleInv));
    if (p.numel > 0)
      MSAMP_RT_RETURN_IF_ERROR(reduceFP8(
          collective, static_cast<const uint8_t *>(dIn),
          static_cast<uint8_t *>(dOut), p.numel, toFormat(p.dtype), op));
    // MS-AMP's post-division of the inverse scale; the bytes are never
    // divided. The kernel reads scale_inv before writing out_scale_inv
    // (they may be one buffer).
    MSAMP_CUDA_TRY(launchDivideScalar(dScaleInv,
                                      mean ? static_cast<float>(world) : 1.0f,
                                      dOutScaleInv, ctx.stream));
    return st.finish();
  }

  if (p.numel == 0)
    return st.finish();
  if (p.dtype == MSAMP_RT_F32) {
    float *out = static_cast<float *>(dOut);
    MSAMP_RT_RETURN_IF_ERROR(reduceF32(
        collective, static_cast<const float *>(dIn), out, p.numel, op));
    if (mean && world != 1)
      MSAMP_CUDA_TRY(
          launchDivide(out, p.numel, static_cast<float>(world), ctx.stream));
    return st.finish();
  }
  // bf16 / f16: widen exactly, reduce in f32, round once (the CPU's
  // semantics; NCCL's own 16-bit sum would round every hop).
  void *wide = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.scratch(p.numel * sizeof(float), &wide));
  float *w = static_cast<float *>(wide);
  MSAMP_CUDA_TRY(launchConvert(dIn, p.dtype, w, MSAMP_RT_F32, nullptr, p.numel,
                               ctx.stream));
  MSAMP_RT_RETURN_IF_ERROR(reduceF32(collective, w, w, p.numel, op));
  if (mean && world != 1)
    MSAMP_CUDA_TRY(
        launchDivide(w, p.numel, static_cast<float>(world), ctx.stream));
  MSAMP_CUDA_TRY(launchConvert(w, MSAMP_RT_F32, dOut, p.dtype, nullptr, p.numel,
                               ctx.stream));
  return st.finish();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// A step counter in host memory is checked here, as the CPU does (with
/// its message), at no cost; one in device memory is the kernels' to read
/// (a step below 1 then makes the weights NaN, docs/RuntimeABI.md 3.8):
/// reading it here would be a host synchronization inside the step.
msamp_rt_status checkHostStep(const DeviceContext &ctx, const char *entry,
                              const int64_t *step) {
  MemoryKind kind;
  MSAMP_RT_RETURN_IF_ERROR(classifyPointer(ctx, step, kind));
  if (kind == MemoryKind::Host && *step < 1)
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s: step is %lld; the first update is step 1", entry,
                       static_cast<long long>(*step));
  return MSAMP_RT_OK;
}

/// Stages an optimizer's gradient and, for a scaled (non-f32) one, the
/// inverse of its scale.
msamp_rt_status stageGradient(Staging &st, const TensorRef &grad,
                              const float *gradScaleInv, const void **devGrad,
                              const float **devGradScaleInv) {
  MSAMP_RT_RETURN_IF_ERROR(st.input(grad.data, bytesOf(grad), devGrad));
  if (grad.dtype == MSAMP_RT_F32)
    return MSAMP_RT_OK;
  return st.input(gradScaleInv, sizeof(float), devGradScaleInv);
}

/// Stages one optimizer state tensor and, if scaled, its scales.
msamp_rt_status stageState(Staging &st, const TensorRef &in,
                           const TensorRef &out, const float *scale,
                           float *outScale, StateTensorArgs &args) {
  args.dtype = in.dtype;
  MSAMP_RT_RETURN_IF_ERROR(st.input(in.data, bytesOf(in), &args.in));
  MSAMP_RT_RETURN_IF_ERROR(st.output(out.data, bytesOf(out), &args.out));
  if (in.dtype == MSAMP_RT_F32)
    return MSAMP_RT_OK; // dummies: never read, never written
  MSAMP_RT_RETURN_IF_ERROR(st.input(scale, sizeof(float), &args.scale));
  return st.output(outScale, sizeof(float), &args.outScale);
}

/// Stages one Adam tensor (an update of msamp_rt_adam_update or a row of
/// msamp_rt_adam_update_multi).
msamp_rt_status stageAdamTensor(Staging &st, const AdamParams &p,
                                AdamTensorArgs &t) {
  t.n = p.numel;
  MSAMP_RT_RETURN_IF_ERROR(
      stageGradient(st, p.grad, p.gradScaleInv, &t.grad, &t.gradScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(stageState(st, p.param, p.outParam, p.paramScale,
                                      p.outParamScale, t.param));
  MSAMP_RT_RETURN_IF_ERROR(
      stageState(st, p.m, p.outM, p.mScale, p.outMScale, t.m));
  return stageState(st, p.v, p.outV, p.vScale, p.outVScale, t.v);
}

msamp_rt_status CudaBackend::adamUpdate(const AdamParams &p) {
  return adamUpdateMulti(&p, 1);
}

msamp_rt_status CudaBackend::adamUpdateMulti(const AdamParams *updates,
                                             int64_t count) {
  static const char *const entry = "msamp_rt_adam_update";
  Call call(*this, count == 1 ? entry : "msamp_rt_adam_update_multi");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  if (count == 0)
    return MSAMP_RT_OK;
  const AdamParams &first = updates[0];
  // The CPU's message names the update every row is.
  MSAMP_RT_RETURN_IF_ERROR(checkHostStep(ctx, entry, first.step));
  AdamGroupArgs group;
  group.gradType = first.grad.dtype;
  group.paramType = first.param.dtype;
  group.mType = first.m.dtype;
  group.vType = first.v.dtype;
  group.beta1 = first.beta1;
  group.beta2 = first.beta2;
  group.eps = first.eps;
  group.weightDecay = first.weightDecay;
  group.decoupled = first.decoupled;
  group.mode1 = first.mode1;
  Staging st(ctx);
  MSAMP_RT_RETURN_IF_ERROR(st.input(first.lr, sizeof(float), &group.lr));
  MSAMP_RT_RETURN_IF_ERROR(st.input(first.step, sizeof(int64_t), &group.step));
  std::vector<AdamTensorArgs> tensors(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    MSAMP_RT_RETURN_IF_ERROR(stageAdamTensor(st, updates[i], tensors[i]));
  void *scratch = nullptr;
  if (size_t bytes = adamScratchBytes(group, count))
    MSAMP_RT_RETURN_IF_ERROR(st.scratch(bytes, &scratch));
  MSAMP_CUDA_TRY_CTX(
      launchAdam(group, tensors.data(), count, scratch, ctx.stream),
      "%lld tensors, first of %lld elements, param %s, grad %s, m %s, v %s",
      static_cast<long long>(count), static_cast<long long>(first.numel),
      dtypeName(group.paramType), dtypeName(group.gradType),
      dtypeName(group.mType), dtypeName(group.vType));
  return st.finish();
}

msamp_rt_status CudaBackend::sgdUpdate(const SgdParams &p) {
  Call call(*this, "msamp_rt_sgd_update");
  MSAMP_RT_RETURN_IF_ERROR(call.status);
  MSAMP_RT_RETURN_IF_ERROR(checkHostStep(ctx, "msamp_rt_sgd_update", p.step));
  SgdLaunchArgs args;
  args.n = p.numel;
  args.momentum = p.momentum;
  args.weightDecay = p.weightDecay;
  args.hasBuffer = p.hasMomentumBuffer;
  args.nesterov = p.nesterov;
  Staging st(ctx);
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.lr, sizeof(float), &args.lr));
  MSAMP_RT_RETURN_IF_ERROR(st.input(p.step, sizeof(int64_t), &args.step));
  args.gradType = p.grad.dtype;
  MSAMP_RT_RETURN_IF_ERROR(stageGradient(st, p.grad, p.gradScaleInv, &args.grad,
                                         &args.gradScaleInv));
  MSAMP_RT_RETURN_IF_ERROR(stageState(st, p.param, p.outParam, p.paramScale,
                                      p.outParamScale, args.param));
  if (p.hasMomentumBuffer) {
    const void *buf = nullptr;
    void *outBuf = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(st.input(p.buf.data, bytesOf(p.buf), &buf));
    MSAMP_RT_RETURN_IF_ERROR(
        st.output(p.outBuf.data, bytesOf(p.outBuf), &outBuf));
    args.buf = static_cast<const float *>(buf);
    args.outBuf = static_cast<float *>(outBuf);
  }
  void *scratch = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(st.scratch(sizeof(OptimizerScratch), &scratch));
  args.scratch = static_cast<OptimizerScratch *>(scratch);
  MSAMP_CUDA_TRY_CTX(launchSgd(args, ctx.stream),
                     "%lld elements, param %s, grad %s",
                     static_cast<long long>(p.numel), dtypeName(p.param.dtype),
                     dtypeName(p.grad.dtype));
  return st.finish();
}

/// The one backend of this process (the registry keeps it until exit).
CudaBackend *theBackend = nullptr;

} // namespace

namespace {
std::atomic<int> gridBlockLimit{1024};
} // namespace

int maxGridBlocks() { return gridBlockLimit.load(std::memory_order_relaxed); }
void setMaxGridBlocks(int blocks) {
  gridBlockLimit.store(blocks > 0 ? blocks : 1, std::memory_order_relaxed);
}

std::mutex *activeBackendLock() {
  return theBackend ? &theBackend->lock() : nullptr;
}
const DeviceContext *activeBackendContext() {
  return theBackend ? &theBackend->context() : nullptr;
}

} // namespace msamp::runtime::cuda

using namespace msamp::runtime;

/// The plugin's entry point (CudaPlugin.h).
extern "C" __attribute__((visibility("default"))) Backend *
msamp_rt_cuda_plugin_create(const CudaPluginHost *host) {
  if (!host)
    return nullptr;
  cuda::setPluginHost(host);
  if (host->version != kCudaPluginVersion ||
      host->fingerprint != cudaPluginLayoutFingerprint()) {
    recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                "msamp_rt_set_backend: libmsamp_runtime_cuda.so was built from "
                "a different runtime (plugin version %u, layout %llu; runtime "
                "version %u, layout %llu); rebuild both from one source tree",
                kCudaPluginVersion,
                static_cast<unsigned long long>(cudaPluginLayoutFingerprint()),
                host->version,
                static_cast<unsigned long long>(host->fingerprint));
    return nullptr;
  }
  if (cuda::theBackend)
    return cuda::theBackend; // the registry creates each backend once
  auto backend = std::make_unique<cuda::CudaBackend>();
  if (backend->init() != MSAMP_RT_OK)
    return nullptr; // the reason is recorded; the registry may retry later
  cuda::theBackend = backend.release();
  return cuda::theBackend;
}
