//===- GemmPlanTest.cpp - The GEMM layout planner, replayed on the host ---===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// gemm/GemmPlan.cpp turns a row-major ABI GEMM into one column-major
// cuBLASLt call (FP8: TN only, dimensions padded to 16). Getting a leading
// dimension or a transpose wrong there would only show on a GPU, so this
// test replays every plan on the host: it packs the operands with the
// definition of the packMatrix kernel, runs the cuBLASLt problem with an
// emulation of cublasLtMatmul's column-major semantics (ld, op, strided
// batch), reads the result back the way the epilogue does, and compares
// with the CPU backend on the same operands. Small-integer operands keep
// every sum exact, so the comparison is exact.
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtils.h"

#include "DType.h"
#include "gemm/GemmPlan.h"

#include "gtest/gtest.h"

#include <vector>

using namespace msamp_cuda_test;
namespace cuda = msamp::runtime::cuda;
namespace rt = msamp::runtime;

namespace {

class GemmPlanTest : public msamp_rt_test::RuntimeTest {};

/// launchPackMatrix's definition (Kernels.h).
std::vector<double> pack(const std::vector<double> &src, int64_t batch,
                         const cuda::PackStep &s) {
  std::vector<double> dst(static_cast<size_t>(batch * s.dstRows * s.dstCols));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < s.dstRows; ++i)
      for (int64_t j = 0; j < s.dstCols; ++j) {
        const int64_t base = b * s.srcRows * s.srcCols;
        double v = 0.0;
        if (s.transpose && j < s.srcRows && i < s.srcCols)
          v = src.at(static_cast<size_t>(base + j * s.srcCols + i));
        else if (!s.transpose && i < s.srcRows && j < s.srcCols)
          v = src.at(static_cast<size_t>(base + i * s.srcCols + j));
        dst[static_cast<size_t>((b * s.dstRows + i) * s.dstCols + j)] = v;
      }
  return dst;
}

