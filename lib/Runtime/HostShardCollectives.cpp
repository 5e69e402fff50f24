//===- HostShardCollectives.cpp - reduce-scatter and all-gather on host --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// ZeRO's two flat-shard collectives (issue 20) for backends whose buffers
// are host memory (the CPU backend binds them): the payload goes
// straight to the Collective, and the mean of an FP8 payload divides its
// inverse scale, never its bytes, exactly as msamp_rt_all_reduce does
// (CpuBackend.cpp), so a reduce-scatter's shard equals the same slice of an
// all-reduce, scale included.
//
//===----------------------------------------------------------------------===//

#include "HostShardCollectives.h"
#include "Collective.h"
#include "DType.h"
#include "Status.h"

namespace msamp::runtime {

msamp_rt_status hostReduceScatter(const AllReduceParams &p,
                                  Collective &collective) {
  const CollectiveOp op =
      p.kind == ReduceKind::Max ? CollectiveOp::Max : CollectiveOp::Sum;
  const bool mean = p.kind == ReduceKind::Mean;
  const int world = collective.worldSize();
  msamp_rt_status s = MSAMP_RT_OK;
  if (isFP8(p.dtype)) {
    // Read before the collective: out_scale_inv may alias scale_inv.
    const float scaleInv = *p.scaleInv;
    s = collective.reduceScatterFP8(static_cast<const uint8_t *>(p.in),
                                    static_cast<uint8_t *>(p.out), p.numel,
                                    toFormat(p.dtype), op);
    if (!s)
      *p.outScaleInv =
          mean ? numerics::detail::divRn(scaleInv, static_cast<float>(world))
               : scaleInv;
  } else {
    auto *out = static_cast<float *>(p.out);
    s = collective.reduceScatterF32(static_cast<const float *>(p.in), out,
                                    p.numel, op);
    if (!s && mean && world != 1)
      for (int64_t i = 0; i < p.numel; ++i)
        out[i] = numerics::detail::divRn(out[i], static_cast<float>(world));
  }
  if (s)
    return recordError(s, "msamp_rt_reduce_scatter: collective '%s' failed",
                       collective.name());
  return MSAMP_RT_OK;
}

msamp_rt_status hostAllGather(const void *in, void *out, int64_t bytes,
                              Collective &collective) {
  if (msamp_rt_status s = collective.allGather(in, out, bytes))
    return recordError(s, "msamp_rt_all_gather: collective '%s' failed",
                       collective.name());
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime
