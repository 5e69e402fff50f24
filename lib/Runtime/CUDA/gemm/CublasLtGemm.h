//===- CublasLtGemm.h - FP8 and high-precision GEMMs ------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_gemm on the device (docs/Numerics.md 3). One cuBLASLt handle, one
// workspace and a cache of matmul plans per backend; see CublasLtGemm.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_GEMM_CUBLASLTGEMM_H
#define MSAMP_LIB_RUNTIME_CUDA_GEMM_CUBLASLTGEMM_H

#include "../../Backend.h"
#include "../common/Staging.h"

#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace msamp::runtime::cuda {

class CublasLtGemm {
public:
  CublasLtGemm(); // out of line: Plan is complete only in the .cpp
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm &) = delete;
  CublasLtGemm &operator=(const CublasLtGemm &) = delete;

  /// Creates the handle and the workspace: 32 MiB on sm_90 and newer, 4 MiB
  /// before (MS-AMP's and Transformer Engine's sizes).
  msamp_rt_status init(const DeviceContext &ctx);

  /// Runs `p`, whose pointers are device pointers (staged by the backend);
  /// scratch comes from `staging`. M, N, K and the batch are all non-zero.
  msamp_rt_status run(const GemmParams &p, Staging &staging);

  size_t workspaceBytes() const { return workspaceSize; }
  size_t cachedPlans() const { return plans.size(); }

  /// The plan cache key: everything the matmul descriptor, the layouts and
  /// the heuristic's choice depend on (shapes, dtypes, transposes, batch,
  /// fast accumulation, pointer mode, alignments). Pointers are not in it:
  /// they are set on the descriptor per call.
  struct PlanKey {
    int32_t aType, bType, dType;
    uint64_t aRows, aCols, bRows, bCols, dRows, dCols;
    int64_t lda, ldb, ldd, strideA, strideB, strideD;
    int32_t batch;
    bool transA, transB, fp8, fastAccum;
    uint32_t alignA, alignB, alignD;
    bool operator==(const PlanKey &o) const;
  };
  struct PlanKeyHash {
    size_t operator()(const PlanKey &key) const;
  };

private:
  struct Plan;
  msamp_rt_status getPlan(const PlanKey &key, Plan *&plan);

  const DeviceContext *ctx = nullptr;
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  size_t workspaceSize = 0;
  std::mutex mutex; ///< the cache and the per-call descriptor attributes
  std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash> plans;
};

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_GEMM_CUBLASLTGEMM_H
