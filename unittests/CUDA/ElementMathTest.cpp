//===- ElementMathTest.cpp - The kernels' arithmetic, on the host ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA kernels compute every element with MSAMP_HOST_DEVICE functions
// (common/ElementAccess.h, optimizer/OptimizerMath.h, comm/FP8Combine.h).
// Here the same functions run on the host, arranged as the kernels arrange
// them (adam.cu's prologue / pass 1 / choose / pass 2), and must reproduce
// the CPU backend's results bit for bit. This pins, without a GPU, that the
// device code does the CPU's operations in the CPU's order; the device
// tests (MSAMPCudaTests) then only have to show the GPU executes them.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include "Collective.h"
#include "DType.h"
#include "comm/FP8Combine.h"
#include "common/ElementAccess.h"
#include "optimizer/OptimizerMath.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

using namespace msamp_cuda_test;
namespace cuda = msamp::runtime::cuda;
namespace rt = msamp::runtime;

namespace {

class ElementMath : public msamp_rt_test::RuntimeTest {};

TEST_F(ElementMath, BF16MatchesDTypeH) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const float mine = cuda::decodeBF16(static_cast<uint16_t>(bits));
    const float theirs = rt::decodeBF16(static_cast<uint16_t>(bits));
    ASSERT_EQ(msamp_rt_test::bitsOf(mine), msamp_rt_test::bitsOf(theirs));
  }
  Rng rng(7);
  for (int i = 0; i < 2000000; ++i) {
    const float x = msamp_rt_test::floatOf(static_cast<uint32_t>(rng.next()));
    ASSERT_EQ(cuda::encodeBF16(x), rt::encodeBF16(x))
        << std::hex << msamp_rt_test::bitsOf(x);
  }
  for (float x : interestingFloats(0, 1))
    EXPECT_EQ(cuda::encodeBF16(x), rt::encodeBF16(x));
}

/// quantize.cu's element: loadElement(in, 1) then storeScaledElement.
TEST_F(ElementMath, QuantizeMatchesCpuBackend) {
  const std::vector<float> values = interestingFloats(20000, 11);
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (float scale : {1.0f, 0.5f, 3.0f, 0x1p-10f, 0x1p20f}) {
        Raw in = highPrecisionBuffer(inType, values);
        Raw cpu(outType, in.shape), mine(outType, in.shape);
        auto s = msamp_rt_test::scalar(scale);
        _mlir_ciface_msamp_rt_quantize(in, s, cpu, inType, outType);
        expectNoError();
        for (size_t i = 0; i < in.numel(); ++i)
          cuda::storeScaledElement(
              mine.bytes.data(), outType, static_cast<int64_t>(i),
              cuda::loadElement(in.bytes.data(), inType,
                                static_cast<int64_t>(i), 1.0f),
              scale);
        // Host against host: even NaN payloads agree.
        ASSERT_EQ(cpu.bytes, mine.bytes)
            << rt::dtypeName(inType) << " -> " << rt::dtypeName(outType)
            << " scale " << scale;
      }
}

/// dequantize.cu's element: loadElement(in, scale_inv) then storeHighElement.
TEST_F(ElementMath, DequantizeMatchesCpuBackend) {
  for (int32_t inType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16}) {
    const size_t codes = inType == MSAMP_RT_F16 ? 65536 : 256;
    Raw in(inType, {static_cast<int64_t>(codes)});
    for (size_t c = 0; c < codes; ++c) {
      if (inType == MSAMP_RT_F16)
        in.setU16(c, static_cast<uint16_t>(c));
      else
        in.bytes[c] = static_cast<uint8_t>(c);
    }
    for (int32_t outType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
      for (float scaleInv : {1.0f, 0.25f, 3.0f, 1e-30f, 1e30f}) {
        Raw cpu(outType, in.shape), mine(outType, in.shape);
        auto s = msamp_rt_test::scalar(scaleInv);
        _mlir_ciface_msamp_rt_dequantize(in, s, cpu, inType, outType);
        expectNoError();
        for (size_t i = 0; i < codes; ++i)
          cuda::storeHighElement(
              mine.bytes.data(), outType, static_cast<int64_t>(i),
              cuda::loadElement(in.bytes.data(), inType,
                                static_cast<int64_t>(i), scaleInv));
        ASSERT_EQ(cpu.bytes, mine.bytes)
            << rt::dtypeName(inType) << " -> " << rt::dtypeName(outType);
      }
  }
}

