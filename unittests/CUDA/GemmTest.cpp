//===- GemmTest.cpp - msamp_rt_gemm on cuBLASLt against the CPU -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// * Small-integer operands with power-of-two inverse scales: every product
//   and partial sum is exact in f32 whatever the accumulation order (and in
//   Hopper's fast-accumulation mode), so CUDA must equal the CPU bit for
//   bit, for every FP8 and high-precision dtype pair, every transpose,
//   padded (non-multiple-of-16) shapes, batches, every output type, with
//   and without the amax.
// * Random FP8 operands: both backends within the f32 accumulation bound of
//   an f64 reference (orders differ; fast accumulation gets a loose bound).
// * MS-AMP's exact case and the amax-before-rounding rule.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

class CudaGemm : public CudaTest {};

struct GemmShape {
  int64_t batch, m, n, k;
};

/// An operand [batch?, rows, cols] of dtype from f32 values (FP8: encoded
/// exactly when the values are representable).
Raw operandFrom(int32_t dtype, const std::vector<int64_t> &shape,
                const std::vector<float> &values) {
  Raw t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == MSAMP_RT_F32)
      t.setF32(i, values[i]);
    else if (dtype == MSAMP_RT_BF16)
      t.setU16(i, rt::encodeBF16(values[i]));
    else if (dtype == MSAMP_RT_F16)
      t.setU16(i, numerics::encodeF16(values[i]));
    else
      t.bytes[i] = static_cast<uint8_t>(
          numerics::encode(formatOfDType(dtype), values[i]));
  }
  return t;
}

struct GemmRun {
  Raw out;
  float amax = -1.0f;
};

/// One msamp_rt_gemm call on the current backend.
void callGemm(Raw &a, float aScaleInv, Raw &b, float bScaleInv, int32_t flags,
              GemmRun &run) {
  auto as = msamp_rt_test::scalar(aScaleInv);
  auto bs = msamp_rt_test::scalar(bScaleInv);
  auto amax = msamp_rt_test::scalar(-1.0f);
  _mlir_ciface_msamp_rt_gemm(a, as, b, bs, run.out, amax, a.dtype, b.dtype,
                             run.out.dtype, flags);
  run.amax = amax[0];
}

std::string describe(int32_t aType, int32_t bType, int32_t outType,
                     const GemmShape &s, int32_t flags) {
  return std::string(rt::dtypeName(aType)) +
         (flags & MSAMP_RT_GEMM_TRANSPOSE_A ? "^T" : "") + " x " +
         rt::dtypeName(bType) +
         (flags & MSAMP_RT_GEMM_TRANSPOSE_B ? "^T" : "") + " -> " +
         rt::dtypeName(outType) + " B=" + std::to_string(s.batch) +
         " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
         " K=" + std::to_string(s.k) + " flags=" + std::to_string(flags);
}

