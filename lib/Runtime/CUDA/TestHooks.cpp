//===- TestHooks.cpp - Kernels the ABI does not expose, for tests ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// See TestHooks.h. Each hook takes the backend's lock, stages its pointers
// like an ABI call and runs one launcher on the backend's stream.
//
//===----------------------------------------------------------------------===//

#include "TestHooks.h"

#include "../DType.h"
#include "../Status.h"
#include "CudaBackend.h"
#include "Kernels.h"
#include "common/CudaCheck.h"
#include "common/Staging.h"

#include <cstdint>
#include <mutex>

namespace msamp::runtime::cuda {
namespace {

/// Runs `body(ctx, staging)` under the backend's lock, then finishes.
template <typename Body>
msamp_rt_status withBackend(const char *op, Body &&body) {
  return withActiveBackend(op, [&](const DeviceContext &ctx) {
    Staging st(ctx);
    MSAMP_RT_RETURN_IF_ERROR(body(ctx, st));
    return st.finish();
  });
}

} // namespace
} // namespace msamp::runtime::cuda

using namespace msamp::runtime;
using namespace msamp::runtime::cuda;

#define MSAMP_RT_CUDA_TEST_EXPORT                                              \
  extern "C" __attribute__((visibility("default")))

MSAMP_RT_CUDA_TEST_EXPORT msamp_rt_status msamp_rt_cuda_test_quantize_amax(
    const void *in, int32_t inType, const float *scale, void *out,
    int32_t outType, float *amax, int64_t n) {
  return withBackend(
      "msamp_rt_cuda_test_quantize_amax",
      [&](const DeviceContext &ctx, Staging &st) {
        const void *dIn = nullptr;
        const float *dScale = nullptr;
        void *dOut = nullptr;
        float *dAmax = nullptr;
        unsigned *bits = nullptr;
        const size_t count = static_cast<size_t>(n);
        MSAMP_RT_RETURN_IF_ERROR(st.input(in, count * dtypeSize(inType), &dIn));
        MSAMP_RT_RETURN_IF_ERROR(st.input(scale, sizeof(float), &dScale));
        MSAMP_RT_RETURN_IF_ERROR(
            st.output(out, count * dtypeSize(outType), &dOut));
        MSAMP_RT_RETURN_IF_ERROR(st.output(amax, sizeof(float), &dAmax));
        MSAMP_RT_RETURN_IF_ERROR(st.amaxAccumulator(&bits));
        MSAMP_CUDA_TRY(launchQuantize(dIn, inType, dScale, dOut, outType, bits,
                                      n, ctx.stream));
        MSAMP_CUDA_TRY(launchFinalizeAmax(bits, dAmax, ctx.stream));
        return MSAMP_RT_OK;
      });
}

MSAMP_RT_CUDA_TEST_EXPORT msamp_rt_status msamp_rt_cuda_test_cast_transpose(
    const void *in, int32_t inType, int64_t rows, int64_t cols,
    const float *scale, void *out, void *outT, int32_t outType, float *amax) {
  return withBackend(
      "msamp_rt_cuda_test_cast_transpose",
      [&](const DeviceContext &ctx, Staging &st) {
        const size_t count = static_cast<size_t>(rows * cols);
        const void *dIn = nullptr;
        const float *dScale = nullptr;
        void *dOut = nullptr, *dOutT = nullptr;
        float *dAmax = nullptr;
        unsigned *bits = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(st.input(in, count * dtypeSize(inType), &dIn));
        MSAMP_RT_RETURN_IF_ERROR(st.input(scale, sizeof(float), &dScale));
        MSAMP_RT_RETURN_IF_ERROR(
            st.output(out, count * dtypeSize(outType), &dOut));
        MSAMP_RT_RETURN_IF_ERROR(
            st.output(outT, count * dtypeSize(outType), &dOutT));
        if (amax) {
          MSAMP_RT_RETURN_IF_ERROR(st.output(amax, sizeof(float), &dAmax));
          MSAMP_RT_RETURN_IF_ERROR(st.amaxAccumulator(&bits));
        }
        MSAMP_CUDA_TRY(launchCastTranspose(dIn, inType, rows, cols, dScale,
                                           dOut, dOutT, outType, bits,
                                           ctx.stream));
        if (bits)
          MSAMP_CUDA_TRY(launchFinalizeAmax(bits, dAmax, ctx.stream));
        return MSAMP_RT_OK;
      });
}