/// amax.cu: an integer max of magnitudeBits, then amaxFromBits.
TEST_F(ElementMath, IntegerAmaxMatchesNumericsAmax) {
  Rng rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> v(1 + rng.next() % 300);
    for (float &x : v)
      x = static_cast<float>(rng.uniform(-1e4, 1e4));
    if (trial % 5 == 1)
      v[rng.next() % v.size()] = INFINITY;
    if (trial % 5 == 2)
      v[rng.next() % v.size()] = -NAN;
    if (trial % 5 == 3) {
      v[rng.next() % v.size()] = -INFINITY;
      v[rng.next() % v.size()] = NAN;
    }
    uint32_t bits = 0;
    for (float x : v)
      bits = std::max(bits, cuda::magnitudeBits(x));
    const float expected =
        numerics::amax(v.data(), static_cast<long long>(v.size()));
    EXPECT_EQ(msamp_rt_test::bitsOf(cuda::amaxFromBits(bits)),
              msamp_rt_test::bitsOf(expected));
  }
  EXPECT_EQ(cuda::amaxFromBits(0u), 0.0f); // empty tensor
}

/// Host replica of adam.cu's launch sequence (prologue, pass 1, choose,
/// pass 2, epilogue), with the kernels' element functions.
void adamLikeTheKernels(AdamCall &c) {
  const float lr = c.lr[0];
  const cuda::AdamConstants k =
      cuda::makeAdamConstants(lr, c.step[0], c.beta1, c.beta2, c.eps,
                              c.weightDecay, c.decoupled, c.mode1);
  const int32_t types[3] = {c.paramType, c.mType, c.vType};
  const Raw *ins[3] = {&c.param.data, &c.m.data, &c.v.data};
  Raw *outs[3] = {&c.outParam, &c.outM, &c.outV};
  const float oldScale[3] = {c.paramScale[0], c.mScale[0], c.vScale[0]};
  float loadInv[3], newScale[3];
  uint32_t amaxBits[3] = {0, 0, 0};
  bool anyScaled = false;
  for (int t = 0; t < 3; ++t) {
    const bool scaled = types[t] != MSAMP_RT_F32;
    anyScaled |= scaled;
    loadInv[t] = scaled ? numerics::detail::divRn(1.0f, oldScale[t]) : 1.0f;
    newScale[t] = scaled ? oldScale[t] : 1.0f;
  }
  const float gradScaleInv =
      c.gradType == MSAMP_RT_F32 ? 1.0f : c.gradScaleInv[0];
  const int64_t n = static_cast<int64_t>(c.param.data.numel());
  auto compute = [&](int64_t i, float(&x)[3]) {
    const float g = cuda::loadElement(c.grad.data.bytes.data(), c.gradType, i,
                                      gradScaleInv);
    for (int t = 0; t < 3; ++t)
      x[t] = cuda::loadElement(ins[t]->bytes.data(), types[t], i, loadInv[t]);
    cuda::adamElement(k, g, x[0], x[1], x[2]);
  };
  if (anyScaled) {
    for (int64_t i = 0; i < n; ++i) {
      float x[3];
      compute(i, x);
      for (int t = 0; t < 3; ++t)
        amaxBits[t] = std::max(amaxBits[t], cuda::magnitudeBits(x[t]));
    }
    for (int t = 0; t < 3; ++t)
      if (types[t] != MSAMP_RT_F32)
        newScale[t] = cuda::chooseScale(amaxBits[t], oldScale[t], types[t]);
  }
  for (int64_t i = 0; i < n; ++i) {
    float x[3];
    compute(i, x);
    for (int t = 0; t < 3; ++t) {
      if (types[t] == MSAMP_RT_F32)
        outs[t]->setF32(static_cast<size_t>(i), x[t]);
      else
        cuda::storeScaledElement(outs[t]->bytes.data(), types[t], i, x[t],
                                 newScale[t]);
    }
  }
  c.outParamScale[0] = newScale[0];
  c.outMScale[0] = newScale[1];
  c.outVScale[0] = newScale[2];
}

