//===- RowChainTest.cpp - msamp-gpu-row-reductions' chains on a device ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The kernels msamp-gpu-row-reductions makes of Inputs/row_chains.mlir
// (attention's causal softmax forward, max -> sum of exponentials ->
// normalize, and backward, a row sum then an in-place update of the row it
// read, each one kernel with a warp per row), compiled to PTX at build
// time and embedded, are launched as a compiled step launches them and
// compared with the ops' sequential semantics computed here: the max bit
// for bit, the sums within the f32 bound of any summation order, and the
// elementwise results from the kernel's own row results (the registers a
// later op reads must be the values stored): the backward's bit for bit,
// the forward's within the device exp's error. The outputs start as NaN:
// the kernels must not read them (their fills became the start values).
// Cross-entropy over rows of 50,257 (a block per row) is the same check
// for the block form, whose later ops read the row results from workgroup
// memory after a barrier.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "row_chains_ptx.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using msamp_cuda_test::KernelMemref;

constexpr int64_t kBatch = 3, kSeq = 37, kRows = kBatch * kSeq;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

bool sameBits(float a, float b) {
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

class RowChain : public msamp_cuda_test::CudaManagedTest {
protected:
  const EmbeddedKernel &kernel(const std::string &name) {
    for (const EmbeddedKernel &k : kEmbeddedKernels)
      if (name == k.name)
        return k;
    ADD_FAILURE() << "no embedded kernel " << name;
    return kEmbeddedKernels[0];
  }
  void launch(const EmbeddedKernel &k, std::vector<void *> &args) {
    void *module = msamp_rt_gpu_module_load_jit(k.ptx, 3);
    void *function = msamp_rt_gpu_module_get_function(module, k.name);
    ASSERT_NE(function, nullptr) << msamp_rt_get_last_error_message();
    void *stream = msamp_rt_gpu_stream_create();
    const int64_t *g = k.grid_block;
    msamp_rt_gpu_launch_kernel(function, g[0], g[1], g[2], g[3], g[4], g[5], 0,
                               stream, args.data(), nullptr, args.size());
    msamp_rt_gpu_stream_synchronize(stream);
    ASSERT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
    msamp_rt_gpu_stream_destroy(stream);
    msamp_rt_gpu_module_unload(module);
  }
  std::vector<float> random(int64_t n, float scale) {
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> v(n);
    for (float &x : v)
      x = u(rng);
    return v;
  }
  std::mt19937 rng{29};
};

TEST_F(RowChain, CausalSoftmaxForwardIsOneKernelWithTheOpsSemantics) {
  std::vector<float> x = random(kRows * kSeq, 30.0f);
  x[5 * kSeq + 2] = -std::numeric_limits<float>::infinity(); // exp -> 0
  std::vector<float> nan(kRows, kNaN), nanRows(kRows * kSeq, kNaN);
  KernelMemref dx(managed(x), {kBatch, kSeq, kSeq}),
      dm(managed(nan), {kBatch, kSeq}), ds(managed(nan), {kBatch, kSeq}),
      dp(managed(nanRows), {kBatch, kSeq, kSeq});
  std::vector<void *> args;
  dx.append(args);
  dm.append(args);
  ds.append(args);
  dp.append(args);
  ASSERT_EQ(args.size(), 32u);
  launch(kernel("softmax_fwd_kernel"), args);

  for (int64_t row = 0; row < kRows; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const int64_t i = row % kSeq;
    const float *xr = &x[row * kSeq];
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j <= i; ++j)
      m = std::isnan(xr[j]) || xr[j] > m ? xr[j] : m;
    EXPECT_TRUE(sameBits(dm.aligned[row], m))
        << "max " << dm.aligned[row] << " vs " << m;
    double sum = 0;
    for (int64_t j = 0; j <= i; ++j)
      sum += std::exp((static_cast<double>(xr[j]) - m) * 0.125);
    const float s = ds.aligned[row];
    // n f32 additions in any order and each term within a few ulps.
    EXPECT_NEAR(s, sum, 1e-5 * sum) << "sum of exponentials";
    for (int64_t j = 0; j < kSeq; ++j) {
      const float got = dp.aligned[row * kSeq + j];
      if (j > i) {
        EXPECT_TRUE(sameBits(got, 0.0f)) << "masked " << j << ": " << got;
        continue;
      }
      // From the kernel's own s: only the device's exp differs.
      const float want = std::exp((xr[j] - dm.aligned[row]) * 0.125f) / s;
      EXPECT_NEAR(got, want, 4e-7f * want + 1e-30f) << "p[" << j << "]";
    }
  }
}