/// cublasLtMatmul with alpha 1, beta 0: D = op(A) op(B), column-major,
/// strided batch. Checks the shapes agree the way cuBLASLt does.
std::vector<double> ltMatmul(const std::vector<double> &A,
                             const cuda::LtMatrix &a,
                             const std::vector<double> &B,
                             const cuda::LtMatrix &b, const cuda::LtMatrix &d,
                             int64_t batch) {
  const uint64_t mRows = a.transposed ? a.cols : a.rows; // op(A) rows
  const uint64_t k = a.transposed ? a.rows : a.cols;
  const uint64_t kB = b.transposed ? b.cols : b.rows;
  const uint64_t nCols = b.transposed ? b.rows : b.cols;
  EXPECT_EQ(k, kB);
  EXPECT_EQ(mRows, d.rows);
  EXPECT_EQ(nCols, d.cols);
  EXPECT_GE(static_cast<uint64_t>(a.ld), a.rows);
  EXPECT_GE(static_cast<uint64_t>(b.ld), b.rows);
  EXPECT_GE(static_cast<uint64_t>(d.ld), d.rows);
  std::vector<double> D(static_cast<size_t>(batch * d.batchStride), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (uint64_t i = 0; i < d.rows; ++i)
      for (uint64_t j = 0; j < d.cols; ++j) {
        double sum = 0.0;
        for (uint64_t kk = 0; kk < k; ++kk) {
          const size_t ia = static_cast<size_t>(
              t * a.batchStride +
              (a.transposed ? kk + i * a.ld : i + kk * a.ld));
          const size_t ib = static_cast<size_t>(
              t * b.batchStride +
              (b.transposed ? j + kk * b.ld : kk + j * b.ld));
          sum += A.at(ia) * B.at(ib);
        }
        D.at(static_cast<size_t>(t * d.batchStride + i + j * d.ld)) = sum;
      }
  return D;
}

/// A [batch?, rows, cols] operand of small integers in dtype.
Raw operand(int32_t dtype, int64_t batch, int64_t rows, int64_t cols,
            bool batched, Rng &rng, std::vector<double> &values) {
  std::vector<int64_t> shape = {rows, cols};
  if (batched)
    shape.insert(shape.begin(), batch);
  Raw t(dtype, shape);
  values.resize(t.numel());
  for (size_t i = 0; i < t.numel(); ++i) {
    const int v = static_cast<int>(rng.next() % 9) - 4;
    values[i] = v;
    const float x = static_cast<float>(v);
    switch (dtype) {
    case MSAMP_RT_F32:
      t.setF32(i, x);
      break;
    case MSAMP_RT_BF16:
      t.setU16(i, rt::encodeBF16(x));
      break;
    case MSAMP_RT_F16:
      t.setU16(i, numerics::encodeF16(x));
      break;
    default:
      t.bytes[i] =
          static_cast<uint8_t>(numerics::encode(formatOfDType(dtype), x));
    }
  }
  return t;
}

struct Shape {
  int64_t batch, m, n, k;
};

TEST_F(GemmPlanTest, ReplayedPlansMatchCpuBackend) {
  // The last: attention's (batch x heads) product after
  // msamp-normalize-contractions, 12 = 2 x 6 matrices of head dim 8.
  const Shape shapes[] = {{1, 4, 3, 2},    {1, 16, 32, 48}, {1, 17, 33, 47},
                          {3, 5, 7, 9},    {2, 32, 16, 64}, {1, 1, 1, 1},
                          {2, 16, 16, 16}, {1, 48, 1, 16},  {12, 16, 16, 8}};
  const std::pair<int32_t, int32_t> types[] = {
      {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E4M3FN},
      {MSAMP_RT_F8E5M2, MSAMP_RT_F8E4M3FN},
      {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2},
      {MSAMP_RT_F32, MSAMP_RT_F32},
      {MSAMP_RT_BF16, MSAMP_RT_BF16},
      {MSAMP_RT_F16, MSAMP_RT_F16},
      {MSAMP_RT_BF16, MSAMP_RT_F32}};
  Rng rng(42);
  int planned = 0;
  for (const auto &[aType, bType] : types)
    for (const Shape &s : shapes)
      for (bool transA : {false, true})
        for (bool transB : {false, true})
          for (int32_t outType : {MSAMP_RT_F32, MSAMP_RT_BF16})
            for (bool wantAmax : {false, true})
              for (uint64_t align : {uint64_t(256), uint64_t(2)}) {
                SCOPED_TRACE(testing::Message()
                             << rt::dtypeName(aType) << (transA ? "^T" : "")
                             << " x " << rt::dtypeName(bType)
                             << (transB ? "^T" : "") << " -> "
                             << rt::dtypeName(outType) << " B=" << s.batch
                             << " M=" << s.m << " N=" << s.n << " K=" << s.k
                             << " amax=" << wantAmax << " align=" << align);
                cuda::GemmProblem p;
                p.aType = aType;
                p.bType = bType;
                p.outType = outType;
                p.batch = s.batch;
                p.m = s.m;
                p.n = s.n;
                p.k = s.k;
                p.transA = transA;
                p.transB = transB;
                p.wantAmax = wantAmax;
                p.alignA = p.alignB = p.alignOut = align;
                cuda::GemmPlan plan;
                const char *reason = nullptr;
                ASSERT_TRUE(cuda::planGemm(p, plan, reason)) << reason;
                ++planned;

                const bool fp8 = rt::isFP8(aType);
                ASSERT_EQ(plan.fp8, fp8);
                if (fp8) {
                  // cuBLASLt's FP8 rule on sm_89/sm_90: TN, 16-aligned.
                  EXPECT_TRUE(plan.a.transposed);
                  EXPECT_FALSE(plan.b.transposed);
                  EXPECT_EQ(plan.a.ld % 16, 0);
                  EXPECT_EQ(plan.b.ld % 16, 0);
                  EXPECT_EQ(plan.mPad % 16, 0);
                  EXPECT_EQ(plan.nPad % 16, 0);
                  EXPECT_EQ(plan.kPad % 16, 0);
                  EXPECT_GE(plan.mPad, s.m);
                  EXPECT_LT(plan.mPad - s.m, 16);
                  if (!plan.packA.needed)
                    EXPECT_TRUE(!transA && s.m % 16 == 0 && s.k % 16 == 0 &&
                                align >= 16);
                  if (!plan.packB.needed)
                    EXPECT_TRUE(transB && s.n % 16 == 0 && s.k % 16 == 0 &&
                                align >= 16);
                } else {
                  EXPECT_FALSE(plan.packA.needed);
                  EXPECT_FALSE(plan.packB.needed);
                  EXPECT_EQ(plan.widenOperands, aType != bType);
                }
                if (plan.dDirect) {
                  EXPECT_EQ(plan.mPad, s.m);
                  EXPECT_EQ(plan.nPad, s.n);
                  // The amax is of the f32 result: never after a rounding.
                  EXPECT_TRUE(!wantAmax || outType == MSAMP_RT_F32);
                  EXPECT_EQ(plan.amaxOverOutput, wantAmax);
                }

                // The CPU backend on the same operands.
                const bool batched = s.batch > 1;
                std::vector<double> aValues, bValues;
                Raw a = operand(aType, s.batch, transA ? s.k : s.m,
                                transA ? s.m : s.k, batched, rng, aValues);
                Raw b = operand(bType, s.batch, transB ? s.n : s.k,
                                transB ? s.k : s.n, batched, rng, bValues);
                std::vector<int64_t> outShape = {s.m, s.n};
                if (batched)
                  outShape.insert(outShape.begin(), s.batch);
                Raw out(MSAMP_RT_F32, outShape);
                auto one = msamp_rt_test::scalar(1.0f);
                auto one2 = msamp_rt_test::scalar(1.0f);
                auto amax = msamp_rt_test::scalar(0.0f);
                const int32_t flags = (transA ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                                      (transB ? MSAMP_RT_GEMM_TRANSPOSE_B : 0);
                _mlir_ciface_msamp_rt_gemm(a, one, b, one2, out, amax, aType,
                                           bType, MSAMP_RT_F32, flags);
                expectNoError();

                // The plan, replayed.
                const std::vector<double> aCanon =
                    plan.packA.needed ? pack(aValues, s.batch, plan.packA)
                                      : aValues;
                const std::vector<double> bCanon =
                    plan.packB.needed ? pack(bValues, s.batch, plan.packB)
                                      : bValues;
                // cuBLASLt's A is the b side, its B the a side.
                const std::vector<double> D =
                    ltMatmul(bCanon, plan.a, aCanon, plan.b, plan.d, s.batch);
                for (int64_t t = 0; t < s.batch; ++t)
                  for (int64_t r = 0; r < s.m; ++r)
                    for (int64_t c = 0; c < s.n; ++c) {
                      // Row-major [mPad, ld] of D (direct: the output
                      // itself; scratch: what the epilogue reads).
                      const double got = D.at(static_cast<size_t>(
                          t * plan.d.batchStride + c + r * plan.d.ld));
                      const float want = out.getF32(
                          static_cast<size_t>((t * s.m + r) * s.n + c));
                      ASSERT_EQ(got, static_cast<double>(want))
                          << "at [" << t << "][" << r << "][" << c << "]";
                    }
              }
  EXPECT_EQ(planned, 7 * 9 * 4 * 2 * 2 * 2);
}

TEST_F(GemmPlanTest, AlignedTNFpropNeedsNoCopies) {
  // MS-AMP's fprop y = x w^T with 16-multiple shapes: operands and output
  // are used in place, one cuBLASLt call, nothing else.
  cuda::GemmProblem p;
  p.aType = MSAMP_RT_F8E4M3FN;
  p.bType = MSAMP_RT_F8E4M3FN;
  p.outType = MSAMP_RT_BF16;
  p.m = 4096;
  p.n = 1024;
  p.k = 2048;
  p.transB = true;
  cuda::GemmPlan plan;
  const char *reason = nullptr;
  ASSERT_TRUE(cuda::planGemm(p, plan, reason));
  EXPECT_FALSE(plan.packA.needed);
  EXPECT_FALSE(plan.packB.needed);
  EXPECT_TRUE(plan.dDirect);
  EXPECT_FALSE(plan.amaxOverOutput);
  // dgrad (dY [M, N] x W [N, K], no transposes) packs W^T only.
  p.transB = false;
  ASSERT_TRUE(cuda::planGemm(p, plan, reason));
  EXPECT_FALSE(plan.packA.needed);
  EXPECT_TRUE(plan.packB.needed);
  EXPECT_TRUE(plan.packB.transpose);
}

TEST_F(GemmPlanTest, RejectsBatchBeyondInt32) {
  cuda::GemmProblem p;
  p.aType = p.bType = MSAMP_RT_F32;
  p.outType = MSAMP_RT_F32;
  p.batch = int64_t(1) << 31;
  p.m = p.n = p.k = 1;
  cuda::GemmPlan plan;
  const char *reason = nullptr;
  EXPECT_FALSE(cuda::planGemm(p, plan, reason));
  ASSERT_NE(reason, nullptr);
  EXPECT_NE(std::string(reason).find("batch"), std::string::npos);
}

TEST_F(GemmPlanTest, PointerAlignment) {
  EXPECT_EQ(cuda::pointerAlignment(reinterpret_cast<void *>(0x1000)), 256u);
  EXPECT_EQ(cuda::pointerAlignment(reinterpret_cast<void *>(0x1010)), 16u);
  EXPECT_EQ(cuda::pointerAlignment(reinterpret_cast<void *>(0x1001)), 1u);
}

} // namespace
