/*===- msamp_runtime.h - The msamp runtime C ABI ------------------*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * The one public header of libmsamp_runtime: everything a compiled training
 * step, msamp-run, the Python package (ctypes) or a test may call. It is plain
 * C (C99 or C++), names no MLIR, CUDA, cuBLASLt or NCCL type, and is the
 * normative declaration of ABI version MSAMP_RT_ABI_VERSION; docs/RuntimeABI.md
 * explains it at length.
 *
 * Tensors
 * -------
 * Kernel entry points take every tensor as an MLIR *unranked memref* passed
 * by pointer, exactly what `func.func private @msamp_rt_X(...) attributes
 * {llvm.emit_c_interface}` produces for `memref<*xT>` arguments:
 *
 *   msamp_rt_unranked_memref { int64_t rank; void *descriptor; }
 *   descriptor -> { void *allocated; void *aligned; int64_t offset;
 *                   int64_t sizes[rank]; int64_t strides[rank]; }
 *
 * The first element lives at (char *)aligned + offset * element_size. The
 * runtime requires the row-major contiguous layout (strides[rank-1] == 1,
 * strides[i] == strides[i+1] * sizes[i+1]; the stride of a dimension of size
 * 1 is not checked). The element type is not in the descriptor: it is the
 * msamp_rt_dtype argument of the call. FP8 tensors are raw bytes, f16 and
 * bf16 tensors raw 16-bit patterns.
 *
 * Scalars (scales, inverse scales, amaxes, the learning rate) are memrefs
 * holding exactly one f32 (0-d in compiled code); the step counter is a
 * one-element i64 memref. The runtime reads them through the pointer at call
 * time and never keeps a pointer after a call returns.
 *
 * Errors
 * ------
 * Kernel entry points return void, as compiled code expects. A bad call
 * (unsupported dtype combination, non-contiguous or mismatched memrefs, null
 * pointers, no backend) does nothing except record a *sticky* error: the
 * first error since the last msamp_rt_clear_error() is kept, with its
 * message, and later errors do not overwrite it. The caller checks
 * msamp_rt_get_last_error() after a step. Nothing in the runtime aborts or
 * throws.
 *
 * Threading
 * ---------
 * One session (one thread issuing calls at a time) is the supported model.
 * The error state and backend selection are guarded by a lock, so a stray
 * call from another thread cannot corrupt them. Kernels may internally split
 * large tensors over worker threads (see msamp_rt_set_num_threads); they
 * return only when all output is written.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_RUNTIME_H
#define MSAMP_RUNTIME_MSAMP_RUNTIME_H

#include <stdint.h>

#include "msamp_entry_points.h"

#if defined(_WIN32)
#if defined(MSAMP_RT_BUILDING_LIBRARY)
#define MSAMP_RT_EXPORT __declspec(dllexport)
#else
#define MSAMP_RT_EXPORT __declspec(dllimport)
#endif
#else
#define MSAMP_RT_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the ABI declared in this header. Bumped on any incompatible
 *  change of an entry point's arguments or semantics. Compiled steps record
 *  the version they were lowered for; a loader compares it with
 *  msamp_rt_abi_version(). */
#define MSAMP_RT_ABI_VERSION 5

/*===----------------------------------------------------------------------===
 * Types
 *===----------------------------------------------------------------------===*/

/** Element types. The values are part of the ABI: compiled code passes them
 *  as i32 immediates. */
typedef enum msamp_rt_dtype {
  MSAMP_RT_F32 = 0,
  MSAMP_RT_F16 = 1,      /**< IEEE binary16, stored as uint16_t. */
  MSAMP_RT_BF16 = 2,     /**< bfloat16, stored as uint16_t. */
  MSAMP_RT_F8E4M3FN = 3, /**< OCP E4M3 (no Inf, NaN 0x7F/0xFF), one byte. */
  MSAMP_RT_F8E5M2 = 4,   /**< OCP E5M2 (IEEE-like), one byte. */
  MSAMP_RT_I64 = 5,
  MSAMP_RT_I32 = 6
} msamp_rt_dtype;

/** Error codes. MSAMP_RT_OK is 0; every other value names a class of
 *  failure, the message says which argument and why. */
