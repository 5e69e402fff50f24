//===- KernelHookTest.cpp - Kernels the ABI does not reach ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The plugin's test hooks (lib/Runtime/CUDA/TestHooks.h) run the fused
// cast + amax, cast + transpose, the NCCL fallback's rank-order FP8
// reduction and the fused delayed-scaling update; each is compared with the
// CPU backend or with the header-only reference it must equal.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "Collective.h"
#include "DType.h"
#include "TestHooks.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaKernelHooks : public CudaTest {};

TEST_F(CudaKernelHooks, FusedQuantizeAmaxMatchesCpu) {
  auto quantizeAmax = pluginHook<msamp_rt_cuda_test_quantize_amax_fn>(
      MSAMP_RT_CUDA_TEST_QUANTIZE_AMAX);
  ASSERT_NE(quantizeAmax, nullptr);
  const std::vector<float> values = interestingFloats(100000, 71);
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (bool withNaN : {false, true}) {
        std::vector<float> v = values;
        if (!withNaN)
          for (float &x : v)
            if (std::isnan(x))
              x = 1.0f;
        Raw in = highPrecisionBuffer(inType, v);
        Raw cpu(outType, in.shape), gpu(outType, in.shape);
        auto scale = msamp_rt_test::scalar(0.25f);
        auto cpuAmax = msamp_rt_test::scalar(0.0f);
        use("cpu");
        _mlir_ciface_msamp_rt_quantize(in, scale, cpu, inType, outType);
        _mlir_ciface_msamp_rt_amax(in, cpuAmax, inType);
        expectNoError();
        use("cuda");
        float gpuAmax = -1.0f;
        ASSERT_EQ(quantizeAmax(in.bytes.data(), inType, &scale[0],
                               gpu.bytes.data(), outType, &gpuAmax,
                               static_cast<int64_t>(in.numel())),
                  MSAMP_RT_OK)
            << msamp_rt_get_last_error_message();
        const std::string what = std::string(rt::dtypeName(inType)) + " -> " +
                                 rt::dtypeName(outType);
        expectSameValues(cpu, gpu, what);
        expectSameFloat(cpuAmax[0], gpuAmax, what + " amax");
      }
}

TEST_F(CudaKernelHooks, CastTransposeMatchesCpuQuantizeAndTranspose) {
  auto castTranspose = pluginHook<msamp_rt_cuda_test_cast_transpose_fn>(
      MSAMP_RT_CUDA_TEST_CAST_TRANSPOSE);
  ASSERT_NE(castTranspose, nullptr);
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {33, 70}, {128, 64}, {1000, 3}, {3, 1000}, {257, 129}};
  Rng rng(72);
  for (const auto &[rows, cols] : shapes)
    for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16})
      for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
        for (bool withOut : {true, false}) {
          std::vector<float> v(static_cast<size_t>(rows * cols));
          for (float &x : v)
            x = static_cast<float>(rng.uniform(-600.0, 600.0));
          Raw in = highPrecisionBuffer(inType, v);
          Raw cpu(outType, {rows * cols});
          auto scale = msamp_rt_test::scalar(0.5f);
          auto cpuAmax = msamp_rt_test::scalar(0.0f);
          use("cpu");
          _mlir_ciface_msamp_rt_quantize(in, scale, cpu, inType, outType);
          _mlir_ciface_msamp_rt_amax(in, cpuAmax, inType);
          expectNoError();
          use("cuda");
          Raw out(outType, {rows * cols}), outT(outType, {rows * cols});
          float amax = -1.0f;
          ASSERT_EQ(castTranspose(in.bytes.data(), inType, rows, cols,
                                  &scale[0],
                                  withOut ? out.bytes.data() : nullptr,
                                  outT.bytes.data(), outType, &amax),
                    MSAMP_RT_OK)
              << msamp_rt_get_last_error_message();
          const std::string what =
              std::to_string(rows) + "x" + std::to_string(cols) + " " +
              rt::dtypeName(inType) + " -> " + rt::dtypeName(outType);
          if (withOut)
            expectSameValues(cpu, out, what + " out");
          Raw cpuT(outType, {rows * cols});
          const size_t size = cpu.elementSize();
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c)
              std::memcpy(&cpuT.bytes[static_cast<size_t>(c * rows + r) * size],
                          &cpu.bytes[static_cast<size_t>(r * cols + c) * size],
                          size);
          expectSameValues(cpuT, outT, what + " transposed");
          expectSameFloat(cpuAmax[0], amax, what + " amax");
        }
}