TEST_F(CudaGemm, SmallIntegerOperandsMatchCpuExactly) {
  const std::pair<int32_t, int32_t> types[] = {
      {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN},
      {MSAMP_RT_F8E5M2, MSAMP_RT_F8E4M3FN},
      {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2},
      {MSAMP_RT_F32, MSAMP_RT_F32},
      {MSAMP_RT_BF16, MSAMP_RT_BF16},
      {MSAMP_RT_F16, MSAMP_RT_F16},
      {MSAMP_RT_BF16, MSAMP_RT_F32}};
  const GemmShape shapes[] = {{1, 4, 3, 2}, {1, 16, 32, 48}, {1, 17, 33, 47},
                              {3, 5, 7, 9}, {2, 64, 32, 64}, {1, 128, 256, 64}};
  Rng rng(51);
  for (const auto &[aType, bType] : types)
    for (const GemmShape &s : shapes)
      for (int32_t trans = 0; trans < 4; ++trans)
        for (int32_t outType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
          for (int32_t extra :
               {0, MSAMP_RT_GEMM_WRITE_AMAX,
                MSAMP_RT_GEMM_FAST_ACCUM | MSAMP_RT_GEMM_WRITE_AMAX}) {
            const int32_t flags = trans | extra;
            const bool transA = flags & MSAMP_RT_GEMM_TRANSPOSE_A;
            const bool transB = flags & MSAMP_RT_GEMM_TRANSPOSE_B;
            std::vector<int64_t> aShape = {transA ? s.k : s.m,
                                           transA ? s.m : s.k};
            std::vector<int64_t> bShape = {transB ? s.n : s.k,
                                           transB ? s.k : s.n};
            std::vector<int64_t> outShape = {s.m, s.n};
            if (s.batch > 1) {
              aShape.insert(aShape.begin(), s.batch);
              bShape.insert(bShape.begin(), s.batch);
              outShape.insert(outShape.begin(), s.batch);
            }
            std::vector<float> av(numelOf(aShape)), bv(numelOf(bShape));
            for (float &x : av)
              x = static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
            for (float &x : bv)
              x = static_cast<float>(static_cast<int>(rng.next() % 9) - 4);
            const Raw a = operandFrom(aType, aShape, av);
            const Raw b = operandFrom(bType, bShape, bv);
            GemmRun runs[2] = {{Raw(outType, outShape)},
                               {Raw(outType, outShape)}};
            const std::string what = describe(aType, bType, outType, s, flags);
            onBoth(
                [&](bool cuda) {
                  Raw ai(a), bi(b);
                  callGemm(ai, 0.5f, bi, 4.0f, flags, runs[cuda]);
                },
                what);
            expectSameValues(runs[0].out, runs[1].out, what);
            if (flags & MSAMP_RT_GEMM_WRITE_AMAX)
              expectSameFloat(runs[0].amax, runs[1].amax, what + " amax");
          }
}

TEST_F(CudaGemm, RandomFP8OperandsWithinAccumulationBound) {
  const GemmShape shapes[] = {
      {1, 64, 48, 256}, {1, 33, 17, 100}, {2, 128, 64, 512}};
  Rng rng(52);
  for (const GemmShape &s : shapes)
    for (int32_t flags : {MSAMP_RT_GEMM_TRANSPOSE_B, 0,
                          MSAMP_RT_GEMM_TRANSPOSE_B | MSAMP_RT_GEMM_FAST_ACCUM,
                          MSAMP_RT_GEMM_TRANSPOSE_A})
      for (int32_t outType : {MSAMP_RT_F32, MSAMP_RT_BF16}) {
        const bool transA = flags & MSAMP_RT_GEMM_TRANSPOSE_A;
        const bool transB = flags & MSAMP_RT_GEMM_TRANSPOSE_B;
        std::vector<int64_t> aShape = {transA ? s.k : s.m, transA ? s.m : s.k};
        std::vector<int64_t> bShape = {transB ? s.n : s.k, transB ? s.k : s.n};
        std::vector<int64_t> outShape = {s.m, s.n};
        if (s.batch > 1) {
          aShape.insert(aShape.begin(), s.batch);
          bShape.insert(bShape.begin(), s.batch);
          outShape.insert(outShape.begin(), s.batch);
        }
        std::vector<float> av(numelOf(aShape)), bv(numelOf(bShape));
        for (float &x : av)
          x = static_cast<float>(rng.uniform(-448.0, 448.0));
        for (float &x : bv)
          x = static_cast<float>(rng.uniform(-448.0, 448.0));
        const Raw a = operandFrom(MSAMP_RT_F8E4M3FN, aShape, av);
        const Raw b = operandFrom(MSAMP_RT_F8E4M3FN, bShape, bv);
        const float aInv = 0x1p-7f, bInv = 0x1p-9f;
        GemmRun runs[2] = {{Raw(outType, outShape)}, {Raw(outType, outShape)}};
        const std::string what =
            describe(MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN, outType, s, flags);
        onBoth(
            [&](bool cuda) {
              Raw ai(a), bi(b);
              callGemm(ai, aInv, bi, bInv, flags | MSAMP_RT_GEMM_WRITE_AMAX,
                       runs[cuda]);
            },
            what);
        // f64 reference over the decoded operands. Per backend, the worst
        // accumulation error of the case in units of alpha x sum|a x b|
        // (after the output's own rounding) against that backend's limit
        // (docs/Numerics.md, "FP8 GEMMs on Hopper"):
        //  * CPU: f32 sums rounded to nearest, (K + 2) x 2^-24;
        //  * CUDA: Hopper's FP8 tensor cores keep about 14 bits of the
        //    partial sums, also without fast accumulation; an H200 measured
        //    at most 9.4e-5 (K = 100) and 6.6e-5 (K = 256), independent of
        //    K: the limit is 2^-12 (2.4e-4);
        //  * CUDA with fast accumulation: at most 1.8e-4 measured; the
        //    limit is 2^-10.
        // Every case is measured and printed, so one GPU run gives them all.
        const bool fast = flags & MSAMP_RT_GEMM_FAST_ACCUM;
        const double outUlp = outType == MSAMP_RT_BF16 ? 0x1p-8 : 0x1p-24;
        const double limits[2] = {(s.k + 2) * 0x1p-24,
                                  fast ? 0x1p-10 : 0x1p-12};
        double worst[2] = {0.0, 0.0};
        int64_t worstAt[2] = {0, 0};
        double refAmax = 0.0;
        for (int64_t t = 0; t < s.batch; ++t)
          for (int64_t r = 0; r < s.m; ++r)
            for (int64_t c = 0; c < s.n; ++c) {
              double sum = 0.0, sumAbs = 0.0;
              for (int64_t kk = 0; kk < s.k; ++kk) {
                const size_t ia = static_cast<size_t>(
                    t * s.m * s.k + (transA ? kk * s.m + r : r * s.k + kk));
                const size_t ib = static_cast<size_t>(
                    t * s.k * s.n + (transB ? c * s.k + kk : kk * s.n + c));
                const double p = static_cast<double>(decodeAt(a, ia)) *
                                 static_cast<double>(decodeAt(b, ib));
                sum += p;
                sumAbs += std::fabs(p);
              }
              const double alpha = static_cast<double>(aInv) * bInv;
              const double ref = alpha * sum;
              refAmax = std::max(refAmax, std::fabs(ref));
              const int64_t io = (t * s.m + r) * s.n + c;
              for (int backend = 0; backend < 2; ++backend) {
                const double got =
                    decodeAt(runs[backend].out, static_cast<size_t>(io));
                ASSERT_FALSE(std::isnan(got)) << what << " at " << io;
                const double excess =
                    std::fabs(got - ref) - outUlp * std::fabs(ref) * 1.01;
                const double units = excess / (alpha * sumAbs + 1e-300);
                if (units > worst[backend]) {
                  worst[backend] = units;
                  worstAt[backend] = io;
                }
              }
            }
        for (int backend = 0; backend < 2; ++backend) {
          std::printf("gemm-accumulation %s %s: worst %.3g at %lld, limit "
                      "%.3g (x alpha*sum|a*b|)\n",
                      what.c_str(), backend ? "cuda" : "cpu", worst[backend],
                      static_cast<long long>(worstAt[backend]),
                      limits[backend]);
          EXPECT_LE(worst[backend], limits[backend])
              << what << (backend ? " cuda" : " cpu") << " at "
              << worstAt[backend];
        }
        for (int backend = 0; backend < 2; ++backend)
          EXPECT_NEAR(runs[backend].amax, refAmax, refAmax * 1e-2)
              << what << (backend ? " cuda" : " cpu");
      }
}

TEST_F(CudaGemm, MsAmpOnesCaseIsExact) {
  // ones(4, 2) x ones(3, 2)^T == 2 exactly (docs/Numerics.md 8).
  const Raw a =
      operandFrom(MSAMP_RT_F8E4M3FN, {4, 2}, std::vector<float>(8, 1.0f));
  const Raw b =
      operandFrom(MSAMP_RT_F8E4M3FN, {3, 2}, std::vector<float>(6, 1.0f));
  GemmRun run{Raw(MSAMP_RT_F32, {4, 3})};
  use("cuda");
  Raw ai(a), bi(b);
  callGemm(ai, 1.0f, bi, 1.0f, MSAMP_RT_GEMM_TRANSPOSE_B, run);
  expectNoError();
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(run.out.getF32(i), 2.0f);
}

TEST_F(CudaGemm, AmaxIsOfTheF32ResultBeforeRounding) {
  // 257 = 16 * 16 + 1 * 1 rounds to 256 in bf16; the amax must say 257.
  const Raw a = operandFrom(MSAMP_RT_F8E4M3FN, {16, 32}, [] {
    std::vector<float> v(16 * 32, 0.0f);
    v[0] = 16.0f;
    v[1] = 1.0f;
    return v;
  }());
  const Raw b = operandFrom(MSAMP_RT_F8E4M3FN, {16, 32}, [] {
    std::vector<float> v(16 * 32, 0.0f);
    v[0] = 16.0f;
    v[1] = 1.0f;
    return v;
  }());
  GemmRun runs[2] = {{Raw(MSAMP_RT_BF16, {16, 16})},
                     {Raw(MSAMP_RT_BF16, {16, 16})}};
  onBoth([&](bool cuda) {
    Raw ai(a), bi(b);
    callGemm(ai, 1.0f, bi, 1.0f,
             MSAMP_RT_GEMM_TRANSPOSE_B | MSAMP_RT_GEMM_WRITE_AMAX, runs[cuda]);
  });
  EXPECT_EQ(runs[0].amax, 257.0f);
  EXPECT_EQ(runs[1].amax, 257.0f);
  expectSameValues(runs[0].out, runs[1].out, "bf16 out");
}

} // namespace