typedef enum msamp_rt_status {
  MSAMP_RT_OK = 0,
  MSAMP_RT_ERROR_INVALID_ARGUMENT = 1,  /**< null pointer, bad enum value. */
  MSAMP_RT_ERROR_UNSUPPORTED_DTYPE = 2, /**< dtype (combination) not handled. */
  MSAMP_RT_ERROR_SHAPE_MISMATCH = 3,    /**< ranks or sizes do not agree. */
  MSAMP_RT_ERROR_NON_CONTIGUOUS = 4,    /**< strides are not row-major dense. */
  MSAMP_RT_ERROR_UNKNOWN_BACKEND = 5,   /**< no backend of that name. */
  MSAMP_RT_ERROR_BACKEND_UNAVAILABLE = 6, /**< registered, cannot start. */
  MSAMP_RT_ERROR_NO_BACKEND = 7,          /**< no backend is selected. */
  MSAMP_RT_ERROR_COLLECTIVE = 8,          /**< the collective layer failed. */
  MSAMP_RT_ERROR_OUT_OF_MEMORY = 9,
  MSAMP_RT_ERROR_INTERNAL = 10
} msamp_rt_status;

/** An MLIR unranked memref (C interface), passed by pointer. `descriptor`
 *  points to a ranked descriptor laid out as msamp_rt_memref_header followed
 *  by `int64_t sizes[rank]` and `int64_t strides[rank]`. */
typedef struct msamp_rt_unranked_memref {
  int64_t rank;
  void *descriptor;
} msamp_rt_unranked_memref;

/** The fixed-size head of a ranked memref descriptor; sizes[rank] and
 *  strides[rank] (int64_t each) follow it directly. */
typedef struct msamp_rt_memref_header {
  void *allocated; /**< what the allocator returned; unused by the runtime. */
  void *aligned;   /**< base of the data. */
  int64_t offset;  /**< in elements, from `aligned`. */
} msamp_rt_memref_header;

/*===----------------------------------------------------------------------===
 * Library, errors, configuration
 *===----------------------------------------------------------------------===*/

/** Returns MSAMP_RT_ABI_VERSION of the library that was loaded. */
MSAMP_RT_EXPORT int32_t msamp_rt_abi_version(void);

/** The first error recorded since the last msamp_rt_clear_error(), or
 *  MSAMP_RT_OK. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_get_last_error(void);

/** Message of that error ("" when none), e.g.
 *  "msamp_rt_gemm: a: strides [1, 4] are not row-major contiguous for sizes
 *  [4, 8]". The pointer stays valid and unchanged until
 *  msamp_rt_clear_error(). */
MSAMP_RT_EXPORT const char *msamp_rt_get_last_error_message(void);

/** Forgets the recorded error, so the next one is recorded again. */
MSAMP_RT_EXPORT void msamp_rt_clear_error(void);

/** Size in bytes of one element of `dtype` (1, 2, 4 or 8), or 0 (without
 *  recording an error) for a value outside msamp_rt_dtype. */
MSAMP_RT_EXPORT int32_t msamp_rt_dtype_size(int32_t dtype);

/** Selects the backend all following kernel calls run on. "cpu" (the
 *  reference) always exists; "cuda" registers itself when built. Without a
 *  call, the first kernel call selects $MSAMP_BACKEND, or "cpu" when that is
 *  unset or empty. An unknown name records MSAMP_RT_ERROR_UNKNOWN_BACKEND,
 *  a backend that cannot start (no device) MSAMP_RT_ERROR_BACKEND_UNAVAILABLE;
 *  both leave the previous selection in place and are also returned. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_set_backend(const char *name);

/** Name of the selected backend, selecting the default first if none is
 *  selected yet; NULL if the default cannot be selected (the error is
 *  recorded). The string is static. */
MSAMP_RT_EXPORT const char *msamp_rt_get_backend(void);

/** Upper bound on the worker threads a CPU kernel may use for one large
 *  tensor. 0 (the default) means $MSAMP_RT_NUM_THREADS if set, else the
 *  hardware concurrency. 1 keeps every kernel on the calling thread. Results
 *  never depend on it: all CPU kernels are elementwise or order-independent
 *  reductions, and the GEMM uses the BLAS's own threading (OPENBLAS_NUM_THREADS
 *  for OpenBLAS). Negative values record MSAMP_RT_ERROR_INVALID_ARGUMENT. */
MSAMP_RT_EXPORT void msamp_rt_set_num_threads(int32_t num_threads);

/** Rank of this process in the data-parallel group and the group's size, as
 *  the current collective reports them (0 and 1 for the built-in local one). */
MSAMP_RT_EXPORT int32_t msamp_rt_rank(void);
MSAMP_RT_EXPORT int32_t msamp_rt_world_size(void);

/*===----------------------------------------------------------------------===
 * Data parallelism (docs/RuntimeABI.md, "Distributed")
 *===----------------------------------------------------------------------===*/

/** Joins the data-parallel group the launcher describes. Under mpirun (in a
 *  build with MPI) this initializes MPI and installs the MPI collective:
 *  every reduction is gathered on rank 0, combined in rank order and
 *  broadcast, so all ranks get byte-identical results, and a watchdog aborts
 *  the job when a collective does not finish within
 *  $MSAMP_COLLECTIVE_TIMEOUT_S seconds (default 120). Without a launcher it
 *  keeps the single-process group (rank 0 of 1). */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_distributed_init(void);
