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
#include "TestHooks.h"

#include "gtest/gtest.h"

#include <memory>

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

TEST_F(CudaOptimizer, DeviceConstantsMatchCpuAtEveryKindOfStep) {
  // The kernels derive the bias corrections from the step on the device:
  // step 1, small and large steps (beta^step near 0), with and without
  // weight decay, AdamW, Adam (L2) and mode 1, O2 and f32 states.
  uint64_t seed = 900;
  for (int64_t step : {int64_t(1), int64_t(2), int64_t(10), int64_t(1000),
                       int64_t(123457), int64_t(10000019)})
    for (double wd : {0.0, 0.1})
      for (int variant = 0; variant < 3; ++variant)
        for (bool o2 : {true, false}) {
          const int32_t p = o2 ? MSAMP_RT_F16 : MSAMP_RT_F32;
          const int32_t g = o2 ? MSAMP_RT_F8E4M3FN : MSAMP_RT_F32;
          const int32_t m = o2 ? MSAMP_RT_F8E4M3FN : MSAMP_RT_F32;
          const int32_t v = o2 ? MSAMP_RT_F16 : MSAMP_RT_F32;
          AdamCall cpu(p, g, m, v, {5000}, seed);
          AdamCall gpu(p, g, m, v, {5000}, seed);
          ++seed;
          cpu.step[0] = gpu.step[0] = step;
          cpu.weightDecay = gpu.weightDecay = wd;
          cpu.decoupled = gpu.decoupled = variant != 1;
          cpu.mode1 = gpu.mode1 = variant == 2;
          cpu.lr[0] = gpu.lr[0] = 3e-4f;
          compareSteps(cpu, gpu, 1, /*gpuInPlace=*/variant == 1,
                       "step " + std::to_string(step) + " wd " +
                           std::to_string(wd) + " variant " +
                           std::to_string(variant) + (o2 ? " O2" : " f32"));
          if (::testing::Test::HasFailure())
            return;
        }
}

TEST_F(CudaOptimizer, StepBelowOneInDeviceMemoryMakesWeightsNaN) {
  // No host read: a step counter in device memory is the kernels' to check,
  // and they poison the weights rather than use a bias correction of 0.
  AdamCall call(MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, MSAMP_RT_F32, {300},
                65);
  DeviceBuffer step(sizeof(int64_t)), lr(sizeof(float));
  const int64_t zero = 0;
  step.upload(&zero);
  lr.upload(&call.lr[0]);
  MemRef stepRef(step.get(), {}), lrRef(lr.get(), {});
  use("cuda");
  _mlir_ciface_msamp_rt_adam_update(
      call.param.data, call.paramScale, call.grad.data, call.gradScaleInv,
      call.m.data, call.mScale, call.v.data, call.vScale, lrRef.get(),
      stepRef.get(), call.outParam, call.outParamScale, call.outM,
      call.outMScale, call.outV, call.outVScale, MSAMP_RT_F32, MSAMP_RT_F32,
      MSAMP_RT_F32, MSAMP_RT_F32, 0.9, 0.999, 1e-8, 0.0,
      MSAMP_RT_ADAM_DECOUPLED);
  expectNoError("device step 0");
  use("cpu");
  for (size_t i = 0; i < call.outParam.numel(); ++i)
    ASSERT_TRUE(std::isnan(call.outParam.getF32(i))) << "element " << i;
}

