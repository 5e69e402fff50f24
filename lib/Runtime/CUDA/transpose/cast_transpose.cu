//===- cast_transpose.cu - Fused cast + transpose, packing ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// cuBLASLt's FP8 GEMMs on sm_89/sm_90 take only the "TN" layout: in row-major
// terms both operands must have the reduction dimension K innermost
// (docs/Numerics.md 3.2). Two kernels produce that layout:
//
//   * castTranspose quantizes a high-precision matrix once and writes it in
//     both layouts (MS-AMP's fp8_fused_cast_transpose for dY, which feeds
//     dgrad as is and wgrad transposed), optionally with the input's amax;
//     msamp_rt_quantize_jit runs it for its transposed layout;
//   * packMatrix copies an already-quantized operand into a TN-ready buffer,
//     transposing it if its K is outermost and zero-padding every dimension
//     to a multiple of 16 (FP8 byte 0x00 is +0, so padding adds nothing to
//     any dot product). This is the GEMM's canonicalization
//     (Transformer Engine's CanonicalizeGemmInput plus MS-AMP's padding).
//
// Both move 32x32 tiles through shared memory so that reads and writes are
// coalesced in either orientation; the +1 column avoids bank conflicts.
//
//===----------------------------------------------------------------------===//

#include "../common/DeviceUtils.cuh"
#include "../common/ElementAccess.h"

#include <algorithm>

namespace msamp::runtime::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8; // blockDim = (32, 8): 4 rows per thread

/// Tiles are walked with grid-stride loops in y and z, whose grid
/// dimensions are limited to 65535.
constexpr int64_t kMaxGridYZ = 65535;

unsigned tilesFor(int64_t extent) {
  return static_cast<unsigned>((extent + kTile - 1) / kTile);
}

