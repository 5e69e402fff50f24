//===- state_scan.cu - Non-finite elements of a GPU step's state ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The session checks the state for NaN/Inf after every step (a finite loss
// can still overflow the update). For a step compiled with --target cuda
// the state is memory that the kernels keep on the device: reading it on
// the host migrated every page to the host and back each step (on an H200
// most of a GPT-2-small step's 0.9 s). This kernel finds, per buffer, the
// first element whose bits hold every bit of a mask (the session's rule,
// ElementType.cpp nonFiniteBits) on the device.
//
// One launch scans every buffer of a call (a GPT-2-small state is ~835
// buffers, one launch each before): the buffers' table lives in device
// scratch (too long for kernel parameters), each buffer is cut into chunks
// of kScanChunkBytes, and a grid that the chip holds at once takes the
// chunks blockIdx.x, + gridDim.x, ... (a binary search finds a chunk's
// buffer). A thread reads kScanVectors independent 16-byte vectors per
// step when the buffer is 16-byte aligned (scalar, coalesced accesses
// otherwise and for the tail), keeps the smallest matching index it saw,
// and one atomicMin per thread that saw one gives the buffer's first.
//
//===----------------------------------------------------------------------===//

#include "../Kernels.h"
#include "../common/DeviceUtils.cuh"

#include <cstring>
#include <type_traits>
#include <vector>

namespace msamp::runtime::cuda {
namespace {

/// Bytes per chunk: a few block-wide steps of kScanVectors vectors.
constexpr int64_t kScanVectors = 4;
constexpr int64_t kScanChunkBytes = kThreads * kScanVectors * 16 * 4;

/// One non-empty buffer of the device table.
struct ScanEntry {
  const void *data;
  int64_t count;
  uint64_t mask;
  int64_t firstChunk; ///< the buffer owns [firstChunk, next's firstChunk)
  int64_t result;     ///< its slot in `first`
  int32_t width;
  int32_t pad;
};

constexpr unsigned long long kNone = ~0ull;

/// A read-only global load (the state does not change during the scan; a
/// pointer from the table would otherwise be a generic load).
template <typename Bits>
__device__ inline Bits loadBits(const Bits *p) {
  using Load = std::conditional_t<
      sizeof(Bits) == 1, unsigned char,
      std::conditional_t<sizeof(Bits) == 2, unsigned short,
                         std::conditional_t<sizeof(Bits) == 4, unsigned int,
                                            unsigned long long>>>;
  return static_cast<Bits>(__ldg(reinterpret_cast<const Load *>(p)));
}

template <typename Bits>
__device__ inline void check(Bits bits, Bits mask, int64_t i,
                             unsigned long long &found) {
  if ((bits & mask) == mask && static_cast<unsigned long long>(i) < found)
    found = static_cast<unsigned long long>(i);
}

/// Elements [begin, end) of `e`: the smallest matching index this thread
/// sees, or kNone.
template <typename Bits>
__device__ unsigned long long scanChunk(const ScanEntry &e, int64_t begin,
                                        int64_t end) {
  const Bits *data = static_cast<const Bits *>(e.data);
  const Bits mask = static_cast<Bits>(e.mask);
  constexpr int64_t kPer = 16 / sizeof(Bits);
  unsigned long long found = kNone;
  int64_t scalarBegin = begin;
  if (reinterpret_cast<uintptr_t>(data) % 16 == 0) {
    // begin is a multiple of the chunk, so of kPer.
    const uint4 *vectors = reinterpret_cast<const uint4 *>(data);
    const int64_t vBegin = begin / kPer, vEnd = end / kPer;
    for (int64_t v0 = vBegin + threadIdx.x; v0 < vEnd;
         v0 += kThreads * kScanVectors) {
      uint4 raw[kScanVectors];
#pragma unroll
      for (int u = 0; u < kScanVectors; ++u) {
        const int64_t v = v0 + u * kThreads;
        raw[u] = v < vEnd ? __ldg(vectors + v) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kScanVectors; ++u) {
        const int64_t v = v0 + u * kThreads;
        if (v >= vEnd)
          continue;
        Bits elems[kPer];
        memcpy(elems, &raw[u], sizeof(elems));
#pragma unroll
        for (int q = 0; q < kPer; ++q)
          check(elems[q], mask, v * kPer + q, found);
      }
    }
    scalarBegin = vEnd * kPer;
  }
  for (int64_t i0 = scalarBegin + threadIdx.x; i0 < end;
       i0 += kThreads * kScanVectors) {
    Bits bits[kScanVectors];
#pragma unroll
    for (int u = 0; u < kScanVectors; ++u) {
      const int64_t i = i0 + u * kThreads;
      bits[u] = i < end ? loadBits(data + i) : Bits(0);
    }
#pragma unroll
    for (int u = 0; u < kScanVectors; ++u) {
      const int64_t i = i0 + u * kThreads;
      if (i < end)
        check(bits[u], mask, i, found);
    }
  }
  return found;
}

/// The entry owning chunk c: the last one whose firstChunk <= c (every
/// entry owns at least one chunk).
__device__ int entryOfChunk(const ScanEntry *table, int n, int64_t c) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].firstChunk <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

__global__ void __launch_bounds__(kThreads)
    findAllOnesKernel(const ScanEntry *table, int n, int64_t chunks,
                      unsigned long long *first) {
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const ScanEntry e = table[entryOfChunk(table, n, c)];
    const int64_t per = kScanChunkBytes / e.width;
    const int64_t begin = (c - e.firstChunk) * per;
    const int64_t end = begin + per < e.count ? begin + per : e.count;
    unsigned long long found = kNone;
    switch (e.width) {
    case 1:
      found = scanChunk<uint8_t>(e, begin, end);
      break;
    case 2:
      found = scanChunk<uint16_t>(e, begin, end);
      break;
    case 4:
      found = scanChunk<uint32_t>(e, begin, end);
      break;
    default:
      found = scanChunk<uint64_t>(e, begin, end);
      break;
    }
    if (found != kNone)
      atomicMin(first + e.result, found);
  }
}

} // namespace

