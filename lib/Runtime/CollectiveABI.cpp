//===- CollectiveABI.cpp - The collective entry points
//---------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The _mlir_ciface_msamp_rt_* adapters of the collectives (docs/RuntimeABI.md
// 3.7 to 3.7d), checked and dispatched as MemRefABI.cpp's are: dtype codes,
// descriptors, shapes against the group's size, then the current backend
// with the current collective.
//
//===----------------------------------------------------------------------===//

#include "Collective.h"
#include "EntryPointSupport.h"

#include <cstdint>

using namespace msamp::runtime;

extern "C" {

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Whether a collective's bytes count in msamp_rt_collective_bytes (the
/// log's comm_bytes: tensor payload, scaling state excluded). The compiled
/// step reduces gradients and partial results with sum or mean; a max
/// reduction is always scaling state (the amaxes MAX-combined over ranks,
/// one or a vector of them), and a 0-d payload is a scalar statistic (the
/// gradient norm's partial sums). Neither grows with the model.
static bool isTensorPayload(const View &payload, ReduceKind kind) {
  return kind != ReduceKind::Max && payload.rank > 0;
}

/// The reduction kind of msamp_rt_all_reduce, _reduce and _reduce_scatter.
static msamp_rt_status checkReduceKind(const char *fn, int32_t kind) {
  if (kind >= 0 && kind <= 2)
    return MSAMP_RT_OK;
  return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                     "%s: kind %d is not 0 (sum), 1 (max) or 2 (mean)", fn,
                     kind);
}

/// An FP8 payload's inverse scale and its output's, into `p`.
static msamp_rt_status unpackPayloadScales(const char *fn, UMR *scaleInv,
                                           UMR *outScaleInv,
                                           AllReduceParams &p) {
  float *in = nullptr;
  if (msamp_rt_status s = unpackF32Scalar(fn, "scale_inv", scaleInv, in))
    return s;
  if (msamp_rt_status s =
          unpackF32Scalar(fn, "out_scale_inv", outScaleInv, p.outScaleInv))
    return s;
  p.scaleInv = in;
  return MSAMP_RT_OK;
}

