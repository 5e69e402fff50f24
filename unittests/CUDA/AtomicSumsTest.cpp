//===- AtomicSumsTest.cpp - full sums on a device -------------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The kernels msamp-gpu-atomic-full-reductions and
// msamp-gpu-block-atomic-sums make of Inputs/atomic_sums.mlir (an f64 sum of
// squares of 1,000,003 elements: 8 accumulators per thread, a masked last
// step; one of a 700 x 300 matrix read through a 1-d view; an f32 sum of
// 1,000 elements, one per thread), compiled to PTX at build time and
// embedded (embed_gpu_kernels.py), are launched through the runtime's
// msamp_rt_gpu_* entry points and compared with the sequential sum computed
// here, starting from the accumulator's initial value: within the bound of
// any summation order (the blocks' atomic adds come in any order).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"
#include "atomic_sums_ptx.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace {

/// A kernel's parameters as the outlined launch passes them: index values
/// and memref descriptors (allocated, aligned, offset, sizes, strides),
/// each in its own stable slot.
class Params {
public:
  void index(int64_t v) { args.push_back(&ints.emplace_back(v)); }
  /// A contiguous 1-d memref of n elements, or a 0-d one (n < 0).
  void memref(void *data, int64_t n) {
    args.push_back(&pointers.emplace_back(data));
    args.push_back(&pointers.emplace_back(data));
    index(0);
    if (n >= 0) {
      index(n);
      index(1);
    }
  }
  std::vector<void *> args;

private:
  std::deque<int64_t> ints;
  std::deque<void *> pointers;
};

class AtomicSums : public msamp_cuda_test::CudaManagedTest {
protected:
  const EmbeddedKernel &kernel(const std::string &name) {
    for (const EmbeddedKernel &k : kEmbeddedKernels)
      if (name == k.name)
        return k;
    ADD_FAILURE() << "no kernel " << name;
    return kEmbeddedKernels[0];
  }
  void launch(const EmbeddedKernel &k, Params &params) {
    size_t declared = 0;
    const std::string ptx = k.ptx;
    // Declarations only ("\t.param ..."), not the body's ld.param.
    for (size_t at = ptx.find("\t.param "); at != std::string::npos;
         at = ptx.find("\t.param ", at + 1))
      ++declared;
    ASSERT_EQ(declared, params.args.size())
        << k.name << ": not the parameters of its outlined launch";
    void *stream = msamp_rt_gpu_stream_create();
    void *module = msamp_rt_gpu_module_load_jit(k.ptx, 3);
    void *function = msamp_rt_gpu_module_get_function(module, k.name);
    ASSERT_NE(function, nullptr) << msamp_rt_get_last_error_message();
    const int64_t *g = k.grid_block;
    msamp_rt_gpu_launch_kernel(function, g[0], g[1], g[2], g[3], g[4], g[5], 0,
                               stream, params.args.data(), nullptr,
                               params.args.size());
    msamp_rt_gpu_stream_synchronize(stream);
    ASSERT_EQ(msamp_rt_get_last_error(), MSAMP_RT_OK)
        << msamp_rt_get_last_error_message();
    msamp_rt_gpu_module_unload(module);
    msamp_rt_gpu_stream_destroy(stream);
  }
};

/// n finite values of both signs and magnitudes 2^-6..2^6.
std::vector<float> makeInput(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> magnitude(0.5f, 1.0f);
  std::uniform_int_distribution<int> exponent(-6, 6);
  std::vector<float> x(n);
  for (float &v : x) {
    float m = std::ldexp(magnitude(rng), exponent(rng));
    v = (rng() & 1) ? m : -m;
  }
  return x;
}

/// The f64 sum of squares from 0.5 against the kernel's: any order of n + 1
/// f64 additions of non-negative terms is within 2 (n + 1) 2^-53 of the sum
/// (to first order, with margin).
TEST_F(AtomicSums, SumsOfSquaresMatchTheSequentialSum) {
  ASSERT_EQ(sizeof(kEmbeddedKernels) / sizeof(kEmbeddedKernels[0]), 3u);
  std::mt19937 rng(23);
  struct Case {
    const char *name;
    int64_t n;
    bool countFirst; // the element count is the kernel's first parameter
  };
  for (Case c : {Case{"big_kernel", 1000003, true},
                 Case{"matrix_kernel", 700 * 300, false}}) {
    SCOPED_TRACE(c.name);
    std::vector<float> x = makeInput(c.n, rng);
    double want = 0.5;
    for (float v : x)
      want += static_cast<double>(v) * v;
    double *acc = managed(std::vector<double>{0.5});
    Params params;
    if (c.countFirst)
      params.index(c.n);
    params.memref(managed(x), c.n);
    params.memref(acc, -1);
    launch(kernel(c.name), params);
    if (HasFatalFailure())
      return;
    const double bound = 2.0 * (c.n + 1) * std::ldexp(1.0, -53) * want;
    EXPECT_GT(want, 1.0);
    EXPECT_LE(std::fabs(*acc - want), bound) << *acc << " vs " << want;
  }
}

TEST_F(AtomicSums, SmallF32SumMatchesTheSequentialSum) {
  std::mt19937 rng(7);
  const int64_t n = 1000;
  std::vector<float> x = makeInput(n, rng);
  float want = 0.5f;
  double magnitude = 0.5;
  for (float v : x) {
    want = v + want;
    magnitude += std::fabs(static_cast<double>(v));
  }
  float *acc = managed(std::vector<float>{0.5f});
  Params params;
  params.memref(managed(x), n);
  params.index(n); // the loop's bound and step (T = N)
  params.index(n);
  params.memref(acc, -1);
  launch(kernel("small_kernel"), params);
  if (HasFatalFailure())
    return;
  const double bound = 2.0 * (n + 1) * std::ldexp(1.0, -24) * magnitude;
  EXPECT_LE(std::fabs(static_cast<double>(*acc) - want), bound)
      << *acc << " vs " << want;
}

} // namespace