TEST_F(CudaOptimizer, MultiTensorAdamMatchesCpuSingleUpdates) {
  // msamp_rt_adam_update_multi on the device (one table, batches of
  // kAdamBatchTensors tensors per launch) against msamp_rt_adam_update per
  // tensor on the CPU: 30 tensors of odd sizes around the block and chunk
  // boundaries (an empty one among them), O2's two groups and f32 states,
  // step 1 and a large step, weight decay on and off, in place and not,
  // two chained steps.
  const int64_t sizes[] = {1,      3,     0,     255,   256,   257,  4097, 8191,
                           8192,   8193,  77777, 31,    5,     1000, 2,    9,
                           12345,  17,    64,    63,    65,    129,  777,  11,
                           100003, 65537, 8200,  16385, 24577, 7};
  uint64_t seed = 1000;
  for (int kind = 0; kind < 3; ++kind)
    for (int64_t firstStep : {int64_t(1), int64_t(1000003)})
      for (double wd : {0.0, 1e-2}) {
        const int32_t p = kind == 2   ? MSAMP_RT_F32
                          : kind == 1 ? MSAMP_RT_F16
                                      : MSAMP_RT_F32;
        const int32_t g = kind == 1 ? MSAMP_RT_F8E4M3FN : MSAMP_RT_F32;
        const int32_t m = kind == 2 ? MSAMP_RT_F32 : MSAMP_RT_F8E4M3FN;
        const int32_t v = kind == 2 ? MSAMP_RT_F32 : MSAMP_RT_F16;
        const bool inPlace = wd == 0.0;
        std::vector<std::unique_ptr<AdamCall>> cpu, gpu;
        for (int64_t n : sizes) {
          cpu.push_back(std::make_unique<AdamCall>(
              p, g, m, v, std::vector<int64_t>{n}, seed));
          gpu.push_back(std::make_unique<AdamCall>(
              p, g, m, v, std::vector<int64_t>{n}, seed));
          ++seed;
          for (AdamCall *call : {cpu.back().get(), gpu.back().get()}) {
            call->step[0] = firstStep;
            call->weightDecay = wd;
          }
        }
        for (int step = 0; step < 2; ++step) {
          use("cpu");
          for (auto &call : cpu)
            call->run(false);
          expectNoError("cpu");
          std::vector<int64_t> table;
          for (auto &call : gpu)
            call->appendRow(table, inPlace);
          msamp_rt_test::Tensor<int64_t> tableT(
              {static_cast<int64_t>(gpu.size()), MSAMP_RT_ADAM_TABLE_COLUMNS},
              table);
          const AdamCall &g0 = *gpu[0];
          use("cuda");
          _mlir_ciface_msamp_rt_adam_update_multi(
              tableT, gpu[0]->lr, gpu[0]->step, p, g, m, v, g0.beta1, g0.beta2,
              g0.eps, g0.weightDecay, MSAMP_RT_ADAM_DECOUPLED);
          expectNoError("cuda");
          use("cpu");
          for (size_t i = 0; i < cpu.size(); ++i) {
            AdamCall &c = *cpu[i], &d = *gpu[i];
            const std::string at = "kind " + std::to_string(kind) + " step " +
                                   std::to_string(c.step[0]) + " wd " +
                                   std::to_string(wd) + " tensor " +
                                   std::to_string(i) + " (" +
                                   std::to_string(sizes[i]) + ")";
            expectSameValues(c.outParam, inPlace ? d.param.data : d.outParam,
                             at + " param");
            expectSameValues(c.outM, inPlace ? d.m.data : d.outM, at + " m");
            expectSameValues(c.outV, inPlace ? d.v.data : d.outV, at + " v");
            if (p != MSAMP_RT_F32)
              expectSameFloat(c.outParamScale[0],
                              inPlace ? d.paramScale[0] : d.outParamScale[0],
                              at + " param scale");
            if (m != MSAMP_RT_F32)
              expectSameFloat(c.outMScale[0],
                              inPlace ? d.mScale[0] : d.outMScale[0],
                              at + " m scale");
            if (v != MSAMP_RT_F32)
              expectSameFloat(c.outVScale[0],
                              inPlace ? d.vScale[0] : d.outVScale[0],
                              at + " v scale");
            if (::testing::Test::HasFailure())
              return;
            c.advance();
            if (inPlace)
              d.step[0] += 1;
            else
              d.advance();
          }
        }
      }
}

