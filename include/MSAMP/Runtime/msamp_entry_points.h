/*===- msamp_entry_points.h - Entry points of compiled steps ------*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * The one table of the kernel entry points that convert-msamp-to-runtime
 * emits calls to (docs/RuntimeABI.md 3), with their argument kinds, defined
 * once: the compiler (RuntimeSymbols.h's RuntimeFn and the declarations it
 * builds) expands this list, and the runtime checks at compile time that
 * every prototype of msamp_runtime.h (`_mlir_ciface_<symbol>`) has exactly
 * these parameter types (lib/Runtime/EntryPoints.cpp). Adding an entry
 * point: one line here, its documented prototype in msamp_runtime.h and its
 * implementation in the runtime.
 *
 * MSAMP_RT_ENTRY_POINT_LIST(X) calls X(Name, symbol, ARG...) once per entry:
 * Name is the compiler's RuntimeFn enumerator (numbered in list order),
 * symbol the runtime function (its C definition is `_mlir_ciface_<symbol>`),
 * and each ARG one parameter, in order, as one of the MSAMP_RT_ARG_* types
 * below. Every entry point returns void (errors are sticky, see
 * msamp_runtime.h).
 *
 * Plain C (C99 or C++), no declarations of functions; included by
 * msamp_runtime.h.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_ENTRY_POINTS_H
#define MSAMP_RUNTIME_MSAMP_ENTRY_POINTS_H

/** Parameter kinds, as the C types of the prototypes. A memref travels as a
 *  pointer to its unranked descriptor (`memref<*xi8>` in the IR); the
 *  scalars as i32, i64 and f64. */
#define MSAMP_RT_ARG_MEMREF msamp_rt_unranked_memref *
#define MSAMP_RT_ARG_I32 int32_t
#define MSAMP_RT_ARG_I64 int64_t
#define MSAMP_RT_ARG_F64 double

#define MSAMP_RT_ENTRY_POINT_LIST(X)                                           \
  X(Quantize, msamp_rt_quantize, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,     \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                   \
  X(Dequantize, msamp_rt_dequantize, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                   \
  X(Amax, msamp_rt_amax, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_I32)                                                          \
  X(ComputeScale, msamp_rt_compute_scale, MSAMP_RT_ARG_MEMREF,                 \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                      \
  X(UpdateAmaxHistory, msamp_rt_update_amax_history, MSAMP_RT_ARG_MEMREF,      \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF)                                  \
  X(Gemm, msamp_rt_gemm, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, \
    MSAMP_RT_ARG_I32)                                                          \
  X(AllReduce, msamp_rt_all_reduce, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,  \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                                        \
  X(Reduce, msamp_rt_reduce, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,         \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                      \
  X(Broadcast, msamp_rt_broadcast, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,   \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                                        \
  X(AdamUpdate, msamp_rt_adam_update, MSAMP_RT_ARG_MEMREF,                     \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32,    \
    MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64,    \
    MSAMP_RT_ARG_I32)                                                          \
  X(AdamUpdateMulti, msamp_rt_adam_update_multi, MSAMP_RT_ARG_MEMREF,          \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_F64,    \
    MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_I32)    \
  X(SGDUpdate, msamp_rt_sgd_update, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,  \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_F64, MSAMP_RT_ARG_I32)    \
  X(CheckComputedIndex, msamp_rt_check_computed_index, MSAMP_RT_ARG_MEMREF,    \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I64, MSAMP_RT_ARG_I64, \
    MSAMP_RT_ARG_I32)                                                          \
  X(ReduceScatter, msamp_rt_reduce_scatter, MSAMP_RT_ARG_MEMREF,               \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                      \
  X(AllGather, msamp_rt_all_gather, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,  \
    MSAMP_RT_ARG_I32)                                                          \
  X(QuantizeJit, msamp_rt_quantize_jit, MSAMP_RT_ARG_MEMREF,                   \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32,                \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)    \
  X(ScaleUpdate, msamp_rt_scale_update, MSAMP_RT_ARG_MEMREF,                   \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                      \
  X(QuantizeTranspose, msamp_rt_quantize_transpose, MSAMP_RT_ARG_MEMREF,       \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)                                        \
  X(QuantizeScaleUpdate, msamp_rt_quantize_scale_update, MSAMP_RT_ARG_MEMREF,  \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF, MSAMP_RT_ARG_MEMREF,             \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32,    \
    MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32, MSAMP_RT_ARG_I32)

/** The plain-C functions a compiled step's packed entry point calls directly
 *  (msamp-emit-entry-point), not through `_mlir_ciface_`, as
 *  X(Name, symbol, RESULT, ARG...) with their C result and parameter types:
 *  Name is the compiler's HostRuntimeFn enumerator. The compiler declares
 *  each pointer as `!llvm.ptr` and each integer or enum as an integer of its
 *  width. */
#define MSAMP_RT_HOST_ENTRY_POINT_LIST(X)                                      \
  X(CheckIndex, msamp_rt_check_index, msamp_rt_status,                         \
    const msamp_rt_unranked_memref *, int32_t, int64_t, int64_t, int64_t,      \
    int32_t, const char *)

#endif /* MSAMP_RUNTIME_MSAMP_ENTRY_POINTS_H */