TEST_F(RowChain, SoftmaxBackwardUpdatesTheRowItReadInPlace) {
  std::vector<float> g = random(kRows * kSeq, 2.0f),
                     p = random(kRows * kSeq, 1.0f);
  std::vector<float> nan(kRows, kNaN);
  KernelMemref dg(managed(g), {kBatch, kSeq, kSeq}),
      dp(managed(p), {kBatch, kSeq, kSeq}), dr(managed(nan), {kBatch, kSeq});
  std::vector<void *> args;
  dg.append(args);
  dp.append(args);
  dr.append(args);
  ASSERT_EQ(args.size(), 25u);
  launch(kernel("softmax_bwd_kernel"), args);

  for (int64_t row = 0; row < kRows; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    double sum = 0, abs = 0;
    for (int64_t j = 0; j < kSeq; ++j) {
      const float t = g[row * kSeq + j] * p[row * kSeq + j];
      sum += t;
      abs += std::fabs(t);
    }
    const float r = dr.aligned[row];
    EXPECT_LE(std::fabs(r - sum), 2.0 * (kSeq + 1) * std::ldexp(1.0, -24) * abs)
        << "row sum " << r << " vs " << sum;
    // The update read the stored r (the register it used) and the old row.
    for (int64_t j = 0; j < kSeq; ++j) {
      const int64_t at = row * kSeq + j;
      const float want = (p[at] * (g[at] - r)) * 0.125f;
      EXPECT_TRUE(sameBits(dp.aligned[at], want))
          << "ds[" << j << "] " << dp.aligned[at] << " vs " << want;
    }
  }
}

TEST_F(RowChain, CrossEntropyOverLongRowsIsOneBlockPerRowKernel) {
  constexpr int64_t kCeRows = 5, kVocab = 50257, kThreads = 256;
  std::vector<float> x = random(kCeRows * kVocab, 8.0f);
  x[2 * kVocab + 7] = -std::numeric_limits<float>::infinity(); // exp -> 0
  x[1 * kVocab + kVocab - 1] = 9.5f; // the max in the last, partial stride
  // Label 50,256 sits in the last stride; -1 picks nothing (t = 0).
  const std::vector<int64_t> labels = {0, kVocab - 1, 12345, -1, 300};
  std::vector<float> nan(kCeRows, kNaN), nanRows(kCeRows * kVocab, kNaN);
  KernelMemref dx(managed(x), {kCeRows, kVocab}),
      // A descriptor's pointers are untyped on the device: the i64 labels
      // pass through the f32 descriptor unchanged.
      dl(reinterpret_cast<float *>(managed(labels)), {kCeRows}),
      dm(managed(nan), {kCeRows}), dt(managed(nan), {kCeRows}),
      ds(managed(nan), {kCeRows}), dg(managed(nanRows), {kCeRows, kVocab});
  std::vector<void *> args;
  for (KernelMemref *m : {&dx, &dl, &dm, &dt, &ds, &dg})
    m->append(args);
  ASSERT_EQ(args.size(), 34u);
  const EmbeddedKernel &k = kernel("cross_entropy_kernel");
  EXPECT_EQ(k.grid_block[0], kCeRows);
  EXPECT_EQ(k.grid_block[3], kThreads);
  launch(k, args);

  // The strided per-thread sums, then 8 + 3 butterfly levels: each term
  // passes through at most this many f32 additions.
  const int64_t depth = (kVocab + kThreads - 1) / kThreads + 8 + 1;
  for (int64_t row = 0; row < kCeRows; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const float *xr = &x[row * kVocab];
    float m = -std::numeric_limits<float>::infinity(), t = 0.0f;
    for (int64_t j = 0; j < kVocab; ++j) {
      m = std::isnan(xr[j]) || xr[j] > m ? xr[j] : m;
      t = (j == labels[row] ? xr[j] : 0.0f) + t;
    }
    EXPECT_TRUE(sameBits(dm.aligned[row], m))
        << "max " << dm.aligned[row] << " vs " << m;
    // One non-zero term among zeros: exact in any order.
    EXPECT_TRUE(sameBits(dt.aligned[row], t))
        << "target logit " << dt.aligned[row] << " vs " << t;
    double sum = 0;
    for (int64_t j = 0; j < kVocab; ++j)
      sum += std::exp(static_cast<double>(xr[j]) - m);
    const float s = ds.aligned[row];
    // Positive terms: the tree's rounding (depth additions) and the
    // device exp's error on each term.
    EXPECT_NEAR(s, sum, (depth * std::ldexp(1.0, -24) + 1e-6) * sum)
        << "sum of exponentials";
    // The gradient from the kernel's own m and s (the values every thread
    // read back): only the device's exp differs.
    for (int64_t j = 0; j < kVocab; ++j) {
      const float got = dg.aligned[row * kVocab + j];
      const float p = std::exp(xr[j] - dm.aligned[row]) / s;
      const float want = p - (j == labels[row] ? 1.0f : 0.0f);
      // The device's expf within 2 ulps, the host's within 1, the divide
      // and the one-hot subtraction rounded on both.
      ASSERT_NEAR(got, want,
                  6e-7f * p + (j == labels[row] ? 1.2e-7f : 0.0f) + 1e-30f)
          << "g[" << j << "]";
    }
  }
}

} // namespace
