//===- NcclTypeMap.cpp - (dtype, reduction) -> NCCL all-reduce ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// See NcclTypeMap.h. Pure table logic: no device, no NCCL call.
//
//===----------------------------------------------------------------------===//

#include "NcclTypeMap.h"

#include "MSAMP/Runtime/msamp_runtime.h"

namespace msamp::runtime::cuda {
namespace {

NcclReduceMapping reject(const char *reason) {
  NcclReduceMapping m;
  m.strategy = NcclStrategy::Reject;
  m.reason = reason;
  return m;
}

NcclReduceMapping onWire(NcclStrategy strategy, ncclDataType_t type,
                         ncclRedOp_t op, bool mean, const char *reason) {
  NcclReduceMapping m;
  m.strategy = strategy;
  m.type = type;
  m.op = op;
  m.usesOp = true;
  m.postDivide = mean;
  m.reason = reason;
  return m;
}

/// FP8: native when the whole group and the library can, else the gather.
NcclReduceMapping fp8(int32_t dtype, bool isMax, bool mean,
                      const NcclGroupCaps &caps) {
  NcclReduceMapping m;
  const bool libraryCan = caps.ncclVersion >= kNcclFirstFP8Version;
  const bool groupCan =
      caps.minComputeCapability >= kNcclFP8MinComputeCapability;
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22403
  const bool headerCan = true;
#else
  const bool headerCan = false;
#endif
  if (libraryCan && groupCan && headerCan) {
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22403
    m.type = dtype == MSAMP_RT_F8E4M3FN ? ncclFloat8e4m3 : ncclFloat8e5m2;
#endif
    m.strategy = NcclStrategy::Native;
    m.op = isMax ? ncclMax : ncclSum;
    m.usesOp = true;
    m.reason = "NCCL's FP8 reduction (per-hop fp8(half(a) + half(b)))";
  } else {
    m.strategy = NcclStrategy::GatherRankOrder;
    m.type = ncclUint8;
    m.usesOp = false;
    m.reason = !groupCan ? "a device of the group is below sm_90: all-gather "
                           "and reduce in rank order"
                         : "NCCL < 2.24.3 has no FP8 types: all-gather and "
                           "reduce in rank order";
  }
  m.postDivide = mean;
  m.divideScaleInv = mean;
  return m;
}

} // namespace

NcclReduceMapping mapNcclAllReduce(int32_t dtype, int32_t kind,
                                   const NcclGroupCaps &caps) {
  if (kind != MSAMP_RT_REDUCE_SUM && kind != MSAMP_RT_REDUCE_MAX &&
      kind != MSAMP_RT_REDUCE_MEAN)
    return reject("unknown reduction kind (expected 0 sum, 1 max, 2 mean)");
  const bool isMax = kind == MSAMP_RT_REDUCE_MAX;
  const bool mean = kind == MSAMP_RT_REDUCE_MEAN;
  const ncclRedOp_t op = isMax ? ncclMax : ncclSum; // never ncclAvg

  switch (dtype) {
  case MSAMP_RT_F32:
    return onWire(NcclStrategy::Native, ncclFloat32, op, mean,
                  "f32 on the wire");
  case MSAMP_RT_F16:
    return onWire(NcclStrategy::WidenToF32, ncclFloat32, op, mean,
                  "f16 widened to f32, reduced, rounded once");
  case MSAMP_RT_BF16:
    return onWire(NcclStrategy::WidenToF32, ncclFloat32, op, mean,
                  "bf16 widened to f32, reduced, rounded once");
  case MSAMP_RT_F8E4M3FN:
  case MSAMP_RT_F8E5M2:
    return fp8(dtype, isMax, mean, caps);
  case MSAMP_RT_I32:
  case MSAMP_RT_I64:
    return reject("integer payloads are not all-reduced by the runtime ABI");
  default:
    return reject("unknown dtype code");
  }
}

const char *ncclStrategyName(NcclStrategy strategy) {
  switch (strategy) {
  case NcclStrategy::Native:
    return "native";
  case NcclStrategy::WidenToF32:
    return "widen-to-f32";
  case NcclStrategy::GatherRankOrder:
    return "gather-rank-order";
  case NcclStrategy::Reject:
    return "reject";
  }
  return "reject";
}

} // namespace msamp::runtime::cuda
