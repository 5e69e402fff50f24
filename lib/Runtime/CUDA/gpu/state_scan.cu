//===- state_scan.cu - Non-finite elements of a GPU step's state ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The session checks the state for NaN/Inf after every step (a finite loss
// can still overflow the update). For a step compiled with --target cuda
// the state is managed memory that the kernels keep on the device: reading
// it on the host migrated every page to the host and back each step (on an
// H200 most of a GPT-2-small step's 0.9 s). This kernel finds the first
// element whose bits hold every bit of a mask (the session's rule,
// ElementType.cpp nonFiniteBits) on the device: each thread's first hit in
// its grid-stride walk is its smallest, so one atomicMin gives the first.
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"
#include "../common/DeviceUtils.cuh"

namespace msamp::runtime::cuda {
namespace {

template <typename Bits>
__global__ void __launch_bounds__(kThreads)
    findAllOnesKernel(const Bits *__restrict__ data, int64_t count, Bits mask,
                      unsigned long long *first) {
  for (int64_t i = globalThread(); i < count; i += gridStride())
    if ((data[i] & mask) == mask) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;
    }
}

template <typename Bits>
cudaError_t launch(const void *data, int64_t count, uint64_t mask,
                   unsigned long long *first, cudaStream_t stream) {
  findAllOnesKernel<Bits><<<gridFor(count), kThreads, 0, stream>>>(
      static_cast<const Bits *>(data), count, static_cast<Bits>(mask), first);
  return cudaGetLastError();
}

} // namespace

cudaError_t launchFindAllOnes(const void *data, int64_t count, int32_t width,
                              uint64_t mask, unsigned long long *first,
                              cudaStream_t stream) {
  if (count <= 0)
    return cudaSuccess;
  switch (width) {
  case 1:
    return launch<uint8_t>(data, count, mask, first, stream);
  case 2:
    return launch<uint16_t>(data, count, mask, first, stream);
  case 4:
    return launch<uint32_t>(data, count, mask, first, stream);
  case 8:
    return launch<uint64_t>(data, count, mask, first, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

} // namespace msamp::runtime::cuda
