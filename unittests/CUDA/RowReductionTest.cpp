//===- RowReductionTest.cpp - msamp-gpu-row-reductions on a device -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The kernels msamp-gpu-row-reductions makes of Inputs/row_reductions.mlir
// (11 rows of 1, 31, 32, 33, 1000 and 50,257 elements; a sum, an
// arith.maximumf max and an arith.maxnumf max of each row), compiled to PTX
// at build time and embedded (embed_gpu_kernels.py), are launched through
// the runtime's msamp_rt_gpu_* entry points, as a compiled step launches
// them, and compared with the linalg op's sequential semantics computed
// here: the maxima bit for bit (NaN for NaN), the sums within the f32
// bound of any summation order. Rows hold -inf, NaN, all NaN and all -inf,
// and the outputs' initial values take part (combine(init, row)).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "row_reductions_ptx.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t kRows = 11;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// arith.maximumf: NaN if either is NaN.
float maximumf(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  return a > b ? a : b;
}
/// arith.maxnumf: the other operand when one is NaN.
float maxnumf(float a, float b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  return a > b ? a : b;
}

bool sameBits(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

class RowReduction : public msamp_cuda_test::CudaManagedTest {};

/// Row r of n elements: finite values of both signs and varied magnitude,
/// never zero (so the sign of a zero max is not in question), with the
/// special values of rows 1 to 4.
std::vector<float> makeInput(int64_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> magnitude(1e-3f, 1.0f);
  std::uniform_int_distribution<int> exponent(-6, 6);
  std::vector<float> x(kRows * n);
  for (float &v : x) {
    float m = std::ldexp(magnitude(rng), exponent(rng));
    v = (rng() & 1) ? m : -m;
  }
  float *row1 = &x[1 * n], *row2 = &x[2 * n], *row3 = &x[3 * n],
        *row4 = &x[4 * n];
  row1[n / 2] = -kInf; // sum -inf; the maxima ignore it unless alone
  row2[n - 1] = kNaN;  // maximumf and the sum NaN; maxnumf skips it
  for (int64_t e = 0; e < n; ++e) {
    row3[e] = kNaN;  // maxnumf: the initial value
    row4[e] = -kInf; // maxima: the initial value (or -inf)
  }
  return x;
}

TEST_F(RowReduction, WarpAndBlockPerRowMatchTheSequentialFold) {
  ASSERT_EQ(sizeof(kEmbeddedKernels) / sizeof(kEmbeddedKernels[0]), 6u);
  std::mt19937 rng(23);
  void *stream = msamp_rt_gpu_stream_create();
  for (const EmbeddedKernel &kernel : kEmbeddedKernels) {
    // rows_<n>_kernel
    const std::string name = kernel.name;
    const int64_t n = std::stoll(name.substr(5));
    SCOPED_TRACE(name + " (rows of " + std::to_string(n) + ")");
    // x (rank 2: 7 parameters) and three rank-1 outputs (5 each).
    const std::string ptx = kernel.ptx;
    size_t params = 0;
    // Declarations only ("\t.param .u64 ..."), not the body's ld.param.
    for (size_t at = ptx.find("\t.param "); at != std::string::npos;
         at = ptx.find("\t.param ", at + 1))
      ++params;
    ASSERT_EQ(params, 22u) << "the kernel's parameters are not x and three "
                              "outputs as memref descriptors";

    std::vector<float> x = makeInput(n, rng);
    // Initial values: the sum starts at 0.5; maximumf at -inf except row 4
    // (1e30, above every element); maxnumf at NaN in row 0 (so the row's
    // max), 0.25 in row 3 (all NaN: the result), -inf elsewhere.
    std::vector<float> sum(kRows, 0.5f), mx(kRows, -kInf), mn(kRows, -kInf);
    mx[4] = 1e30f;
    mn[0] = kNaN;
    mn[3] = 0.25f;
    std::vector<float> refSum = sum, refMax = mx, refMaxnum = mn;
    std::vector<double> absSum(kRows, 0.5);
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t e = 0; e < n; ++e) {
        float v = x[r * n + e];
        refSum[r] = v + refSum[r];
        refMax[r] = maximumf(v, refMax[r]);
        refMaxnum[r] = maxnumf(v, refMaxnum[r]);
        absSum[r] += std::fabs(static_cast<double>(v));
      }

    msamp_cuda_test::KernelMemref dx(managed(x), {kRows, n}),
        ds(managed(sum), {kRows}), dm(managed(mx), {kRows}),
        dn(managed(mn), {kRows});
    std::vector<void *> args;
    dx.append(args);
    ds.append(args);
    dm.append(args);
    dn.append(args);
    ASSERT_EQ(args.size(), 22u);
    void *module = msamp_rt_gpu_module_load_jit(kernel.ptx, 3);
    void *function = msamp_rt_gpu_module_get_function(module, kernel.name);
    ASSERT_NE(function, nullptr) << msamp_rt_get_last_error_message();
    const int64_t *g = kernel.grid_block;
    msamp_rt_gpu_launch_kernel(function, g[0], g[1], g[2], g[3], g[4], g[5], 0,
                               stream, args.data(), nullptr, args.size());
    msamp_rt_gpu_stream_synchronize(stream);
    ASSERT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();

    for (int64_t r = 0; r < kRows; ++r) {
      SCOPED_TRACE("row " + std::to_string(r));
      EXPECT_TRUE(sameBits(dm.aligned[r], refMax[r]))
          << "maximumf: " << dm.aligned[r] << " vs " << refMax[r];
      EXPECT_TRUE(sameBits(dn.aligned[r], refMaxnum[r]))
          << "maxnumf: " << dn.aligned[r] << " vs " << refMaxnum[r];
      float got = ds.aligned[r], want = refSum[r];
      if (std::isnan(want) || std::isinf(want)) {
        EXPECT_TRUE(sameBits(got, want)) << "sum: " << got << " vs " << want;
        continue;
      }
      // Any order of n + 1 f32 additions: |error| <= n * 2^-24 * sum|x|
      // (to first order; 2n for margin).
      const double bound = 2.0 * (n + 1) * std::ldexp(1.0, -24) * absSum[r];
      EXPECT_LE(std::fabs(static_cast<double>(got) - want), bound)
          << "sum: " << got << " vs " << want;
    }
    msamp_rt_gpu_module_unload(module);
  }
  msamp_rt_gpu_stream_destroy(stream);
}

} // namespace