size_t findAllOnesScratchBytes(int64_t n) {
  return static_cast<size_t>(n < 0 ? 0 : n) * sizeof(ScanEntry);
}

cudaError_t launchFindAllOnes(const ScanBuffer *buffers, int64_t n,
                              void *scratch, unsigned long long *first,
                              cudaStream_t stream, int64_t *bad) {
  std::vector<ScanEntry> table;
  table.reserve(static_cast<size_t>(n));
  int64_t chunks = 0;
  for (int64_t k = 0; k < n; ++k) {
    const ScanBuffer &b = buffers[k];
    if (b.width != 1 && b.width != 2 && b.width != 4 && b.width != 8) {
      *bad = k;
      return cudaErrorInvalidValue;
    }
    if (b.count <= 0)
      continue;
    const int64_t per = kScanChunkBytes / b.width;
    table.push_back(ScanEntry{b.data, b.count, b.mask, chunks, k, b.width, 0});
    chunks += (b.count + per - 1) / per;
  }
  if (table.empty())
    return cudaSuccess;
  if (table.size() > static_cast<size_t>(INT32_MAX))
    return cudaErrorInvalidValue;
  // Pageable host memory: the copy has taken the bytes when it returns.
  const cudaError_t error =
      cudaMemcpyAsync(scratch, table.data(), table.size() * sizeof(ScanEntry),
                      cudaMemcpyHostToDevice, stream);
  if (error != cudaSuccess)
    return error;
  findAllOnesKernel<<<residentGrid<findAllOnesKernel>(chunks), kThreads, 0,
                      stream>>>(static_cast<const ScanEntry *>(scratch),
                                static_cast<int>(table.size()), chunks, first);
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
