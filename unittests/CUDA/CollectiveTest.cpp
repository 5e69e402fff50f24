//===- CollectiveTest.cpp - all_reduce on one process: CUDA vs CPU --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Without MSAMP_WORLD_SIZE the CUDA backend runs under the local
// world-size-1 collective; the result must be the CPU's (FP8 bytes copied,
// the inverse scale divided by 1 for a mean, bf16/f16 rounded through f32).
// Multi-rank NCCL runs need several GPUs: the GPU kit's multi-rank check
// runs the test LM on 2 ranks against the CPU under MPI (docs/GPU.md); the
// rank-order FP8 fallback is checked in KernelHookTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaCollective : public CudaTest {};

TEST_F(CudaCollective, WorldOfOneMatchesCpu) {
  Rng rng(31);
  for (int32_t dtype : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16,
                        MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2})
    for (int32_t kind :
         {MSAMP_RT_REDUCE_SUM, MSAMP_RT_REDUCE_MAX, MSAMP_RT_REDUCE_MEAN})
      for (bool inPlace : {false, true}) {
        const bool fp8 = rt::isFP8(dtype);
        Raw in(dtype, {4099});
        for (size_t i = 0; i < in.bytes.size(); ++i)
          in.bytes[i] = static_cast<uint8_t>(rng.next());
        Raw outs[2] = {Raw(dtype, {4099}), Raw(dtype, {4099})};
        float scales[2];
        onBoth([&](bool cuda) {
          Raw input(in);
          auto scaleInv = msamp_rt_test::scalar(0.75f);
          auto outScaleInv = msamp_rt_test::scalar(-1.0f);
          _mlir_ciface_msamp_rt_all_reduce(
              input, fp8 ? scaleInv.ref.get() : nullptr,
              inPlace ? input.ref.get() : outs[cuda].ref.get(),
              fp8 ? outScaleInv.ref.get() : nullptr, dtype, kind, fp8 ? 1 : 0);
          if (inPlace)
            outs[cuda].bytes = input.bytes;
          scales[cuda] = outScaleInv[0];
        });
        const std::string what =
            std::string(rt::dtypeName(dtype)) + " kind " + std::to_string(kind);
        expectSameValues(outs[0], outs[1], what);
        if (fp8)
          expectSameFloat(scales[0], scales[1], what);
      }
}

} // namespace
