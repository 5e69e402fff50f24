//===- DevicePointerTest.cpp - Device memory is used in place -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend's memory policy (RuntimeABI.md, CUDA backend): device
// pointers from a CUDA-aware caller are used in place, host pointers are
// staged. These tests pass cudaMalloc'd buffers (tensors and scalars, lr and
// step included) and compare with the CPU backend on host copies.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;

namespace {

class CudaDevicePointers : public CudaTest {};

TEST_F(CudaDevicePointers, QuantizeReadsAndWritesDeviceMemory) {
  const std::vector<float> values = interestingFloats(5000, 81);
  Raw in = highPrecisionBuffer(MSAMP_RT_F32, values);
  Raw cpu(MSAMP_RT_F8E4M3FN, in.shape), gpu(MSAMP_RT_F8E4M3FN, in.shape);
  auto scale = msamp_rt_test::scalar(2.0f);
  use("cpu");
  _mlir_ciface_msamp_rt_quantize(in, scale, cpu, MSAMP_RT_F32,
                                 MSAMP_RT_F8E4M3FN);
  expectNoError();

  DeviceBuffer dIn(in.bytes.size()), dOut(gpu.bytes.size()), dScale(4);
  dIn.upload(in.bytes.data());
  dScale.upload(&scale[0]);
  MemRef inRef(dIn.get(), in.shape), outRef(dOut.get(), in.shape),
      scaleRef(dScale.get(), {});
  use("cuda");
  _mlir_ciface_msamp_rt_quantize(inRef.get(), scaleRef.get(), outRef.get(),
                                 MSAMP_RT_F32, MSAMP_RT_F8E4M3FN);
  expectNoError();
  dOut.download(gpu.bytes.data());
  expectSameValues(cpu, gpu, "device-pointer quantize");
}

TEST_F(CudaDevicePointers, AlignedFpropGemmInDeviceMemory) {
  // y = x w^T with 16-multiple shapes: the zero-copy TN path.
  const int64_t m = 64, n = 32, k = 128;
  Rng rng(82);
  Raw x(MSAMP_RT_F8E4M3FN, {m, k}), w(MSAMP_RT_F8E4M3FN, {n, k});
  for (uint8_t &b : x.bytes)
    b = static_cast<uint8_t>(numerics::encodeE4M3(
        static_cast<float>(static_cast<int>(rng.next() % 9) - 4)));
  for (uint8_t &b : w.bytes)
    b = static_cast<uint8_t>(numerics::encodeE4M3(
        static_cast<float>(static_cast<int>(rng.next() % 9) - 4)));
  Raw cpu(MSAMP_RT_BF16, {m, n}), gpu(MSAMP_RT_BF16, {m, n});
  auto xs = msamp_rt_test::scalar(0.5f), ws = msamp_rt_test::scalar(0.25f);
  auto amax = msamp_rt_test::scalar(0.0f);
  const int32_t flags = MSAMP_RT_GEMM_TRANSPOSE_B | MSAMP_RT_GEMM_FAST_ACCUM;
  use("cpu");
  _mlir_ciface_msamp_rt_gemm(x, xs, w, ws, cpu, amax, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_F8E4M3FN, MSAMP_RT_BF16, flags);
  expectNoError();

  DeviceBuffer dx(x.bytes.size()), dw(w.bytes.size()), dy(gpu.bytes.size()),
      dxs(4), dws(4);
  dx.upload(x.bytes.data());
  dw.upload(w.bytes.data());
  dxs.upload(&xs[0]);
  dws.upload(&ws[0]);
  MemRef xr(dx.get(), {m, k}), wr(dw.get(), {n, k}), yr(dy.get(), {m, n}),
      xsr(dxs.get(), {}), wsr(dws.get(), {});
  use("cuda");
  _mlir_ciface_msamp_rt_gemm(xr.get(), xsr.get(), wr.get(), wsr.get(), yr.get(),
                             nullptr, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN,
                             MSAMP_RT_BF16, flags);
  expectNoError();
  dy.download(gpu.bytes.data());
  expectSameValues(cpu, gpu, "device-pointer fprop");
}

TEST_F(CudaDevicePointers, InPlaceAdamStateInDeviceMemory) {
  AdamCall cpu(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16,
               {10007}, 83);
  AdamCall host(MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN,
                MSAMP_RT_F16, {10007}, 83);
  use("cpu");
  cpu.run(false);
  expectNoError();

  // Every tensor and scalar of the GPU call lives on the device.
  auto upload = [](const void *data, size_t bytes) {
    auto buffer = std::make_unique<DeviceBuffer>(bytes);
    buffer->upload(data);
    return buffer;
  };
  auto dParam =
      upload(host.param.data.bytes.data(), host.param.data.bytes.size());
  auto dGrad = upload(host.grad.data.bytes.data(), host.grad.data.bytes.size());
  auto dM = upload(host.m.data.bytes.data(), host.m.data.bytes.size());
  auto dV = upload(host.v.data.bytes.data(), host.v.data.bytes.size());
  auto dPs = upload(&host.paramScale[0], 4);
  auto dGs = upload(&host.gradScaleInv[0], 4);
  auto dMs = upload(&host.mScale[0], 4);
  auto dVs = upload(&host.vScale[0], 4);
  auto dLr = upload(&host.lr[0], 4);
  auto dStep = upload(&host.step[0], 8);
  const std::vector<int64_t> shape = {10007};
  MemRef p(dParam->get(), shape), g(dGrad->get(), shape), m(dM->get(), shape),
      v(dV->get(), shape), ps(dPs->get(), {}), gs(dGs->get(), {}),
      ms(dMs->get(), {}), vs(dVs->get(), {}), lr(dLr->get(), {}),
      step(dStep->get(), {});
  use("cuda");
  _mlir_ciface_msamp_rt_adam_update(
      p.get(), ps.get(), g.get(), gs.get(), m.get(), ms.get(), v.get(),
      vs.get(), lr.get(), step.get(), p.get(), ps.get(), m.get(), ms.get(),
      v.get(), vs.get(), MSAMP_RT_F16, MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN,
      MSAMP_RT_F16, host.beta1, host.beta2, host.eps, host.weightDecay,
      MSAMP_RT_ADAM_DECOUPLED);
  expectNoError();
  dParam->download(host.param.data.bytes.data());
  dM->download(host.m.data.bytes.data());
  dV->download(host.v.data.bytes.data());
  float scales[3];
  dPs->download(&scales[0]);
  dMs->download(&scales[1]);
  dVs->download(&scales[2]);
  expectSameValues(cpu.outParam, host.param.data, "param");
  expectSameValues(cpu.outM, host.m.data, "m");
  expectSameValues(cpu.outV, host.v.data, "v");
  expectSameFloat(cpu.outParamScale[0], scales[0], "param scale");
  expectSameFloat(cpu.outMScale[0], scales[1], "m scale");
  expectSameFloat(cpu.outVScale[0], scales[2], "v scale");
}

} // namespace
