//===- CpuBackend.cpp - The "cpu" reference backend -----------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Binds the Backend interface to the CPU kernels and registers it as "cpu",
// the default backend and the oracle every other backend is tested against.
// The all-reduce lives here rather than in CpuKernels.cpp because it is
// mostly plumbing between the payload types and the Collective interface.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"
#include "../Collective.h"
#include "../DType.h"
#include "../HostShardCollectives.h"
#include "../Status.h"
#include "CpuConvert.h"
#include "CpuKernels.h"

#include <cstring>
#include <memory>
#include <new>

namespace msamp::runtime::cpu {
namespace {

/// Divides every element by the world size (mean = sum / N, in f32). A
/// world of one divides by one, which is the identity; skip the pass.
void divideByWorld(float *data, int64_t n, int worldSize) {
  if (worldSize == 1)
    return;
  const float divisor = static_cast<float>(worldSize);
  for (int64_t i = 0; i < n; ++i)
    data[i] = numerics::detail::divRn(data[i], divisor);
}

msamp_rt_status allReduce(const AllReduceParams &p, Collective &collective) {
  const CollectiveOp op =
      p.kind == ReduceKind::Max ? CollectiveOp::Max : CollectiveOp::Sum;
  const bool mean = p.kind == ReduceKind::Mean;
  const int world = collective.worldSize();

  if (isFP8(p.dtype)) {
    // Read before the collective: out_scale_inv may alias scale_inv.
    const float scaleInv = *p.scaleInv;
    const auto *in = static_cast<const uint8_t *>(p.in);
    auto *out = static_cast<uint8_t *>(p.out);
    if (msamp_rt_status s =
            p.root < 0 ? collective.allReduceFP8(in, out, p.numel,
                                                 toFormat(p.dtype), op)
                       : collective.reduceFP8(in, out, p.numel,
                                              toFormat(p.dtype), op, p.root))
      return recordError(s, "msamp_rt_all_reduce: collective '%s' failed",
                         collective.name());
    // MS-AMP divides the inverse scale, never the FP8 values.
    *p.outScaleInv =
        mean ? numerics::detail::divRn(scaleInv, static_cast<float>(world))
             : scaleInv;
    return MSAMP_RT_OK;
  }

  if (p.dtype == MSAMP_RT_F32) {
    float *out = static_cast<float *>(p.out);
    const auto *in = static_cast<const float *>(p.in);
    if (msamp_rt_status s =
            p.root < 0 ? collective.allReduceF32(in, out, p.numel, op)
                       : collective.reduceF32(in, out, p.numel, op, p.root))
      return recordError(s, "msamp_rt_all_reduce: collective '%s' failed",
                         collective.name());
    if (mean)
      divideByWorld(out, p.numel, world);
    return MSAMP_RT_OK;
  }

  // bf16 / f16: widen exactly, reduce in f32, round once.
  std::unique_ptr<float[]> wide(
      new (std::nothrow) float[p.numel > 0 ? p.numel : 1]);
  if (!wide)
    return recordError(MSAMP_RT_ERROR_OUT_OF_MEMORY,
                       "msamp_rt_all_reduce: cannot allocate %lld floats",
                       static_cast<long long>(p.numel));
  loadF32(p.in, p.dtype, 0, p.numel, 1.0f, wide.get());
  if (msamp_rt_status s =
          p.root < 0
              ? collective.allReduceF32(wide.get(), wide.get(), p.numel, op)
              : collective.reduceF32(wide.get(), wide.get(), p.numel, op,
                                     p.root))
    return recordError(s, "msamp_rt_all_reduce: collective '%s' failed",
                       collective.name());
  if (mean)
    divideByWorld(wide.get(), p.numel, world);
  storeHigh(wide.get(), p.numel, p.dtype, p.out, 0);
  return MSAMP_RT_OK;
}

class CpuBackend final : public Backend {
public:
  const char *name() const override { return "cpu"; }

  msamp_rt_status quantize(const TensorRef &in, const float *scale,
                           const TensorRef &out) override {
    return cpu::quantize(in, scale, out);
  }
  msamp_rt_status dequantize(const TensorRef &in, const float *scaleInv,
                             const TensorRef &out) override {
    return cpu::dequantize(in, scaleInv, out);
  }
  msamp_rt_status amax(const TensorRef &in, float *out) override {
    return cpu::amax(in, out);
  }
  msamp_rt_status computeScale(const ComputeScaleParams &p) override {
    return cpu::computeScale(p);
  }
  msamp_rt_status updateAmaxHistory(const float *history, int64_t length,
                                    const float *amax, float *out) override {
    return cpu::updateAmaxHistory(history, length, amax, out);
  }
  msamp_rt_status quantizeJit(const QuantizeJitParams &p) override {
    return cpu::quantizeJit(p);
  }
  msamp_rt_status scaleUpdate(const ScaleUpdateParams &p,
                              Collective &collective) override {
    return cpu::scaleUpdate(p, collective);
  }
  msamp_rt_status quantizeTranspose(const QuantizeTransposeParams &p) override {
    return cpu::quantizeTranspose(p);
  }
  msamp_rt_status gemm(const GemmParams &p) override { return cpu::gemm(p); }
  msamp_rt_status broadcast(const void *in, void *out, int64_t bytes,
                            int32_t root, Collective &collective) override {
    if (in != out && bytes > 0)
      std::memcpy(out, in, static_cast<size_t>(bytes));
    if (msamp_rt_status s = collective.broadcast(out, bytes, root))
      return recordError(s, "msamp_rt_broadcast: collective '%s' failed",
                         collective.name());
    return MSAMP_RT_OK;
  }

  msamp_rt_status allReduce(const AllReduceParams &p,
                            Collective &collective) override {
    return cpu::allReduce(p, collective);
  }
  msamp_rt_status reduceScatter(const AllReduceParams &p,
                                Collective &collective) override {
    return hostReduceScatter(p, collective);
  }
  msamp_rt_status allGather(const void *in, void *out, int64_t bytes,
                            Collective &collective) override {
    return hostAllGather(in, out, bytes, collective);
  }
  msamp_rt_status adamUpdate(const AdamParams &p) override {
    return cpu::adamUpdate(p);
  }
  msamp_rt_status sgdUpdate(const SgdParams &p) override {
    return cpu::sgdUpdate(p);
  }
};

} // namespace

MSAMP_RT_REGISTER_BACKEND("cpu", CpuBackend);

} // namespace msamp::runtime::cpu

extern "C" MSAMP_RT_EXPORT void msamp_rt_set_num_threads(int32_t num_threads) {
  if (num_threads < 0) {
    msamp::runtime::recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                                "msamp_rt_set_num_threads: %d is negative",
                                num_threads);
    return;
  }
  msamp::runtime::cpu::setMaxThreads(num_threads);
}