TEST_F(CudaOptimizer, SgdMatchesCpu) {
  // lr and step in host memory, and in device memory as a compiled step
  // passes them: there the kernels derive the constants
  // (makeSgdConstants) without reading them back, bit for bit the CPU's,
  // at the first step (the buffer is not read) and later ones.
  for (bool deviceScalars : {false, true})
    for (int32_t pt : {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN})
      for (int32_t flags :
           {0, MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER,
            MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER | MSAMP_RT_SGD_NESTEROV})
        for (int64_t step : {int64_t(1), int64_t(2), int64_t(1000003)}) {
          const double momentum =
              flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER ? 0.9 : 0.0;
          Rng rng(static_cast<uint64_t>(pt * 10 + flags));
          const StateInit param = makeState(pt, {20001}, rng, -1, 1);
          const StateInit grad =
              makeState(MSAMP_RT_F8E4M3FN, {20001}, rng, -1, 1);
          const StateInit buf = makeState(MSAMP_RT_F32, {20001}, rng, -1, 1);
          Raw outs[2] = {Raw(pt, {20001}), Raw(pt, {20001})};
          Raw bufs[2] = {Raw(MSAMP_RT_F32, {20001}),
                         Raw(MSAMP_RT_F32, {20001})};
          float scales[2] = {0, 0};
          const float lrValue = 0.01f;
          DeviceBuffer deviceLr(sizeof(float)), deviceStep(sizeof(int64_t));
          deviceLr.upload(&lrValue);
          deviceStep.upload(&step);
          onBoth([&](bool cuda) {
            Raw p(param.data), g(grad.data), b(buf.data);
            auto ps = msamp_rt_test::scalar(param.scale);
            auto gs = msamp_rt_test::scalar(1.0f / grad.scale);
            auto ops = msamp_rt_test::scalar(0.0f);
            auto hostLr = msamp_rt_test::scalar(lrValue);
            auto hostStep = msamp_rt_test::scalar<int64_t>(step);
            MemRef lrRef(deviceLr.get(), {}), stepRef(deviceStep.get(), {});
            msamp_rt_unranked_memref *lr = hostLr, *st = hostStep;
            if (cuda && deviceScalars) {
              lr = lrRef.get();
              st = stepRef.get();
            }
            _mlir_ciface_msamp_rt_sgd_update(
                p, ps, g, gs, b, lr, st, outs[cuda], ops, bufs[cuda], pt,
                MSAMP_RT_F8E4M3FN, momentum, 1e-2, flags);
            scales[cuda] = ops[0];
          });
          const std::string what = std::string(rt::dtypeName(pt)) + " flags " +
                                   std::to_string(flags) +
                                   (deviceScalars ? " device" : " host") +
                                   " step " + std::to_string(step);
          expectSameValues(outs[0], outs[1], what);
          if (flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER)
            expectSameValues(bufs[0], bufs[1], what + " buffer");
          if (pt != MSAMP_RT_F32)
            expectSameFloat(scales[0], scales[1], what + " scale");
          if (::testing::Test::HasFailure())
            return;
        }
}

TEST_F(CudaOptimizer, SgdStepBelowOneInDeviceMemoryMakesWeightsNaN) {
  // As Adam's: no host read, so the kernels poison the weights instead.
  Rng rng(66);
  const StateInit param = makeState(MSAMP_RT_F32, {300}, rng, -1, 1);
  const StateInit grad = makeState(MSAMP_RT_F32, {300}, rng, -1, 1);
  Raw p(param.data), g(grad.data), b(MSAMP_RT_F32, {300}),
      out(MSAMP_RT_F32, {300}), outBuf(MSAMP_RT_F32, {300});
  DeviceBuffer step(sizeof(int64_t)), lr(sizeof(float));
  const int64_t zero = 0;
  const float lrValue = 0.5f;
  step.upload(&zero);
  lr.upload(&lrValue);
  MemRef stepRef(step.get(), {}), lrRef(lr.get(), {});
  auto ps = msamp_rt_test::scalar(1.0f);
  auto gs = msamp_rt_test::scalar(1.0f);
  auto ops = msamp_rt_test::scalar(0.0f);
  use("cuda");
  _mlir_ciface_msamp_rt_sgd_update(p, ps, g, gs, b, lrRef.get(), stepRef.get(),
                                   out, ops, outBuf, MSAMP_RT_F32, MSAMP_RT_F32,
                                   0.0, 0.0, 0);
  expectNoError("device step 0");
  use("cpu");
  for (size_t i = 0; i < out.numel(); ++i)
    ASSERT_TRUE(std::isnan(out.getF32(i))) << "element " << i;
}