/** Leaves the group (MPI_Finalize); idempotent. */
MSAMP_RT_EXPORT void msamp_rt_distributed_finalize(void);
/** Prints `message` and stops every rank with exit code `code`
 *  (MPI_Abort under MPI). Does not return. */
MSAMP_RT_EXPORT void msamp_rt_abort(const char *message, int32_t code);
/** In-place all-reduce of n f32 host values across the group: op 0 sum,
 *  1 max, combined in rank order (identical on every rank). */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_allreduce_f32(float *values, int64_t n,
                                                       int32_t op);
/** Tensor payload bytes this process handed to the group's collectives
 *  since the last reset (the sum over calls of elements x element size; a
 *  ring all-reduce moves about 2 (N-1)/N times that over the wire). Max
 *  reductions (amaxes) and 0-d reductions (scalar statistics) are not
 *  counted. */
MSAMP_RT_EXPORT int64_t msamp_rt_collective_bytes(void);
MSAMP_RT_EXPORT void msamp_rt_reset_collective_bytes(void);

/*===----------------------------------------------------------------------===
 * The compiled step's heap (docs/RuntimeABI.md 14)
 *
 * A step compiled for the CPU allocates its temporaries through these two
 * functions (MLIR's finalize-memref-to-llvm with use-generic-functions
 * names them), never malloc/free directly. They are malloc and free plus a
 * count of the live bytes on the calling thread (the step runs on the thread
 * that calls it), so that a session can measure the step's high-water mark
 * exactly: the bytes the step asked for, not the process's RSS.
 *===----------------------------------------------------------------------===*/

/** malloc(size) that counts `size` live bytes on this thread. */
MSAMP_RT_EXPORT void *_mlir_memref_to_llvm_alloc(uint64_t size);
/** Frees what _mlir_memref_to_llvm_alloc returned (null: nothing). */
MSAMP_RT_EXPORT void _mlir_memref_to_llvm_free(void *ptr);
/** Bytes the step allocated and has not freed, on this thread. */
MSAMP_RT_EXPORT int64_t msamp_rt_step_live_bytes(void);
/** The most live bytes on this thread since the last reset. */
MSAMP_RT_EXPORT int64_t msamp_rt_step_peak_bytes(void);
/** Restarts the high-water mark at the bytes live now. */
MSAMP_RT_EXPORT void msamp_rt_reset_step_peak_bytes(void);

/*===----------------------------------------------------------------------===
 * Kernel entry points (ABI v1)
 *
 * UMR is msamp_rt_unranked_memref. All return void; see "Errors" above.
 * The parameter kinds of each are listed once more, for the compiler, in
 * msamp_entry_points.h; the runtime's build checks that the two agree.
 * Arithmetic is Numerics.md's: Q_f(x) is the saturating round-to-nearest-even
 * cast to FP8 format f (IEEE rounding, overflow to Inf, for f16), decode is
 * the exact widening to f32, and every product is one f32 rounding.
 *===----------------------------------------------------------------------===*/

/** Scaled cast (msamp.quantize): out[i] = Q(in[i] * scale).
 *  @param in       any shape; in_dtype f32, bf16 or f16 (widened exactly).
 *  @param scale    one f32 (stored = real * scale).
 *  @param out      same shape as `in`; out_dtype f8E4M3FN, f8E5M2 (saturating)
 *                  or f16 (IEEE). May not overlap `in`.
 *  The product in*scale is rounded to f32 once, then encoded
 *  (docs/Numerics.md 1.2). */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale,
    msamp_rt_unranked_memref *out, int32_t in_dtype, int32_t out_dtype);

/** Flag of msamp_rt_quantize_jit: also write the transposed layout. */
#define MSAMP_RT_QUANTIZE_JIT_TRANSPOSE 0x1