template <typename Code, int32_t InT, int32_t OutT>
__global__ void __launch_bounds__(kTile *kTileRows)
    castTransposeKernel(const void *__restrict__ in, int64_t rows, int64_t cols,
                        const float *__restrict__ scale, Code *__restrict__ out,
                        Code *__restrict__ outT, unsigned *amaxBits,
                        const uint8_t *onlyIf) {
  // The warm-up recast (quantize.cu): the whole block leaves together.
  if (onlyIf && !(*onlyIf & 1))
    return;
  __shared__ Code tile[kTile][kTile + 1];
  const float s = *scale;
  const int tx = threadIdx.x, ty = threadIdx.y;
  unsigned largest = 0;
  const int64_t rowTiles = (rows + kTile - 1) / kTile;
  for (int64_t rt = blockIdx.y; rt < rowTiles; rt += gridDim.y) {
    const int64_t r0 = rt * kTile,
                  c0 = static_cast<int64_t>(blockIdx.x) * kTile;
    // Not unrolled: four inlined encodes at once cost sm_89 a spill.
#pragma unroll 1
    for (int k = 0; k < kTile; k += kTileRows) {
      const int64_t r = r0 + ty + k, c = c0 + tx;
      if (r < rows && c < cols) {
        const float x = loadElement(in, InT, r * cols + c, 1.0f);
        const unsigned mag = magnitudeBits(x);
        largest = mag > largest ? mag : largest;
        const Code code =
            static_cast<Code>(numerics::quantize(formatOf(OutT), x, s));
        if (out)
          out[r * cols + c] = code;
        tile[ty + k][tx] = code;
      }
    }
    __syncthreads();
    for (int k = 0; k < kTile; k += kTileRows) {
      const int64_t tr = c0 + ty + k, tc = r0 + tx; // outT is [cols, rows]
      if (tr < cols && tc < rows)
        outT[tr * rows + tc] = tile[tx][ty + k];
    }
    __syncthreads();
  }
  // blockMaxAtomic wants a 1-D block of kThreads; this block has the same
  // number of threads, numbered row-major.
  if (amaxBits) {
    __shared__ unsigned warpMax[kTile * kTileRows / 32];
    const int flat = ty * kTile + tx;
    const unsigned v = __reduce_max_sync(0xFFFFFFFFu, largest);
    if ((flat & 31) == 0)
      warpMax[flat >> 5] = v;
    __syncthreads();
    if (flat < 32) {
      unsigned w = flat < kTile * kTileRows / 32 ? warpMax[flat] : 0u;
      w = __reduce_max_sync(0xFFFFFFFFu, w);
      if (flat == 0 && w != 0u)
        atomicMax(amaxBits, w);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kTile *kTileRows)
    packKernel(const T *__restrict__ src, int64_t batch, int64_t srcRows,
               int64_t srcCols, bool transpose, T *__restrict__ dst,
               int64_t dstRows, int64_t dstCols) {
  __shared__ T tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t rowTiles = (dstRows + kTile - 1) / kTile;
  const int64_t srcSize = srcRows * srcCols, dstSize = dstRows * dstCols;
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T *s = src + b * srcSize;
    T *d = dst + b * dstSize;
    for (int64_t rt = blockIdx.y; rt < rowTiles; rt += gridDim.y) {
      const int64_t i0 = rt * kTile;
      const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kTile;
      if (!transpose) {
        for (int k = 0; k < kTile; k += kTileRows) {
          const int64_t i = i0 + ty + k, j = j0 + tx;
          if (i < dstRows && j < dstCols)
            d[i * dstCols + j] =
                (i < srcRows && j < srcCols) ? s[i * srcCols + j] : T(0);
        }
        continue;
      }
      // dst[i][j] = src[j][i]: read src rows j0.. coalesced along i.
      for (int k = 0; k < kTile; k += kTileRows) {
        const int64_t sr = j0 + ty + k, sc = i0 + tx;
        tile[ty + k][tx] =
            (sr < srcRows && sc < srcCols) ? s[sr * srcCols + sc] : T(0);
      }
      __syncthreads();
      for (int k = 0; k < kTile; k += kTileRows) {
        const int64_t i = i0 + ty + k, j = j0 + tx;
        if (i < dstRows && j < dstCols)
          d[i * dstCols + j] = tile[tx][ty + k];
      }
      __syncthreads();
    }
  }
}

template <typename Code, int32_t InT, int32_t OutT>
void castTransposeTyped(const void *in, int64_t rows, int64_t cols,
                        const float *scale, void *out, void *outT,
                        unsigned *amaxBits, cudaStream_t stream,
                        const uint8_t *onlyIf) {
  const dim3 block(kTile, kTileRows);
  const dim3 grid(tilesFor(cols), static_cast<unsigned>(std::min<int64_t>(
                                      (rows + kTile - 1) / kTile, kMaxGridYZ)));
  castTransposeKernel<Code, InT, OutT><<<grid, block, 0, stream>>>(
      in, rows, cols, scale, static_cast<Code *>(out),
      static_cast<Code *>(outT), amaxBits, onlyIf);
}

template <int32_t InT>
cudaError_t castTransposeOut(const void *in, int64_t rows, int64_t cols,
                             const float *scale, void *out, void *outT,
                             int32_t outType, unsigned *amaxBits,
                             cudaStream_t stream, const uint8_t *onlyIf) {
  switch (outType) {
  case MSAMP_RT_F8E4M3FN:
    castTransposeTyped<uint8_t, InT, MSAMP_RT_F8E4M3FN>(
        in, rows, cols, scale, out, outT, amaxBits, stream, onlyIf);
    break;
  case MSAMP_RT_F8E5M2:
    castTransposeTyped<uint8_t, InT, MSAMP_RT_F8E5M2>(
        in, rows, cols, scale, out, outT, amaxBits, stream, onlyIf);
    break;
  case MSAMP_RT_F16:
    castTransposeTyped<uint16_t, InT, MSAMP_RT_F16>(
        in, rows, cols, scale, out, outT, amaxBits, stream, onlyIf);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
void packTyped(const void *src, int64_t batch, int64_t srcRows, int64_t srcCols,
               bool transpose, void *dst, int64_t dstRows, int64_t dstCols,
               cudaStream_t stream) {
  const dim3 block(kTile, kTileRows);
  const dim3 grid(tilesFor(dstCols),
                  static_cast<unsigned>(std::min<int64_t>(
                      (dstRows + kTile - 1) / kTile, kMaxGridYZ)),
                  static_cast<unsigned>(std::min<int64_t>(batch, kMaxGridYZ)));
  packKernel<T><<<grid, block, 0, stream>>>(
      static_cast<const T *>(src), batch, srcRows, srcCols, transpose,
      static_cast<T *>(dst), dstRows, dstCols);
}

} // namespace

cudaError_t launchCastTranspose(const void *in, int32_t inType, int64_t rows,
                                int64_t cols, const float *scale, void *out,
                                void *outT, int32_t outType, unsigned *amaxBits,
                                cudaStream_t stream, const uint8_t *onlyIf) {
  if (rows <= 0 || cols <= 0)
    return cudaSuccess;
  switch (inType) {
  case MSAMP_RT_F32:
    return castTransposeOut<MSAMP_RT_F32>(in, rows, cols, scale, out, outT,
                                          outType, amaxBits, stream, onlyIf);
  case MSAMP_RT_BF16:
    return castTransposeOut<MSAMP_RT_BF16>(in, rows, cols, scale, out, outT,
                                           outType, amaxBits, stream, onlyIf);
  case MSAMP_RT_F16:
    return castTransposeOut<MSAMP_RT_F16>(in, rows, cols, scale, out, outT,
                                          outType, amaxBits, stream, onlyIf);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t launchPackMatrix(const void *src, int elemBytes, int64_t batch,
                             int64_t srcRows, int64_t srcCols, bool transpose,
                             void *dst, int64_t dstRows, int64_t dstCols,
                             cudaStream_t stream) {
  if (batch <= 0 || dstRows <= 0 || dstCols <= 0)
    return cudaSuccess;
  switch (elemBytes) {
  case 1:
    packTyped<uint8_t>(src, batch, srcRows, srcCols, transpose, dst, dstRows,
                       dstCols, stream);
    break;
  case 2:
    packTyped<uint16_t>(src, batch, srcRows, srcCols, transpose, dst, dstRows,
                        dstCols, stream);
    break;
  case 4:
    packTyped<uint32_t>(src, batch, srcRows, srcCols, transpose, dst, dstRows,
                        dstCols, stream);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace msamp::runtime::cuda
