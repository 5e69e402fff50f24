//===- OptimizerTest.cpp - Adam and SGD steps: CUDA against the CPU -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Whole optimizer steps through the ABI on both backends, bit for bit: the
// device kernels run the CPU's operations in the CPU's order (the host
// tests pin that part), so any difference is a kernel bug. Includes MS-AMP's
// O2 state (FP16 weight, FP8 gradient, FP8 m, FP16 v) over several chained
// steps, in-place updates, and every state-type combination.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaOptimizer : public CudaTest {
protected:
  /// Runs `steps` chained steps of `cpu` on "cpu" and `gpu` on "cuda"
  /// (optionally in place on the GPU) and compares after each.
  void compareSteps(AdamCall &cpu, AdamCall &gpu, int steps, bool gpuInPlace,
                    const std::string &what) {
    for (int step = 0; step < steps; ++step) {
      use("cpu");
      cpu.run(false);
      expectNoError(what + " cpu");
      use("cuda");
      gpu.run(gpuInPlace);
      expectNoError(what + " cuda");
      use("cpu");
      const std::string at = what + " step " + std::to_string(step + 1);
      const Raw &gpuParam = gpuInPlace ? gpu.param.data : gpu.outParam;
      const Raw &gpuM = gpuInPlace ? gpu.m.data : gpu.outM;
      const Raw &gpuV = gpuInPlace ? gpu.v.data : gpu.outV;
      expectSameValues(cpu.outParam, gpuParam, at + " param");
      expectSameValues(cpu.outM, gpuM, at + " m");
      expectSameValues(cpu.outV, gpuV, at + " v");
      if (cpu.paramType != MSAMP_RT_F32)
        expectSameFloat(cpu.outParamScale[0],
                        gpuInPlace ? gpu.paramScale[0] : gpu.outParamScale[0],
                        at + " param scale");
      if (cpu.mType != MSAMP_RT_F32)
        expectSameFloat(cpu.outMScale[0],
                        gpuInPlace ? gpu.mScale[0] : gpu.outMScale[0],
                        at + " m scale");
      if (cpu.vType != MSAMP_RT_F32)
        expectSameFloat(cpu.outVScale[0],
                        gpuInPlace ? gpu.vScale[0] : gpu.outVScale[0],
                        at + " v scale");
      if (::testing::Test::HasFailure())
        return;
      cpu.advance();
      if (gpuInPlace)
        gpu.step[0] += 1;
      else
        gpu.advance();
    }
  }
};

TEST_F(CudaOptimizer, LowBitAdamWStepsMatchCpuBitForBit) {
  // MS-AMP O2: FP16 weight, E4M3 gradient, E4M3 m, FP16 v; 77000 elements
  // (many blocks), four chained steps, each re-scaling every state.
  AdamCall cpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {1000, 77}, 61);
  AdamCall gpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {1000, 77}, 61);
  compareSteps(cpu, gpu, 4, /*gpuInPlace=*/false, "O2 AdamW");
}

TEST_F(CudaOptimizer, InPlaceLowBitAdamMatchesCpu) {
  AdamCall cpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {4097}, 62);
  AdamCall gpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {4097}, 62);
  cpu.decoupled = gpu.decoupled = false; // Adam with L2
  compareSteps(cpu, gpu, 3, /*gpuInPlace=*/true, "O2 Adam in place");
}

TEST_F(CudaOptimizer, LowBitAdamWMode1StepsMatchCpuBitForBit) {
  // ONNX Runtime's AdamW mode 1 (Hugging Face order) with O2's states.
  AdamCall cpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {1000, 77}, 64);
  AdamCall gpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {1000, 77}, 64);
  cpu.mode1 = gpu.mode1 = true;
  compareSteps(cpu, gpu, 4, /*gpuInPlace=*/false, "O2 AdamW mode 1");
}

TEST_F(CudaOptimizer, F32AdamMatchesCpu) {
  AdamCall cpu(MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, {300001},
               63);
  AdamCall gpu(MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, {300001},
               63);
  compareSteps(cpu, gpu, 2, false, "f32 AdamW");
}

TEST_F(CudaOptimizer, EveryStateTypeMatchesCpu) {
  uint64_t seed = 700;
  for (int32_t pt : {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN})
    for (int32_t gt :
         {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2})
      for (int32_t mt : {MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16})
        for (int32_t vt : {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E5M2}) {
          AdamCall cpu(pt, gt, mt, vt, {3, 100}, seed);
          AdamCall gpu(pt, gt, mt, vt, {3, 100}, seed);
          ++seed;
          compareSteps(cpu, gpu, 1, false,
                       std::string(rt::dtypeName(pt)) + "/" +
                           rt::dtypeName(gt) + "/" + rt::dtypeName(mt) + "/" +
                           rt::dtypeName(vt));
        }
}

TEST_F(CudaOptimizer, SgdMatchesCpu) {
  for (int32_t pt : {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN})
    for (int32_t flags :
         {0, MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER,
          MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER | MSAMP_RT_SGD_NESTEROV})
      for (int64_t step : {1, 2}) {
        const double momentum =
            flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER ? 0.9 : 0.0;
        Rng rng(static_cast<uint64_t>(pt * 10 + flags));
        const StateInit param = makeState(pt, {20001}, rng, -1, 1);
        const StateInit grad =
            makeState(MSAMP_RT_F8E4M3FN, {20001}, rng, -1, 1);
        const StateInit buf = makeState(MSAMP_RT_F32, {20001}, rng, -1, 1);
        Raw outs[2] = {Raw(pt, {20001}), Raw(pt, {20001})};
        Raw bufs[2] = {Raw(MSAMP_RT_F32, {20001}), Raw(MSAMP_RT_F32, {20001})};
        float scales[2] = {0, 0};
        onBoth([&](bool cuda) {
          Raw p(param.data), g(grad.data), b(buf.data);
          auto ps = msamp_rt_test::scalar(param.scale);
          auto gs = msamp_rt_test::scalar(1.0f / grad.scale);
          auto ops = msamp_rt_test::scalar(0.0f);
          auto lr = msamp_rt_test::scalar(0.01f);
          auto st = msamp_rt_test::scalar<int64_t>(step);
          _mlir_ciface_msamp_rt_sgd_update(
              p, ps, g, gs, b, lr, st, outs[cuda], ops, bufs[cuda], pt,
              MSAMP_RT_F8E4M3FN, momentum, 1e-2, flags);
          scales[cuda] = ops[0];
        });
        const std::string what = std::string(rt::dtypeName(pt)) + " flags " +
                                 std::to_string(flags) + " step " +
                                 std::to_string(step);
        expectSameValues(outs[0], outs[1], what);
        if (flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER)
          expectSameValues(bufs[0], bufs[1], what + " buffer");
        if (pt != MSAMP_RT_F32)
          expectSameFloat(scales[0], scales[1], what + " scale");
      }
}

TEST_F(CudaOptimizer, StepBelowOneIsRejectedLikeTheCpu) {
  AdamCall call(MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, {8},
                64);
  call.step[0] = 0;
  use("cuda");
  call.run(false);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(msamp_rt_get_last_error_message(),
               "msamp_rt_adam_update: step is 0; the first update is step 1");
  msamp_rt_clear_error();
}

} // namespace