/** Just-in-time scaled cast of one tensor in one call (the chain msamp.amax
 *  -> msamp.compute_scale most_recent -> msamp.quantize, docs/RuntimeABI.md
 *  3.12): amax = max_i |in[i]|, scale = the compute_scale of a one-entry
 *  history [amax] (kind, margin, fp_max of out_dtype), out[i] =
 *  Q_out(in[i] * scale), out_scale = scale, out_scale_inv = 1 / scale.
 *  @param in            any shape (rank >= 1 with the transpose flag);
 *                       in_dtype f32, bf16 or f16.
 *  @param prev_scale    one f32: the scale kept when amax is 0, NaN or Inf.
 *                       May be the same buffer as out_scale.
 *  @param out           same shape; out_dtype f8E4M3FN, f8E5M2 or f16.
 *  @param out_t         with MSAMP_RT_QUANTIZE_JIT_TRANSPOSE: [C, R] where
 *                       `in` is viewed as [R, C] (C its last dimension), the
 *                       same codes transposed; otherwise ignored (a dummy).
 *  @param out_scale     one f32.
 *  @param out_scale_inv one f32.
 *  @param kind          0 pow2 (MS-AMP), 1 exact (Transformer Engine).
 *  @param flags         MSAMP_RT_QUANTIZE_JIT_TRANSPOSE or 0. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize_jit(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *prev_scale,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_t,
    msamp_rt_unranked_memref *out_scale,
    msamp_rt_unranked_memref *out_scale_inv, int32_t in_dtype,
    int32_t out_dtype, int32_t kind, int32_t margin, int32_t flags);

/** Flags of msamp_rt_scale_update. */
/** All-reduce the amax (MAX over the data-parallel group) before using it. */
#define MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX 0x1
/** The scale is the just-in-time one when use_jit's byte has its low bit
 *  set, else prev_scale (MS-AMP's warm-up select). */
#define MSAMP_RT_SCALE_UPDATE_SELECT_JIT 0x2
/** The scale is always the just-in-time one (use_jit is ignored). */
#define MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME 0x4

/** The bookkeeping of one scaled cast in one call (msamp.scale_update,
 *  docs/RuntimeABI.md 3.13): amax = max_i |in[i]| (all-reduced with MAX over
 *  the group with MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX), out_history = history
 *  rolled with amax, jit = the compute_scale of amax (most_recent), scale =
 *  jit or prev_scale (flags), out_scale = scale, out_scale_inv = 1 / scale,
 *  out_next_scale = compute_scale(algo, out_history, prev = scale).
 *  @param in             any shape; in_dtype f32, bf16 or f16.
 *  @param history        rank-1 f32 [L], L >= 1; may be out_history.
 *  @param prev_scale     one f32; may be out_next_scale.
 *  @param use_jit        one byte (an i1 buffer), read with
 *                        MSAMP_RT_SCALE_UPDATE_SELECT_JIT; else a dummy.
 *  @param out_scale, out_scale_inv, out_next_scale  one f32 each.
 *  @param kind           0 pow2 (MS-AMP), 1 exact (Transformer Engine).
 *  @param algo           0 max, 1 most_recent (for out_next_scale).
 *  @param format_dtype   f8E4M3FN, f8E5M2 or f16 (sets fp_max). */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_scale_update(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *history,
    msamp_rt_unranked_memref *prev_scale, msamp_rt_unranked_memref *use_jit,
    msamp_rt_unranked_memref *out_history, msamp_rt_unranked_memref *out_scale,
    msamp_rt_unranked_memref *out_scale_inv,
    msamp_rt_unranked_memref *out_next_scale, int32_t in_dtype, int32_t kind,
    int32_t algo, int32_t format_dtype, int32_t margin, int32_t flags);
/** Flag of msamp_rt_quantize_scale_update (besides REDUCE_AMAX and
 *  SELECT_JIT above): `out_t` receives the codes transposed as
 *  msamp_rt_quantize_transpose writes them. */
#define MSAMP_RT_SCALE_UPDATE_TRANSPOSE 0x8

