//===- index_check.cu - A computed index's range check on the stream ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp.check_index on a GPU step (RuntimeABI.md 3.11): the indices a
// kernel computed are checked where they are, on the stream, so the step
// needs no wait and can be captured as a CUDA graph. The result goes to a
// 16-byte record in device memory that the session reads after the step's
// one synchronization: the lowest bad linear index (the element the CPU
// reports first, whatever order the threads run in: atomicMin) and, from a
// second one-thread launch once the first is complete, that element's
// value. The record is reset by a memset in the same stream, so a replayed
// graph resets it too.
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"
#include "../common/DeviceUtils.cuh"

namespace msamp::runtime::cuda {
namespace {

constexpr unsigned long long kNoBadIndex = ~0ull;

template <typename T>
__device__ inline bool outOfRange(T value, int64_t upper, int64_t ignoreIndex,
                                  int32_t hasIgnore) {
  const int64_t v = static_cast<int64_t>(value);
  return !(v >= 0 && v < upper) && !(hasIgnore && v == ignoreIndex);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    findBadIndexKernel(const T *ids, int64_t numel, int64_t upper,
                       int64_t ignoreIndex, int32_t hasIgnore,
                       unsigned long long *record) {
  // A grid-stride walk keeps the smallest bad index this thread sees; one
  // atomicMin per thread that saw one.
  unsigned long long found = kNoBadIndex;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < numel; i += stride)
    if (outOfRange(ids[i], upper, ignoreIndex, hasIgnore)) {
      found = static_cast<unsigned long long>(i);
      break; // later elements of this thread are larger
    }
  if (found != kNoBadIndex)
    atomicMin(record, found);
}

template <typename T>
__global__ void recordBadValueKernel(const T *ids, unsigned long long *record) {
  if (record[0] != kNoBadIndex)
    record[1] =
        static_cast<unsigned long long>(static_cast<int64_t>(ids[record[0]]));
}

template <typename T>
cudaError_t launch(const void *ids, int64_t numel, int64_t upper,
                   int64_t ignoreIndex, int32_t hasIgnore,
                   unsigned long long *record, cudaStream_t stream) {
  const T *typed = static_cast<const T *>(ids);
  if (numel > 0) {
    findBadIndexKernel<T><<<gridFor(numel), kThreads, 0, stream>>>(
        typed, numel, upper, ignoreIndex, hasIgnore, record);
    recordBadValueKernel<T><<<1, 1, 0, stream>>>(typed, record);
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t launchCheckIndex(const void *ids, int64_t numel, int32_t width,
                             int64_t upper, int64_t ignoreIndex,
                             int32_t hasIgnore, unsigned long long *record,
                             cudaStream_t stream) {
  if (width != 4 && width != 8)
    return cudaErrorInvalidValue;
  if (cudaError_t error =
          cudaMemsetAsync(record, 0xFF, 2 * sizeof(*record), stream))
    return error;
  return width == 8 ? launch<int64_t>(ids, numel, upper, ignoreIndex, hasIgnore,
                                      record, stream)
                    : launch<int32_t>(ids, numel, upper, ignoreIndex, hasIgnore,
                                      record, stream);
}

} // namespace msamp::runtime::cuda