TEST_F(CudaKernelHooks, RankOrderFP8ReductionMatchesCollectiveH) {
  auto reduce = pluginHook<msamp_rt_cuda_test_reduce_fp8_fn>(
      MSAMP_RT_CUDA_TEST_REDUCE_FP8);
  ASSERT_NE(reduce, nullptr);
  Rng rng(73);
  const int64_t n = 50001;
  for (int32_t dtype : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2})
    for (int world : {1, 2, 3, 4, 8})
      for (bool isMax : {false, true}) {
        std::vector<uint8_t> contrib(static_cast<size_t>(n * world));
        for (uint8_t &c : contrib)
          c = static_cast<uint8_t>(rng.next());
        std::vector<const uint8_t *> ranks(static_cast<size_t>(world));
        for (int r = 0; r < world; ++r)
          ranks[static_cast<size_t>(r)] = &contrib[static_cast<size_t>(r * n)];
        std::vector<uint8_t> expected(static_cast<size_t>(n)),
            got(static_cast<size_t>(n));
        rt::reduceFP8InRankOrder(ranks.data(), world, n, rt::toFormat(dtype),
                                 isMax ? rt::CollectiveOp::Max
                                       : rt::CollectiveOp::Sum,
                                 expected.data());
        ASSERT_EQ(
            reduce(contrib.data(), world, n, dtype, isMax ? 1 : 0, got.data()),
            MSAMP_RT_OK)
            << msamp_rt_get_last_error_message();
        ASSERT_EQ(expected, got) << rt::dtypeName(dtype) << " world " << world
                                 << (isMax ? " max" : " sum");
      }
}

TEST_F(CudaKernelHooks, DelayedScalingUpdateMatchesNumerics) {
  auto update = pluginHook<msamp_rt_cuda_test_delayed_scaling_fn>(
      MSAMP_RT_CUDA_TEST_DELAYED_SCALING);
  ASSERT_NE(update, nullptr);
  Rng rng(74);
  for (int64_t length : {1, 16, 1024})
    for (int32_t kind : {0, 1})
      for (int32_t algo : {0, 1}) {
        std::vector<float> history(static_cast<size_t>(length));
        for (float &x : history)
          x = static_cast<float>(rng.uniform(0.0, 500.0));
        std::vector<float> expected = history;
        const float amax = 300.0f;
        numerics::updateAmaxHistory(expected.data(), expected.data(),
                                    static_cast<int>(length), amax);
        const float expectedScale = numerics::computeScale(
            static_cast<numerics::ScaleKind>(kind),
            numerics::reduceAmaxHistory(expected.data(),
                                        static_cast<int>(length),
                                        static_cast<numerics::AmaxAlgo>(algo)),
            2.0f, 448.0f, 1);
        float scale = 2.0f, scaleInv = 0.0f;
        ASSERT_EQ(update(history.data(), length, &amax, &scale, &scaleInv, kind,
                         algo, MSAMP_RT_F8E4M3FN, 1),
                  MSAMP_RT_OK)
            << msamp_rt_get_last_error_message();
        EXPECT_EQ(history, expected);
        expectSameFloat(expectedScale, scale, "scale");
        expectSameFloat(numerics::detail::divRn(1.0f, expectedScale), scaleInv,
                        "scale_inv");
      }
}

} // namespace
