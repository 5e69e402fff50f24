//===- ScaleUpdateTest.cpp - msamp_rt_scale_update: CUDA against the CPU --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// One scaled cast's bookkeeping (docs/RuntimeABI.md 3.13) on both backends
// from the same inputs: the rolled history, the scale, its inverse and the
// next scale must agree bit for bit (the CPU's are those of the separate
// entry points, unittests/Runtime/ScaleUpdateTest.cpp). The inputs span
// many blocks and grid-stride iterations in every input dtype, under every
// scale rule, warm-up flag and history length; the special cases are the
// amaxes that keep the previous scale (all zeros, Inf, NaN, empty) and the
// compiled step's in-place form (out_history = history, out_next_scale =
// prev_scale). At world size 1 the reduce flag changes nothing; the
// all-reduced amax over ranks is the kit's 2-rank step check.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

struct Setting {
  int32_t kind = 0, algo = 0, format = MSAMP_RT_F8E4M3FN, margin = 0;
  int32_t flags = 0;
  bool warm = false, inPlace = false;
};

class CudaScaleUpdate : public CudaTest {
protected:
  /// Runs the call on both backends and compares every output.
  static void expectSameOnBoth(const Raw &in, const std::vector<float> &history,
                               float prev, const Setting &s,
                               const std::string &what);
};

void CudaScaleUpdate::expectSameOnBoth(const Raw &in,
                                       const std::vector<float> &history,
                                       float prev, const Setting &s,
                                       const std::string &what) {
  const int64_t length = static_cast<int64_t>(history.size());
  std::vector<float> outHistory[2];
  float scale[2], scaleInv[2], next[2];
  onBoth(
      [&](bool cuda) {
        Raw input(in);
        msamp_rt_test::Tensor<float> h({length}, history);
        msamp_rt_test::Tensor<float> oh({length}, -1.0f);
        auto p = msamp_rt_test::scalar(prev);
        auto sc = msamp_rt_test::scalar(-1.0f);
        auto si = msamp_rt_test::scalar(-1.0f);
        auto nx = msamp_rt_test::scalar(-1.0f);
        auto warm = msamp_rt_test::scalar(uint8_t(s.warm ? 1 : 0));
        _mlir_ciface_msamp_rt_scale_update(
            input, h, p, warm, s.inPlace ? h.ref.get() : oh.ref.get(), sc, si,
            s.inPlace ? p.ref.get() : nx.ref.get(), in.dtype, s.kind, s.algo,
            s.format, s.margin, s.flags);
        outHistory[cuda] = s.inPlace ? h.data : oh.data;
        scale[cuda] = sc[0];
        scaleInv[cuda] = si[0];
        next[cuda] = s.inPlace ? p[0] : nx[0];
      },
      what);
  for (int64_t i = 0; i < length; ++i)
    expectSameFloat(outHistory[0][i], outHistory[1][i],
                    what + " history[" + std::to_string(i) + "]");
  expectSameFloat(scale[0], scale[1], what + " scale");
  expectSameFloat(scaleInv[0], scaleInv[1], what + " scale_inv");
  expectSameFloat(next[0], next[1], what + " next scale");
}

TEST_F(CudaScaleUpdate, MatchesCpuOnEveryDTypeAndScaleRule) {
  std::vector<float> finite;
  for (float x : interestingFloats(300000, 29))
    if (std::isfinite(x))
      finite.push_back(x);
  finite.resize(301 * 997);
  const std::vector<float> histories[] = {{3.0f},
                                          {0.75f, 1000.0f, 0.0f, 2.5f, 7.0f,
                                           1e-3f, 9.0f, 0.0f, 1.0f, 4.0f, 2.0f,
                                           3.0f, 5.0f, 6.0f, 8.0f, 0.5f}};
  const int32_t modes[] = {
      0, MSAMP_RT_SCALE_UPDATE_SELECT_JIT, MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME,
      MSAMP_RT_SCALE_UPDATE_SELECT_JIT | MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX};
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16}) {
    const Raw in = highPrecisionBuffer(inType, finite);
    for (int32_t format : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (int32_t kind : {0, 1})
        for (int32_t algo : {0, 1})
          for (int32_t mode : modes)
            for (const std::vector<float> &history : histories) {
              Setting s{kind, algo, format, kind ? 0 : 2, mode, true, false};
              expectSameOnBoth(in, history, 0.5f, s,
                               std::string(rt::dtypeName(inType)) + " for " +
                                   rt::dtypeName(format) + " kind " +
                                   std::to_string(kind) + " algo " +
                                   std::to_string(algo) + " flags " +
                                   std::to_string(mode) + " history " +
                                   std::to_string(history.size()));
            }
  }
}

TEST_F(CudaScaleUpdate, KeepsPrevScaleAndWritesInPlaceLikeTheCpu) {
  const std::vector<float> special = interestingFloats(100000, 5); // Inf, NaN
  std::vector<float> withInf(4096, 1.0f), zeros(3 * 4096, 0.0f);
  withInf[4000] = -std::numeric_limits<float>::infinity();
  struct Case {
    const char *name;
    Raw in;
  };
  const Case cases[] = {{"nan", highPrecisionBuffer(MSAMP_RT_F32, special)},
                        {"inf", highPrecisionBuffer(MSAMP_RT_F32, withInf)},
                        {"all zero", highPrecisionBuffer(MSAMP_RT_F32, zeros)},
                        {"empty", Raw(MSAMP_RT_F32, {0, 16})}};
  for (const Case &c : cases)
    for (bool warm : {false, true})
      for (bool inPlace : {false, true})
        for (int32_t algo : {0, 1}) {
          Setting s;
          s.algo = algo;
          s.flags = MSAMP_RT_SCALE_UPDATE_SELECT_JIT;
          s.warm = warm;
          s.inPlace = inPlace;
          expectSameOnBoth(c.in, {2.0f, 0.0f, 5.0f}, 4.0f, s,
                           std::string(c.name) + (warm ? " warm" : "") +
                               (inPlace ? " in place" : "") + " algo " +
                               std::to_string(algo));
        }
}

} // namespace