/** A delayed-scaling cast and its bookkeeping from one read of `in`
 *  (docs/RuntimeABI.md 3.15): exactly msamp_rt_scale_update(in, history,
 *  prev_scale, use_jit, out_history, out_scale, out_scale_inv,
 *  out_next_scale, ...) followed by msamp_rt_quantize(in, out_scale, out)
 *  (msamp_rt_quantize_transpose into out and out_t with
 *  MSAMP_RT_SCALE_UPDATE_TRANSPOSE), bit for bit. A device backend computes
 *  the amax inside the cast's pass (with prev_scale, the scale used unless
 *  the warm-up select picks the just-in-time one, in which case a kernel
 *  that reads use_jit on the device casts again).
 *  @param flags  REDUCE_AMAX, SELECT_JIT, TRANSPOSE; JUST_IN_TIME is
 *                refused (the scale needs the amax before the cast: see
 *                msamp_rt_quantize_jit).
 *  @param out    same shape as `in`; out_dtype f8E4M3FN, f8E5M2 or f16.
 *  @param out_t  with TRANSPOSE rank 2 [C, R]; else a dummy.
 *  The other parameters are msamp_rt_scale_update's. Neither output may
 *  overlap `in` or the other. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize_scale_update(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *history,
    msamp_rt_unranked_memref *prev_scale, msamp_rt_unranked_memref *use_jit,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_t,
    msamp_rt_unranked_memref *out_history, msamp_rt_unranked_memref *out_scale,
    msamp_rt_unranked_memref *out_scale_inv,
    msamp_rt_unranked_memref *out_next_scale, int32_t in_dtype,
    int32_t out_dtype, int32_t kind, int32_t algo, int32_t format_dtype,
    int32_t margin, int32_t flags);

/** Scaled cast into both operand layouts (docs/RuntimeABI.md 3.14): what
 *  msamp_rt_quantize writes into `out`, and the same codes transposed into
 *  `out_t`, from one pass over `in` (a GEMM whose FP8 operand is needed with
 *  its other dimension innermost reads `out_t` instead of transposing).
 *  @param in       rank >= 1, viewed as [R, C] (C its last dimension);
 *                  in_dtype f32, bf16 or f16.
 *  @param scale    one f32.
 *  @param out      same shape as `in`; out_dtype f8E4M3FN, f8E5M2 or f16.
 *  @param out_t    rank 2 [C, R], out_dtype: out_t[c][r] = out[r][c].
 *  Neither output may overlap `in` or the other. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_quantize_transpose(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_t,
    int32_t in_dtype, int32_t out_dtype);

/** Widening (msamp.dequantize): out[i] = cast(decode(in[i]) * scale_inv).
 *  @param in        any shape; in_dtype f8E4M3FN, f8E5M2 or f16.
 *  @param scale_inv one f32 (real = stored * scale_inv).
 *  @param out       same shape; out_dtype f32, bf16 or f16 (round to nearest
 *                   even, IEEE overflow). May not overlap `in`. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_dequantize(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale_inv,
    msamp_rt_unranked_memref *out, int32_t in_dtype, int32_t out_dtype);

/** Largest magnitude (msamp.amax): out = max_i |in[i]|, exact.
 *  @param in   any shape; in_dtype f32, bf16 or f16.
 *  @param out  one f32: NaN if any element is NaN, +Inf if any is infinite,
 *              0 for an empty tensor. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_amax(msamp_rt_unranked_memref *in,
                                                msamp_rt_unranked_memref *out,
                                                int32_t in_dtype);

/** Scale from an amax history (msamp.compute_scale, docs/Numerics.md 2.1/2.2).
 *  @param history      rank-1 f32 [L], history[0] the most recent amax.
 *  @param prev_scale   one f32, returned when the reduced amax is 0,
 *                      negative, NaN or +Inf (or L == 0).
 *  @param out          one f32; may alias prev_scale.
 *  @param kind         0 pow2 (MS-AMP: 2^(floor(log2(fp_max/amax)) - margin),
 *                      clamped to [2^-126, 2^127]), 1 exact (Transformer
 *                      Engine: fp_max * 2^-margin / amax, Inf -> FLT_MAX).
 *  @param algo         0 max over all L entries (NaN wins), 1 most_recent.
 *  @param format_dtype the format the scale targets: 3 E4M3 (fp_max 448),
 *                      4 E5M2 (57344) or 1 f16 (65504). */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_compute_scale(
    msamp_rt_unranked_memref *history, msamp_rt_unranked_memref *prev_scale,
    msamp_rt_unranked_memref *out, int32_t kind, int32_t algo,
    int32_t format_dtype, int32_t margin);

/** Rolls an amax history (msamp.update_amax_history):
 *  out[0] = amax, out[i] = history[i-1] for 0 < i < L.
 *  @param history rank-1 f32 [L].
 *  @param amax    one f32.
 *  @param out     rank-1 f32 [L]; may be the same buffer as `history` (exact
 *                 aliasing only, not a shifted overlap). */
MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_update_amax_history(msamp_rt_unranked_memref *history,
                                          msamp_rt_unranked_memref *amax,
                                          msamp_rt_unranked_memref *out);

/** Flags of msamp_rt_gemm. */
#define MSAMP_RT_GEMM_TRANSPOSE_A 0x1
#define MSAMP_RT_GEMM_TRANSPOSE_B 0x2
#define MSAMP_RT_GEMM_FAST_ACCUM 0x4 /**< a hint; the CPU ignores it. */
#define MSAMP_RT_GEMM_WRITE_AMAX 0x8

