//===- HostShardCollectives.h - host-memory shard collectives --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_reduce_scatter and msamp_rt_all_gather for a backend whose
// buffers are host memory: straight through the Collective.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_HOSTSHARDCOLLECTIVES_H
#define MSAMP_LIB_RUNTIME_HOSTSHARDCOLLECTIVES_H

#include "Backend.h"

namespace msamp::runtime {

msamp_rt_status hostReduceScatter(const AllReduceParams &p,
                                  Collective &collective);
msamp_rt_status hostAllGather(const void *in, void *out, int64_t bytes,
                              Collective &collective);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_HOSTSHARDCOLLECTIVES_H
