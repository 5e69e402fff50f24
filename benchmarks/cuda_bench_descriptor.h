//===- cuda_bench_descriptor.h - memref descriptors for the CUDA benches -===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The ranked descriptor behind an msamp_rt_unranked_memref (RuntimeABI.md
// 2): a row-major view of `data` with `sizes`, as a compiled step passes
// its buffers to the runtime. Shared by cuda_gemm_bench and
// cuda_runtime_bw_bench.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_BENCHMARKS_CUDA_BENCH_DESCRIPTOR_H
#define MSAMP_BENCHMARKS_CUDA_BENCH_DESCRIPTOR_H

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>
#include <vector>

namespace msamp_bench {

/// A rank-R memref descriptor over a device pointer (RuntimeABI.md 2).
struct Descriptor {
  std::vector<int64_t> words;
  msamp_rt_unranked_memref memref;
  Descriptor(void *data, std::vector<int64_t> sizes) {
    const int64_t rank = static_cast<int64_t>(sizes.size());
    words.assign(3 + 2 * rank, 0);
    words[0] = words[1] = reinterpret_cast<intptr_t>(data);
    int64_t stride = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
      words[3 + i] = sizes[i];
      words[3 + rank + i] = stride;
      stride *= sizes[i];
    }
    memref.rank = rank;
    memref.descriptor = words.data();
  }
  msamp_rt_unranked_memref *get() { return &memref; }
};

} // namespace msamp_bench

#endif // MSAMP_BENCHMARKS_CUDA_BENCH_DESCRIPTOR_H