/** Scaled GEMM (msamp.gemm, docs/Numerics.md 3):
 *  out = (a_scale_inv * b_scale_inv) * op(a) x op(b), accumulated in f32 over
 *  the decoded operand values, rounded once to out_dtype.
 *  @param a, b      rank 2 ([M,K] x [K,N]) or rank 3 (a batch [B,.,.] of
 *                   GEMMs). op() swaps the two innermost dimensions when
 *                   MSAMP_RT_GEMM_TRANSPOSE_A / _B is set, so `a` is [K,M]
 *                   with transpose_a and `b` is [N,K] with transpose_b.
 *  @param a_dtype, b_dtype  both FP8 (f8E4M3FN / f8E5M2, not E5M2 x E5M2),
 *                   or both high precision: f32 (a plain GEMM the compiler
 *                   left unquantized), bf16 or f16 (widened exactly).
 *  @param a_scale_inv, b_scale_inv  one f32 each; always applied, so a plain
 *                   GEMM passes 1.0 memrefs.
 *  @param out       [M,N] or [B,M,N]; out_dtype f32, bf16 or f16. Must not
 *                   overlap a or b.
 *  @param out_amax  one f32, written with the amax of the f32 result (before
 *                   rounding to out_dtype) when MSAMP_RT_GEMM_WRITE_AMAX is
 *                   set; ignored (may be NULL) otherwise. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_gemm(
    msamp_rt_unranked_memref *a, msamp_rt_unranked_memref *a_scale_inv,
    msamp_rt_unranked_memref *b, msamp_rt_unranked_memref *b_scale_inv,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_amax,
    int32_t a_dtype, int32_t b_dtype, int32_t out_dtype, int32_t flags);

/** Reduction kinds of msamp_rt_all_reduce. */
#define MSAMP_RT_REDUCE_SUM 0
#define MSAMP_RT_REDUCE_MAX 1
#define MSAMP_RT_REDUCE_MEAN 2

/** Data-parallel all-reduce through the current collective (msamp.all_reduce).
 *  Every rank receives the same bytes.
 *  - dtype f32/bf16/f16, has_scale 0: sum, max, or mean (= sum / world size).
 *  - dtype f8E4M3FN/f8E5M2, has_scale 1: every rank's payload must share one
 *    inverse scale. Partial results combine in rank order 0, 1, ..., each hop
 *    fp8(half(a) + half(b)) (Numerics.md 4.4), max compares decoded values.
 *    out_scale_inv = scale_inv for sum and max, scale_inv / world size for
 *    mean: the FP8 bytes are never divided.
 *  @param in, out   same shape; `out` may be the same buffer as `in`.
 *  @param scale_inv, out_scale_inv  one f32 each when has_scale; ignored
 *                   (may be NULL) otherwise. out_scale_inv may alias
 *                   scale_inv. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_all_reduce(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale_inv,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_scale_inv,
    int32_t dtype, int32_t kind, int32_t has_scale);

/** ZeRO's reduce-to-owner (msamp.reduce): msamp_rt_all_reduce's arguments
 *  and arithmetic (the same rank-order combination, so the owner receives
 *  the bytes an all-reduce would give it), plus `root`, the rank that
 *  receives `out` and `out_scale_inv`; on the other ranks they are
 *  unspecified. A root outside the group is an error (the step was compiled
 *  for another world size). */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_reduce(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale_inv,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_scale_inv,
    int32_t dtype, int32_t kind, int32_t has_scale, int32_t root);

/** msamp.broadcast: `out` becomes rank `root`'s `in` on every rank, byte for
 *  byte (f32, bf16, f16, FP8 or i64 payloads; `in` may equal `out`). */
MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_broadcast(msamp_rt_unranked_memref *in,
                                msamp_rt_unranked_memref *out, int32_t dtype,
                                int32_t root);

/** ZeRO's reduce-scatter (msamp.reduce_scatter, docs/RuntimeABI.md 3.7c):
 *  `in` holds world-size shards of `out`'s element count, one after the
 *  other; rank r's `out` receives shard r reduced over the group with
 *  msamp_rt_all_reduce's arithmetic and payload forms (kind 0 sum, 1 max,
 *  2 mean; FP8 with has_scale and one shared inverse scale, out_scale_inv
 *  divided by the world size for mean), so its bytes are those an
 *  all-reduce of `in` would hold at that shard. `out` must not alias `in`.
 *  f32 and FP8 payloads. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_reduce_scatter(
    msamp_rt_unranked_memref *in, msamp_rt_unranked_memref *scale_inv,
    msamp_rt_unranked_memref *out, msamp_rt_unranked_memref *out_scale_inv,
    int32_t dtype, int32_t kind, int32_t has_scale);

/** ZeRO's all-gather (msamp.all_gather): `out` (world-size times `in`'s
 *  element count) receives rank r's `in` at element offset r * numel(in),
 *  byte for byte, on every rank. f32, bf16, f16 and FP8 payloads; `out`
 *  must not alias `in`. */
MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_all_gather(msamp_rt_unranked_memref *in,
                                 msamp_rt_unranked_memref *out, int32_t dtype);