TEST_F(ElementMath, AdamMatchesCpuBackendForEveryStateType) {
  const int32_t paramTypes[] = {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN};
  const int32_t gradTypes[] = {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN,
                               MSAMP_RT_F8E5M2};
  const int32_t mTypes[] = {MSAMP_RT_F32, MSAMP_RT_F8E4M3FN, MSAMP_RT_F16};
  const int32_t vTypes[] = {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E5M2};
  uint64_t seed = 100;
  for (int32_t pt : paramTypes)
    for (int32_t gt : gradTypes)
      for (int32_t mt : mTypes)
        for (int32_t vt : vTypes)
          for (int kind : {0, 1, 2}) { // AdamW, Adam, AdamW mode 1
            const bool decoupled = kind != 1;
            AdamCall cpu(pt, gt, mt, vt, {7, 33}, seed);
            AdamCall mine(pt, gt, mt, vt, {7, 33}, seed);
            ++seed;
            cpu.decoupled = mine.decoupled = decoupled;
            cpu.mode1 = mine.mode1 = kind == 2;
            for (int step = 0; step < 3; ++step) {
              cpu.run(/*inPlace=*/false);
              expectNoError();
              adamLikeTheKernels(mine);
              const std::string what =
                  std::string(rt::dtypeName(pt)) + "/" + rt::dtypeName(gt) +
                  "/" + rt::dtypeName(mt) + "/" + rt::dtypeName(vt) +
                  (kind == 0   ? " AdamW"
                   : kind == 1 ? " Adam"
                               : " AdamW mode 1") +
                  " step " + std::to_string(step + 1);
              ASSERT_EQ(cpu.outParam.bytes, mine.outParam.bytes) << what;
              ASSERT_EQ(cpu.outM.bytes, mine.outM.bytes) << what;
              ASSERT_EQ(cpu.outV.bytes, mine.outV.bytes) << what;
              if (pt != MSAMP_RT_F32)
                ASSERT_EQ(cpu.outParamScale[0], mine.outParamScale[0]) << what;
              if (mt != MSAMP_RT_F32)
                ASSERT_EQ(cpu.outMScale[0], mine.outMScale[0]) << what;
              if (vt != MSAMP_RT_F32)
                ASSERT_EQ(cpu.outVScale[0], mine.outVScale[0]) << what;
              cpu.advance();
              mine.advance();
            }
          }
}

