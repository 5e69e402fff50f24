//===- ScalingTest.cpp - compute_scale and amax history: CUDA vs CPU ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;

namespace {

class CudaScaling : public CudaTest {};

TEST_F(CudaScaling, ComputeScaleMatchesCpu) {
  Rng rng(21);
  const float specials[] = {0.0f,     448.0f, 449.0f, 1e-30f,   3e38f,
                            INFINITY, NAN,    -1.0f,  65504.0f, 1e-45f};
  for (int64_t length : {0, 1, 2, 16, 1024})
    for (int trial = 0; trial < 6; ++trial) {
      Tensor<float> history({length});
      for (int64_t i = 0; i < length; ++i)
        history[i] = static_cast<float>(rng.uniform(0.0, 1000.0));
      if (length > 0 && trial > 0)
        history[rng.next() % length] = specials[rng.next() % 10];
      for (int32_t kind : {0, 1})
        for (int32_t algo : {0, 1})
          for (int32_t format :
               {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
            for (int32_t margin : {0, 2})
              for (bool aliased : {false, true}) {
                float results[2];
                onBoth([&](bool cuda) {
                  auto prev = msamp_rt_test::scalar(0.125f);
                  auto out = msamp_rt_test::scalar(-1.0f);
                  _mlir_ciface_msamp_rt_compute_scale(
                      history, prev, aliased ? prev.ref.get() : out.ref.get(),
                      kind, algo, format, margin);
                  results[cuda] = aliased ? prev[0] : out[0];
                });
                expectSameFloat(results[0], results[1],
                                "L=" + std::to_string(length) + " kind " +
                                    std::to_string(kind) + " algo " +
                                    std::to_string(algo));
              }
    }
}

TEST_F(CudaScaling, UpdateAmaxHistoryMatchesCpu) {
  Rng rng(22);
  for (int64_t length : {1, 2, 16, 1024, 5000})
    for (bool inPlace : {false, true}) {
      std::vector<float> initial(static_cast<size_t>(length));
      for (float &x : initial)
        x = static_cast<float>(rng.uniform(0.0, 10.0));
      std::vector<float> results[2];
      onBoth([&](bool cuda) {
        Tensor<float> history({length}, initial);
        Tensor<float> out({length}, -1.0f);
        auto amax = msamp_rt_test::scalar(42.0f);
        _mlir_ciface_msamp_rt_update_amax_history(
            history, amax, inPlace ? history.ref.get() : out.ref.get());
        results[cuda] = inPlace ? history.data : out.data;
      });
      ASSERT_EQ(results[0], results[1])
          << "L=" << length << (inPlace ? " in place" : "");
      EXPECT_EQ(results[1][0], 42.0f);
    }
}

} // namespace