/** Flags of msamp_rt_adam_update. */
#define MSAMP_RT_ADAM_DECOUPLED 0x1 /**< AdamW; otherwise L2 (Adam). */
/** With MSAMP_RT_ADAM_DECOUPLED: ONNX Runtime's AdamW mode 1 (Hugging Face
 *  AdamW) instead of PyTorch's:
 *    m', v' as below
 *    w' = w - (lr_c * m') / (sqrt(v') + eps)      lr_c = lr*sqrt(bc2)/bc1
 *    w' = w' - (lr*wd) * w'                        (if wd != 0)
 *  lr_c and lr*wd are computed in double and rounded to f32 once. */
#define MSAMP_RT_ADAM_MODE1 0x2

/** One Adam/AdamW step (msamp.adam_update, Numerics.md 5.2; PyTorch order).
 *  Per element, in f32 (constants rounded from double once):
 *    g = decode(grad) * grad_scale_inv           (grad if f32)
 *    w = decode(param) * (1 / param_scale)       (param if f32)
 *    AdamW: w = w * (1 - lr*wd)   Adam: g = g + wd * w      (if wd != 0)
 *    m' = b1 * m + (1 - b1) * g
 *    v' = b2 * v + ((1 - b2) * g) * g
 *    w' = w - ((lr / bc1) * m') / (sqrt(v') / sqrt(bc2) + eps)
 *  with bc1 = 1 - b1^step, bc2 = 1 - b2^step in double (step >= 1 is the
 *  number of this update, 1 for the first).
 *  Tensors and dtypes: param f32, f16, f8E4M3FN or f8E5M2; grad f32, f16 or
 *  FP8; m and v f32, f16 or FP8. All tensors have the same number of
 *  elements (and the outputs the shapes of their inputs).
 *  A low-precision param, m or v is read as decode * (1 / scale) and stored
 *  with a NEW just-in-time power-of-two scale for its own format:
 *  computeScalePow2(amax of the new f32 values, old scale, fp_max, 0) (old
 *  scale kept when that amax is 0 or non-finite), written to the matching
 *  out_*_scale. The weight update uses the f32 m' and v', not their
 *  re-quantized values.
 *  Scale arguments of f32 tensors (and of an f32 grad) are dummies: never
 *  read, never written, and may be NULL.
 *  Aliasing: every out_X may be the same buffer as X (in-place state update);
 *  element i is read completely before element i is written. lr is one f32,
 *  step one i64. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_adam_update(
    msamp_rt_unranked_memref *param, msamp_rt_unranked_memref *param_scale,
    msamp_rt_unranked_memref *grad, msamp_rt_unranked_memref *grad_scale_inv,
    msamp_rt_unranked_memref *m, msamp_rt_unranked_memref *m_scale,
    msamp_rt_unranked_memref *v, msamp_rt_unranked_memref *v_scale,
    msamp_rt_unranked_memref *lr, msamp_rt_unranked_memref *step,
    msamp_rt_unranked_memref *out_param,
    msamp_rt_unranked_memref *out_param_scale, msamp_rt_unranked_memref *out_m,
    msamp_rt_unranked_memref *out_m_scale, msamp_rt_unranked_memref *out_v,
    msamp_rt_unranked_memref *out_v_scale, int32_t param_dtype,
    int32_t grad_dtype, int32_t m_dtype, int32_t v_dtype, double beta1,
    double beta2, double eps, double weight_decay, int32_t flags);

/** Columns of msamp_rt_adam_update_multi's table. */
#define MSAMP_RT_ADAM_TABLE_COLUMNS 15

/** `count` Adam/AdamW steps in one call (RuntimeABI.md 3.8a): each exactly
 *  msamp_rt_adam_update of one table row, all with the dtypes, betas, eps,
 *  weight decay, flags, lr and step given here. `table` is an i64 memref
 *  [count, MSAMP_RT_ADAM_TABLE_COLUMNS]; row r holds numel, then the
 *  addresses of the first elements of param, param_scale, grad,
 *  grad_scale_inv, m, m_scale, v, v_scale, out_param, out_param_scale,
 *  out_m, out_m_scale, out_v, out_v_scale (adam_update's order without lr
 *  and step): contiguous buffers of numel elements of their dtype, and one
 *  f32 for a scale. The address of a scale of an f32 tensor (or grad) is
 *  ignored and may be 0; any other 0 is an error. Aliasing as in
 *  adam_update within a row (out_X may be X); rows must not overlap. The
 *  CPU backend runs the rows in order; the CUDA backend runs them in one
 *  or a few launches, with the same bits. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_adam_update_multi(
    msamp_rt_unranked_memref *table, msamp_rt_unranked_memref *lr,
    msamp_rt_unranked_memref *step, int32_t param_dtype, int32_t grad_dtype,
    int32_t m_dtype, int32_t v_dtype, double beta1, double beta2, double eps,
    double weight_decay, int32_t flags);

/** Flags of msamp_rt_sgd_update. */
#define MSAMP_RT_SGD_NESTEROV 0x1
#define MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER 0x2