TEST_F(CudaOptimizer, MultiTensorAdamIsTheSameAtEveryChunkSize) {
  // The chunk size of msamp_rt_adam_update_multi's launches follows the
  // call (optimizer/AdamChunks.h); on this device a call picks one or two
  // of them. Forced through the test hook, every valid size must give the
  // CPU's values bit for bit: one element per thread (256), partial tiles
  // (768, 1792), the tile (2048, the packed path) and several tiles, with
  // tensors spanning many chunks, ending mid-chunk, and empty. O2's states,
  // so the amax pass's per-tensor maxima cross chunks and blocks.
  auto setChunk = pluginHook<msamp_rt_cuda_test_set_adam_chunk_fn>(
      MSAMP_RT_CUDA_TEST_SET_ADAM_CHUNK);
  ASSERT_NE(setChunk, nullptr);
  EXPECT_EQ(setChunk(300), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(setChunk(2304), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();

  const int64_t sizes[] = {1,    255,   256,   257,    0,     2047, 2048,
                           2049, 8191,  8193,  100003, 31,    4097, 65537,
                           777,  24577, 16385, 3,      12345, 7};
  const int32_t p = MSAMP_RT_F16, g = MSAMP_RT_F8E4M3FN, m = MSAMP_RT_F8E4M3FN,
                v = MSAMP_RT_F16;
  std::vector<std::unique_ptr<AdamCall>> cpu;
  uint64_t seed = 5000;
  for (int64_t n : sizes) {
    cpu.push_back(
        std::make_unique<AdamCall>(p, g, m, v, std::vector<int64_t>{n}, seed));
    cpu.back()->weightDecay = 1e-2;
    ++seed;
  }
  use("cpu");
  for (auto &call : cpu)
    call->run(false);
  expectNoError("cpu");

  for (int64_t chunk :
       {int64_t(256), int64_t(768), int64_t(1792), int64_t(2048), int64_t(4096),
        int64_t(8192), int64_t(0)}) {
    ASSERT_EQ(setChunk(chunk), MSAMP_RT_OK) << chunk;
    std::vector<std::unique_ptr<AdamCall>> gpu;
    std::vector<int64_t> table;
    seed = 5000;
    for (int64_t n : sizes) {
      gpu.push_back(std::make_unique<AdamCall>(p, g, m, v,
                                               std::vector<int64_t>{n}, seed));
      gpu.back()->weightDecay = 1e-2;
      gpu.back()->appendRow(table, /*inPlace=*/false);
      ++seed;
    }
    msamp_rt_test::Tensor<int64_t> tableT(
        {static_cast<int64_t>(gpu.size()), MSAMP_RT_ADAM_TABLE_COLUMNS}, table);
    AdamCall &g0 = *gpu[0];
    use("cuda");
    _mlir_ciface_msamp_rt_adam_update_multi(
        tableT, g0.lr, g0.step, p, g, m, v, g0.beta1, g0.beta2, g0.eps,
        g0.weightDecay, MSAMP_RT_ADAM_DECOUPLED);
    expectNoError("cuda, chunk " + std::to_string(chunk));
    use("cpu");
    for (size_t i = 0; i < cpu.size(); ++i) {
      AdamCall &c = *cpu[i], &d = *gpu[i];
      const std::string at = "chunk " + std::to_string(chunk) + " tensor " +
                             std::to_string(i) + " (" +
                             std::to_string(sizes[i]) + ")";
      expectSameValues(c.outParam, d.outParam, at + " param");
      expectSameValues(c.outM, d.outM, at + " m");
      expectSameValues(c.outV, d.outV, at + " v");
      expectSameFloat(c.outParamScale[0], d.outParamScale[0],
                      at + " param scale");
      expectSameFloat(c.outMScale[0], d.outMScale[0], at + " m scale");
      expectSameFloat(c.outVScale[0], d.outVScale[0], at + " v scale");
      if (::testing::Test::HasFailure()) {
        setChunk(0);
        return;
      }
    }
  }
  EXPECT_EQ(setChunk(0), MSAMP_RT_OK);
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