/// msamp_rt_all_reduce (root -1) and msamp_rt_reduce (root >= 0): one
/// unpacking and validation for both.
static void reduceThroughCollective(const char *fn, UMR *in, UMR *scale_inv,
                                    UMR *out, UMR *out_scale_inv, int32_t dtype,
                                    int32_t kind, int32_t has_scale,
                                    int32_t root) {
  MSAMP_RT_TRY(checkReduceKind(fn, kind));
  if (isFP8(dtype) && !has_scale)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: an FP8 payload (%s) needs has_scale = 1", fn,
                             dtypeName(dtype));
  if (isHighPrecision(dtype) && has_scale)
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: has_scale is set for a %s payload; only FP8 "
                             "payloads carry an inverse scale",
                             fn, dtypeName(dtype));
  if (!isFP8(dtype) && !isHighPrecision(dtype))
    return (void)unsupportedDType(fn, "payload", dtype,
                                  "f32, bf16, f16, f8E4M3FN or f8E5M2");
  AllReduceParams p;
  View vin, vout;
  MSAMP_RT_TRY(unpack(fn, "input", in, dtype, vin));
  MSAMP_RT_TRY(unpack(fn, "output", out, dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  if (has_scale)
    MSAMP_RT_TRY(unpackPayloadScales(fn, scale_inv, out_scale_inv, p));
  p.in = vin.data;
  p.out = vout.data;
  p.numel = vin.numel;
  p.dtype = dtype;
  p.kind = static_cast<ReduceKind>(kind);
  p.root = root;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  // Payload bytes handed to the data-parallel group
  // (msamp_rt_collective_bytes): tensor payload only, see
  // isTensorPayload.
  if (isTensorPayload(vin, p.kind))
    countCollectiveBytes(p.numel * dtypeSize(dtype));
  finish(fn, backend, backend->allReduce(p, currentCollective()));
}

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_all_reduce(UMR *in, UMR *scale_inv, UMR *out,
                                 UMR *out_scale_inv, int32_t dtype,
                                 int32_t kind, int32_t has_scale) {
  reduceThroughCollective("msamp_rt_all_reduce", in, scale_inv, out,
                          out_scale_inv, dtype, kind, has_scale, /*root=*/-1);
}

/// The owner rank of msamp_rt_reduce / msamp_rt_broadcast must be in the
/// current group; records the error otherwise.
static bool rootInGroup(const char *fn, int32_t root) {
  const int32_t world = currentCollective().worldSize();
  if (root >= 0 && root < world)
    return true;
  recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
              "%s: root %d is not a rank of this group of %d (the step was "
              "compiled for another world size)",
              fn, root, world);
  return false;
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_reduce(UMR *in, UMR *scale_inv,
                                                  UMR *out, UMR *out_scale_inv,
                                                  int32_t dtype, int32_t kind,
                                                  int32_t has_scale,
                                                  int32_t root) {
  static const char *const fn = "msamp_rt_reduce";
  if (!rootInGroup(fn, root))
    return;
  reduceThroughCollective(fn, in, scale_inv, out, out_scale_inv, dtype, kind,
                          has_scale, root);
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_broadcast(UMR *in, UMR *out,
                                                     int32_t dtype,
                                                     int32_t root) {
  static const char *const fn = "msamp_rt_broadcast";
  if (!rootInGroup(fn, root))
    return;
  if (!isFP8(dtype) && !isHighPrecision(dtype) && dtype != MSAMP_RT_I64)
    return (void)unsupportedDType(fn, "payload", dtype,
                                  "f32, bf16, f16, f8E4M3FN, f8E5M2 or i64");
  View vin, vout;
  MSAMP_RT_TRY(unpack(fn, "input", in, dtype, vin));
  MSAMP_RT_TRY(unpack(fn, "output", out, dtype, vout));
  MSAMP_RT_TRY(sameShape(fn, "input", vin, "output", vout));
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  const int64_t bytes = vin.numel * dtypeSize(dtype);
  countCollectiveBytes(bytes);
  finish(fn, backend,
         backend->broadcast(vin.data, vout.data, bytes, root,
                            currentCollective()));
}

/// ZeRO's flat-shard collectives count what a rank sends in the
/// bandwidth-optimal (ring) schedule: (N - 1) shards, so that a
/// reduce-scatter plus an all-gather of P bytes counts 2 (N - 1) / N P.
static int64_t shardTraffic(int64_t shardBytes) {
  return shardBytes * (currentCollective().worldSize() - 1);
}

/// The shapes of a reduce-scatter (whole in, shard out) and an all-gather
/// (shard in, whole out): `whole` holds one `shard`-sized piece per rank of
/// the group, in a buffer apart from `shard`'s. Records the error otherwise.
static bool checkShards(const char *fn, const char *wholeName,
                        const View &whole, const char *shardName,
                        const View &shard) {
  const int64_t world = currentCollective().worldSize();
  if (whole.numel != shard.numel * world) {
    recordError(MSAMP_RT_ERROR_SHAPE_MISMATCH,
                "%s: %s has %lld elements, expected %lld shards of the %s's "
                "%lld (the step was compiled for another world size?)",
                fn, wholeName, static_cast<long long>(whole.numel),
                static_cast<long long>(world), shardName,
                static_cast<long long>(shard.numel));
    return false;
  }
  if (whole.data == shard.data && shard.numel > 0) {
    recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "%s: the output aliases the input", fn);
    return false;
  }
  return true;
}

MSAMP_RT_EXPORT void
_mlir_ciface_msamp_rt_reduce_scatter(UMR *in, UMR *scale_inv, UMR *out,
                                     UMR *out_scale_inv, int32_t dtype,
                                     int32_t kind, int32_t has_scale) {
  static const char *const fn = "msamp_rt_reduce_scatter";
  MSAMP_RT_TRY(checkReduceKind(fn, kind));
  if (!isFP8(dtype) && dtype != MSAMP_RT_F32)
    return (void)unsupportedDType(fn, "payload", dtype,
                                  "f32, f8E4M3FN or f8E5M2");
  if (isFP8(dtype) != (has_scale != 0))
    return (void)recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                             "%s: has_scale is %d for a %s payload; FP8 "
                             "payloads, and only they, carry an inverse scale",
                             fn, has_scale, dtypeName(dtype));
  View vin, vout;
  MSAMP_RT_TRY(unpack(fn, "input", in, dtype, vin));
  MSAMP_RT_TRY(unpack(fn, "output", out, dtype, vout));
  if (!checkShards(fn, "input", vin, "output", vout))
    return;
  AllReduceParams p;
  if (has_scale)
    MSAMP_RT_TRY(unpackPayloadScales(fn, scale_inv, out_scale_inv, p));
  p.in = vin.data;
  p.out = vout.data;
  p.numel = vout.numel;
  p.dtype = dtype;
  p.kind = static_cast<ReduceKind>(kind);
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  countCollectiveBytes(shardTraffic(vout.numel * dtypeSize(dtype)));
  finish(fn, backend, backend->reduceScatter(p, currentCollective()));
}

MSAMP_RT_EXPORT void _mlir_ciface_msamp_rt_all_gather(UMR *in, UMR *out,
                                                      int32_t dtype) {
  static const char *const fn = "msamp_rt_all_gather";
  if (!isFP8(dtype) && !isHighPrecision(dtype))
    return (void)unsupportedDType(fn, "payload", dtype,
                                  "f32, bf16, f16, f8E4M3FN or f8E5M2");
  View vin, vout;
  MSAMP_RT_TRY(unpack(fn, "input", in, dtype, vin));
  MSAMP_RT_TRY(unpack(fn, "output", out, dtype, vout));
  if (!checkShards(fn, "output", vout, "input", vin))
    return;
  Backend *backend = backendFor(fn);
  if (!backend)
    return;
  const int64_t bytes = vin.numel * dtypeSize(dtype);
  countCollectiveBytes(shardTraffic(bytes));
  finish(fn, backend,
         backend->allGather(vin.data, vout.data, bytes, currentCollective()));
}

} // extern "C"