MSAMP_RT_CUDA_TEST_EXPORT msamp_rt_status
msamp_rt_cuda_test_reduce_fp8(const uint8_t *contrib, int32_t world, int64_t n,
                              int32_t dtype, int32_t isMax, uint8_t *out) {
  return withBackend(
      "msamp_rt_cuda_test_reduce_fp8",
      [&](const DeviceContext &ctx, Staging &st) {
        if (!isFP8(dtype) || world < 1)
          return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "msamp_rt_cuda_test_reduce_fp8: dtype %d, world "
                             "%d",
                             dtype, world);
        const uint8_t *dContrib = nullptr;
        uint8_t *dOut = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(st.input(
            contrib, static_cast<size_t>(n) * static_cast<size_t>(world),
            &dContrib));
        MSAMP_RT_RETURN_IF_ERROR(st.output(out, static_cast<size_t>(n), &dOut));
        MSAMP_CUDA_TRY(launchReduceFP8RankOrder(
            dContrib, world, n, toFormat(dtype), isMax != 0, dOut, ctx.stream));
        return MSAMP_RT_OK;
      });
}

MSAMP_RT_CUDA_TEST_EXPORT msamp_rt_status msamp_rt_cuda_test_delayed_scaling(
    float *history, int64_t length, const float *amax, float *scale,
    float *scaleInv, int32_t kind, int32_t algo, int32_t formatDtype,
    int32_t margin) {
  return withBackend(
      "msamp_rt_cuda_test_delayed_scaling",
      [&](const DeviceContext &ctx, Staging &st) {
        if (!isScaledFormat(formatDtype) || length < 0 || length > INT32_MAX)
          return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "msamp_rt_cuda_test_delayed_scaling: format %d, "
                             "length %lld",
                             formatDtype, static_cast<long long>(length));
        const size_t bytes = static_cast<size_t>(length) * sizeof(float);
        const float *dHistoryIn = nullptr, *dAmax = nullptr,
                    *dScaleIn = nullptr;
        float *dHistory = nullptr, *dScale = nullptr, *dScaleInv = nullptr;
        MSAMP_RT_RETURN_IF_ERROR(st.input(history, bytes, &dHistoryIn));
        MSAMP_RT_RETURN_IF_ERROR(st.output(history, bytes, &dHistory));
        MSAMP_RT_RETURN_IF_ERROR(st.input(amax, sizeof(float), &dAmax));
        MSAMP_RT_RETURN_IF_ERROR(st.input(scale, sizeof(float), &dScaleIn));
        MSAMP_RT_RETURN_IF_ERROR(st.output(scale, sizeof(float), &dScale));
        MSAMP_RT_RETURN_IF_ERROR(
            st.output(scaleInv, sizeof(float), &dScaleInv));
        (void)dHistoryIn; // uploaded; the kernel rolls the shared buffer
        MSAMP_CUDA_TRY(launchDelayedScalingUpdate(
            dHistory, length, dAmax, dScale, dScaleInv,
            static_cast<msamp::numerics::ScaleKind>(kind),
            static_cast<msamp::numerics::AmaxAlgo>(algo),
            msamp::numerics::maxFinite(toFormat(formatDtype)), margin,
            ctx.stream));
        return MSAMP_RT_OK;
      });
}

MSAMP_RT_CUDA_TEST_EXPORT msamp_rt_status
msamp_rt_cuda_test_set_adam_chunk(int64_t elements) {
  if (!setAdamChunkOverride(elements))
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "msamp_rt_cuda_test_set_adam_chunk: %lld elements is "
                       "not a multiple of the block (and of the tile above "
                       "one)",
                       static_cast<long long>(elements));
  return MSAMP_RT_OK;
}
