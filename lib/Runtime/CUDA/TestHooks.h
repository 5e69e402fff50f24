/*===- TestHooks.h - Kernels the ABI does not expose, for tests --*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * libmsamp_runtime_cuda.so exports these C functions so that the CUDA unit
 * tests can check kernels that no ABI entry point reaches on their own (the
 * amax fused into the cast, cast + transpose, the NCCL fallback's rank-order
 * FP8 reduction, the fused delayed-scaling update) against the CPU
 * reference. They are internal and unstable, not part of the runtime ABI:
 * tests find them with dlsym after msamp_rt_set_backend("cuda") succeeded.
 * Pointers may be host or device memory (staged like the ABI's); each
 * returns MSAMP_RT_OK or the recorded error's code, and synchronizes.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_LIB_RUNTIME_CUDA_TESTHOOKS_H
#define MSAMP_LIB_RUNTIME_CUDA_TESTHOOKS_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** launchQuantize with the fused amax: out = Q(in * scale), *amax = max|in|. */
typedef msamp_rt_status (*msamp_rt_cuda_test_quantize_amax_fn)(
    const void *in, int32_t in_dtype, const float *scale, void *out,
    int32_t out_dtype, float *amax, int64_t n);

/** launchCastTranspose: out [rows, cols] (may be NULL) and outT [cols, rows]
 *  of Q(in * scale), *amax = max|in| (amax may be NULL). */
typedef msamp_rt_status (*msamp_rt_cuda_test_cast_transpose_fn)(
    const void *in, int32_t in_dtype, int64_t rows, int64_t cols,
    const float *scale, void *out, void *out_t, int32_t out_dtype, float *amax);

/** launchReduceFP8RankOrder over contrib[world][n]. */
typedef msamp_rt_status (*msamp_rt_cuda_test_reduce_fp8_fn)(
    const uint8_t *contrib, int32_t world, int64_t n, int32_t dtype,
    int32_t is_max, uint8_t *out);

/** launchDelayedScalingUpdate: roll history[length] in place with *amax,
 *  then *scale = compute_scale(...), *scale_inv = 1 / *scale. */
typedef msamp_rt_status (*msamp_rt_cuda_test_delayed_scaling_fn)(
    float *history, int64_t length, const float *amax, float *scale,
    float *scale_inv, int32_t kind, int32_t algo, int32_t format_dtype,
    int32_t margin);

/** Forces the elements per chunk of msamp_rt_adam_update_multi's launches
 *  (a multiple of 256, and of 2048 when larger; 0: the size that follows
 *  each call). Returns MSAMP_RT_ERROR_INVALID_ARGUMENT for another value. */
typedef msamp_rt_status (*msamp_rt_cuda_test_set_adam_chunk_fn)(
    int64_t elements);

#define MSAMP_RT_CUDA_TEST_QUANTIZE_AMAX "msamp_rt_cuda_test_quantize_amax"
#define MSAMP_RT_CUDA_TEST_CAST_TRANSPOSE "msamp_rt_cuda_test_cast_transpose"
#define MSAMP_RT_CUDA_TEST_REDUCE_FP8 "msamp_rt_cuda_test_reduce_fp8"
#define MSAMP_RT_CUDA_TEST_DELAYED_SCALING "msamp_rt_cuda_test_delayed_scaling"
#define MSAMP_RT_CUDA_TEST_SET_ADAM_CHUNK "msamp_rt_cuda_test_set_adam_chunk"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MSAMP_LIB_RUNTIME_CUDA_TESTHOOKS_H */
