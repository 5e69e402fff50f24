//===- NcclCollective.h - The Collective interface on NCCL ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A Collective (Collective.h) over an NCCL communicator. The CUDA backend
// installs it when it starts in a multi-process job (see
// NcclCollective.cpp for the environment). Reductions follow NcclTypeMap.h;
// pointers may be device memory (the CUDA backend's case, zero copy) or
// host memory (staged, so the CPU backend can run under it too).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLCOLLECTIVE_H
#define MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLCOLLECTIVE_H

#include "../../Collective.h"
#include "../common/Staging.h"
#include "NcclTypeMap.h"

#include <nccl.h>

#include <memory>
#include <string>

namespace msamp::runtime::cuda {

/// The job layout read from the environment.
struct NcclEnvironment {
  bool enabled = false; ///< MSAMP_WORLD_SIZE > 1
  int rank = 0, worldSize = 1;
  std::string idPath;          ///< MSAMP_NCCL_ID
  double timeoutSeconds = 300; ///< MSAMP_NCCL_TIMEOUT_S
};

/// Parses MSAMP_WORLD_SIZE, MSAMP_RANK, MSAMP_NCCL_ID and
/// MSAMP_NCCL_TIMEOUT_S; records an error for malformed or inconsistent
/// values.
msamp_rt_status readNcclEnvironment(NcclEnvironment &env);

class NcclCollective final : public Collective {
public:
  /// Creates the communicator (rank 0 publishes the NCCL unique id in the
  /// MSAMP_NCCL_ID file, the others wait for it) and measures the group's
  /// capabilities. Null, with the error recorded, on failure. `ctx` is the
  /// backend's and outlives the collective.
  static std::unique_ptr<NcclCollective> create(const DeviceContext &ctx,
                                                const NcclEnvironment &env);
  ~NcclCollective() override;

  const char *name() const override { return "nccl"; }
  int rank() const override { return rankIndex; }
  int worldSize() const override { return ranks; }

  msamp_rt_status allReduceF32(const float *in, float *out, int64_t n,
                               CollectiveOp op) override;
  msamp_rt_status allReduceFP8(const uint8_t *in, uint8_t *out, int64_t n,
                               numerics::Format format,
                               CollectiveOp op) override;
  /// ncclBroadcast of raw bytes (no reduction: any architecture).
  msamp_rt_status broadcast(void *data, int64_t bytes, int root) override;
  /// ncclReduceScatter where NcclTypeMap.h maps the payload natively,
  /// else this rank's slice of the all-reduce; ncclAllGather of bytes.
  msamp_rt_status reduceScatterF32(const float *in, float *out, int64_t n,
                                   CollectiveOp op) override;
  msamp_rt_status reduceScatterFP8(const uint8_t *in, uint8_t *out, int64_t n,
                                   numerics::Format format,
                                   CollectiveOp op) override;
  msamp_rt_status allGather(const void *in, void *out, int64_t bytes) override;

  const NcclGroupCaps &caps() const { return groupCaps; }

private:
  NcclCollective(const DeviceContext &ctx) : ctx(ctx) {}
  msamp_rt_status measureCaps();

  const DeviceContext &ctx;
  ncclComm_t comm = nullptr;
  int rankIndex = 0, ranks = 1;
  NcclGroupCaps groupCaps;
};

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMM_NCCLCOLLECTIVE_H