/** One SGD step (msamp.sgd_update; PyTorch SGD, dampening 0), per element
 *  in f32:
 *    g = decode(grad) * grad_scale_inv (grad if f32);  w as in adam_update
 *    g = g + wd * w                                      (if wd != 0)
 *    with a momentum buffer: b' = (step == 1) ? g : momentum * b + g
 *                            g  = nesterov ? g + momentum * b' : b'
 *    w' = w - lr * g
 *  param f32, f16 or FP8 (+ scale, re-scaled just in time as in
 *  adam_update); grad f32, f16 or FP8 (+ scale_inv); buf, out_buf f32,
 *  present (non-NULL) iff MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER. Outputs may alias
 *  their inputs. */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_sgd_update(
    msamp_rt_unranked_memref *param, msamp_rt_unranked_memref *param_scale,
    msamp_rt_unranked_memref *grad, msamp_rt_unranked_memref *grad_scale_inv,
    msamp_rt_unranked_memref *buf, msamp_rt_unranked_memref *lr,
    msamp_rt_unranked_memref *step, msamp_rt_unranked_memref *out_param,
    msamp_rt_unranked_memref *out_param_scale,
    msamp_rt_unranked_memref *out_buf, int32_t param_dtype, int32_t grad_dtype,
    double momentum, double weight_decay, int32_t flags);

/** The range check of an index input (docs/RuntimeABI.md 11.1), called by
 *  a compiled step's packed entry point before the step runs: every element
 *  of `ids` (i64 or i32, read on the host, so host or managed memory) must
 *  lie in [lower, upper), or equal `ignore_index` when `has_ignore` is
 *  non-zero (the loss's ignore_index). The first element that does not
 *  records MSAMP_RT_ERROR_INVALID_ARGUMENT, "msamp_train_step: input
 *  'ids': value 70 at [1, 3] is outside the valid range [0, 64)", and is
 *  returned; the step then does not run. `name` is the input's manifest
 *  name. */
MSAMP_RT_EXPORT msamp_rt_status msamp_rt_check_index(
    const msamp_rt_unranked_memref *ids, int32_t dtype, int64_t lower,
    int64_t upper, int64_t ignore_index, int32_t has_ignore, const char *name);

/** msamp.check_index: the range check of an index computed in the graph
 *  (docs/RuntimeABI.md 3.11), called inside the step before the op that
 *  reads the indices. Every element of `ids` (i64 or i32, read on the host)
 *  must lie in [0, upper), or equal `ignore_index` when `has_ignore` is
 *  non-zero. The first element that does not records
 *  MSAMP_RT_ERROR_INVALID_ARGUMENT, "msamp_train_step: index computed at
 *  model.mlir:12:5: value 12 at [1, 3] is outside the valid range [0, 10)";
 *  `site` is a 1-d i8 buffer holding that location (not NUL-terminated).
 *  An error recorded earlier in the step is kept (the first fault is the
 *  one reported). The step runs on with clamped reads; the caller must
 *  refuse it and restore the state (the session does). */
MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_check_computed_index(
    msamp_rt_unranked_memref *ids, msamp_rt_unranked_memref *site,
    int32_t dtype, int64_t upper, int64_t ignore_index, int32_t has_ignore);

/** The computed-index checks of a step whose buffers are device memory
 *  (docs/RuntimeABI.md 3.11.1): between _begin and _end, this thread's
 *  msamp_rt_check_computed_index calls record nothing and wait for
 *  nothing; the k-th call of the step fills slot k of the record (on the
 *  CUDA backend's stream, in device memory, when the record was created
 *  with that backend current; on the host otherwise). After the caller's
 *  wait for the step, _end records the error of the first failing call in
 *  step order, the message the immediate check gives (an error recorded
 *  earlier is kept), and returns its code. A step replayed from a CUDA
 *  graph makes no calls: _end reads the slots of the calls of the run that
 *  was captured. _create returns null (with the error) when the device
 *  record cannot be allocated. */
typedef struct msamp_rt_index_checks msamp_rt_index_checks;
MSAMP_RT_EXPORT msamp_rt_index_checks *msamp_rt_index_checks_create(void);
MSAMP_RT_EXPORT void msamp_rt_index_checks_destroy(msamp_rt_index_checks *c);
MSAMP_RT_EXPORT void msamp_rt_index_checks_begin(msamp_rt_index_checks *c);
MSAMP_RT_EXPORT msamp_rt_status
msamp_rt_index_checks_end(msamp_rt_index_checks *c);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MSAMP_RUNTIME_MSAMP_RUNTIME_H */
