//===- NcclTypeMap.h - (dtype, reduction) -> NCCL all-reduce ----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The one table that decides how an msamp all-reduce runs on NCCL. Every
// (msamp_rt_dtype, reduction) pair — including codes outside the enum — is
// either mapped to a strategy or rejected with a reason; nothing falls
// through a default. Translation tables are a bug magnet (IREE's NCCL table
// once mapped bf16 to ncclFloat64, docs/Style.md 4.1), so this one is pure
// logic in its own translation unit, needs no device and no NCCL library (only
// nccl.h's enum values), and its unit test enumerates every pair.
//
// The table (docs/Numerics.md 4.4):
//
//   dtype        sum / mean                     max
//   f32          native ncclFloat32 ncclSum     native ncclFloat32 ncclMax
//   bf16, f16    widen to f32 in the backend, ncclFloat32, round once
//                (the CPU's semantics: reduce in f32, one rounding; NCCL's
//                own 16-bit sum would round every hop)
//   f8E4M3FN     native ncclFloat8e4m3 (SUM/MAX) when every device of the
//                group is sm_90+ and NCCL >= 2.24.3; otherwise all-gather
//                the codes (ncclUint8) and reduce in rank order on the
//                device with the per-hop fp8(half(a) + half(b)) of
//                docs/Numerics.md 4.4, bit-identical to the CPU reference
//   f8E5M2       the same with ncclFloat8e5m2
//   i32, i64,    rejected: the ABI all-reduces float payloads only
//   unknown      rejected
//
// Mean is SUM followed by a post-division: of the f32 data, or of an FP8
// payload's inverse scale (MS-AMP's scale_inv /= world_size). ncclAvg is
// never used: for FP8 it is a pre-multiplication by fp8(1/N), inexact unless
// N is a power of two, and it underflows small gradients.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLTYPEMAP_H
#define MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLTYPEMAP_H

#include <nccl.h>

#include <cstdint>

namespace msamp::runtime::cuda {

/// How a (dtype, reduction) pair is all-reduced.
enum class NcclStrategy : uint8_t {
  Native,          ///< one ncclAllReduce(type, op)
  WidenToF32,      ///< widen to f32, ncclAllReduce(ncclFloat32, op), round
  GatherRankOrder, ///< ncclAllGather(ncclUint8) + rank-order device reduce
  Reject           ///< not supported; `reason` says why
};

/// What the group can do, measured once when the communicator is set up.
struct NcclGroupCaps {
  /// Minimum over all ranks of major * 10 + minor (90 for sm_90).
  int minComputeCapability = 0;
  /// ncclGetVersion() of the loaded library (22809 for 2.28.9).
  int ncclVersion = 0;
};

/// First NCCL release with ncclFloat8e4m3/ncclFloat8e5m2 (2.24.3).
constexpr int kNcclFirstFP8Version = 22403;
/// NCCL reduces FP8 only on sm_90 and newer ("FP8 reduction support begins
/// with sm90 capable devices", NCCL src/enqueue.cc).
constexpr int kNcclFP8MinComputeCapability = 90;

struct NcclReduceMapping {
  NcclStrategy strategy = NcclStrategy::Reject;
  ncclDataType_t type = ncclUint8; ///< the wire type (Native, WidenToF32,
                                   ///< GatherRankOrder)
  ncclRedOp_t op = ncclSum;        ///< Native and WidenToF32 only
  bool usesOp = false;             ///< false for GatherRankOrder and Reject
  /// Mean: divide afterwards (f32 data, or the FP8 inverse scale).
  bool postDivide = false;
  /// FP8: the division applies to the inverse scale, not to the codes.
  bool divideScaleInv = false;
  const char *reason = ""; ///< for Reject and for logs
};

/// The table. `dtype` is an msamp_rt_dtype code, `kind` MSAMP_RT_REDUCE_*
/// (0 sum, 1 max, 2 mean); anything else is rejected.
NcclReduceMapping mapNcclAllReduce(int32_t dtype, int32_t kind,
                                   const NcclGroupCaps &caps);

/// "native", "widen-to-f32", "gather-rank-order", "reject".
const char *ncclStrategyName(NcclStrategy strategy);

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLTYPEMAP_H