TEST_F(ElementMath, SgdMatchesCpuBackend) {
  for (int32_t pt : {MSAMP_RT_F32, MSAMP_RT_F16, MSAMP_RT_F8E4M3FN})
    for (int32_t flags :
         {0, MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER,
          MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER | MSAMP_RT_SGD_NESTEROV})
      for (double wd : {0.0, 1e-2}) {
        const double momentum =
            flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER ? 0.9 : 0.0;
        Rng rng(static_cast<uint64_t>(pt * 100 + flags * 10) + (wd != 0));
        StateInit param = makeState(pt, {257}, rng, -1, 1);
        StateInit grad = makeState(MSAMP_RT_F8E5M2, {257}, rng, -0.1, 0.1);
        StateInit buf = makeState(MSAMP_RT_F32, {257}, rng, -0.1, 0.1);
        for (int64_t step : {1, 2}) {
          Raw outParam(pt, {257}), outBuf(MSAMP_RT_F32, {257});
          auto ps = msamp_rt_test::scalar(param.scale);
          auto gs = msamp_rt_test::scalar(1.0f / grad.scale);
          auto ops = msamp_rt_test::scalar(0.0f);
          auto lr = msamp_rt_test::scalar(0.05f);
          auto st = msamp_rt_test::scalar<int64_t>(step);
          _mlir_ciface_msamp_rt_sgd_update(
              param.data, ps, grad.data, gs, buf.data, lr, st, outParam, ops,
              outBuf, pt, MSAMP_RT_F8E5M2, momentum, wd, flags);
          expectNoError();

          const cuda::SgdConstants k =
              cuda::makeSgdConstants(0.05f, step, momentum, wd,
                                     flags & MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER,
                                     flags & MSAMP_RT_SGD_NESTEROV);
          const bool scaled = pt != MSAMP_RT_F32;
          const float loadInv =
              scaled ? numerics::detail::divRn(1.0f, param.scale) : 1.0f;
          Raw mine(pt, {257}), mineBuf(MSAMP_RT_F32, {257});
          uint32_t bits = 0;
          auto compute = [&](int64_t i, float &w, float &b) {
            const float g = cuda::loadElement(grad.data.bytes.data(),
                                              MSAMP_RT_F8E5M2, i, gs[0]);
            w = cuda::loadElement(param.data.bytes.data(), pt, i, loadInv);
            b = k.hasBuffer && !k.firstStep ? buf.data.getF32(i) : 0.0f;
            cuda::sgdElement(k, g, w, b);
          };
          float newScale = param.scale;
          if (scaled) {
            for (int64_t i = 0; i < 257; ++i) {
              float w, b;
              compute(i, w, b);
              bits = std::max(bits, cuda::magnitudeBits(w));
            }
            newScale = cuda::chooseScale(bits, param.scale, pt);
          }
          for (int64_t i = 0; i < 257; ++i) {
            float w, b;
            compute(i, w, b);
            if (scaled)
              cuda::storeScaledElement(mine.bytes.data(), pt, i, w, newScale);
            else
              mine.setF32(static_cast<size_t>(i), w);
            mineBuf.setF32(static_cast<size_t>(i), b);
          }
          ASSERT_EQ(outParam.bytes, mine.bytes)
              << rt::dtypeName(pt) << " flags " << flags << " step " << step;
          if (k.hasBuffer)
            ASSERT_EQ(outBuf.bytes, mineBuf.bytes);
          if (scaled)
            ASSERT_EQ(ops[0], newScale);
        }
      }
}

/// fp8_reduce.cu's hop against Collective.h's, on every code pair.
TEST_F(ElementMath, FP8CombineMatchesCollectiveH) {
  for (numerics::Format f : {numerics::Format::E4M3, numerics::Format::E5M2})
    for (bool isMax : {false, true})
      for (int a = 0; a < 256; ++a)
        for (int b = 0; b < 256; ++b) {
          const uint8_t mine = cuda::combineFP8Codes(
              f, isMax, static_cast<uint8_t>(a), static_cast<uint8_t>(b));
          const uint8_t theirs = rt::combineFP8(
              f, isMax ? rt::CollectiveOp::Max : rt::CollectiveOp::Sum,
              static_cast<uint8_t>(a), static_cast<uint8_t>(b));
          ASSERT_EQ(mine, theirs) << a << " " << b;
        }
  // docs/Numerics.md 4.4's vectors.
  EXPECT_EQ(cuda::combineFP8Codes(numerics::Format::E4M3, false, 0x4A, 0x50),
            0x55);
  EXPECT_EQ(cuda::combineFP8Codes(numerics::Format::E4M3, false, 0x58, 0x5C),
            0x62);
  EXPECT_EQ(cuda::combineFP8Codes(numerics::Format::E4M3, false, 0x7E, 0x7E),
            0x7E);
}

} // namespace
