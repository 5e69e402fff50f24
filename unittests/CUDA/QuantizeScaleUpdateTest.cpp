//===- QuantizeScaleUpdateTest.cpp - the cast with its amax, CUDA vs CPU --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_quantize_scale_update (docs/RuntimeABI.md 3.15) on both backends
// from the same inputs. The CUDA backend takes the amax inside the cast
// (with prev_scale) and, when the warm-up byte is set on the device, casts
// again with the just-in-time scale; the CPU composes msamp_rt_scale_update
// and msamp_rt_quantize (python/tests/test_quantize_scale_update.py checks
// it against an independent reference). Codes, transposed codes, rolled
// history, scale, inverse and next scale must agree bit for bit, warm and
// not, in place and not, with Inf, NaN, all-zero and empty inputs.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceTestUtils.h"

#include "DType.h"

#include "gtest/gtest.h"

using namespace msamp_cuda_test;
namespace rt = msamp::runtime;

namespace {

struct Setting {
  int32_t outType = MSAMP_RT_F8E4M3FN, kind = 0, algo = 0, margin = 0;
  int32_t flags =
      MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX | MSAMP_RT_SCALE_UPDATE_SELECT_JIT;
  bool warm = false, inPlace = false;
};

class CudaQuantizeScaleUpdate : public CudaTest {
protected:
  static void expectSameOnBoth(const Raw &in, float prev, const Setting &s,
                               const std::string &what) {
    const std::vector<float> history = {3.0f, 1000.0f, 0.0f, 2.5f};
    const int64_t length = static_cast<int64_t>(history.size());
    const bool transpose = s.flags & MSAMP_RT_SCALE_UPDATE_TRANSPOSE;
    const int64_t cols = in.shape.empty() ? 1 : in.shape.back();
    const int64_t rows = cols ? static_cast<int64_t>(in.numel()) / cols : 0;
    Raw out[2] = {Raw(s.outType, in.shape), Raw(s.outType, in.shape)};
    Raw outT[2] = {Raw(s.outType, {cols, rows}), Raw(s.outType, {cols, rows})};
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
          _mlir_ciface_msamp_rt_quantize_scale_update(
              input, h, p, warm, out[cuda], outT[cuda],
              s.inPlace ? h.ref.get() : oh.ref.get(), sc, si,
              s.inPlace ? p.ref.get() : nx.ref.get(), in.dtype, s.outType,
              s.kind, s.algo, MSAMP_RT_F8E4M3FN, s.margin, s.flags);
          outHistory[cuda] = s.inPlace ? h.data : oh.data;
          scale[cuda] = sc[0];
          scaleInv[cuda] = si[0];
          next[cuda] = s.inPlace ? p[0] : nx[0];
        },
        what);
    expectSameValues(out[0], out[1], what);
    if (transpose)
      expectSameValues(outT[0], outT[1], what + " (transposed)");
    for (int64_t i = 0; i < length; ++i)
      expectSameFloat(outHistory[0][i], outHistory[1][i],
                      what + " history[" + std::to_string(i) + "]");
    expectSameFloat(scale[0], scale[1], what + " scale");
    expectSameFloat(scaleInv[0], scaleInv[1], what + " scale_inv");
    expectSameFloat(next[0], next[1], what + " next scale");
  }
};

TEST_F(CudaQuantizeScaleUpdate, MatchesCpuWarmAndSteady) {
  std::vector<float> finite;
  for (float x : interestingFloats(400000, 31))
    if (std::isfinite(x))
      finite.push_back(x);
  const int32_t modes[] = {
      MSAMP_RT_SCALE_UPDATE_REDUCE_AMAX | MSAMP_RT_SCALE_UPDATE_SELECT_JIT,
      MSAMP_RT_SCALE_UPDATE_SELECT_JIT | MSAMP_RT_SCALE_UPDATE_TRANSPOSE, 0,
      MSAMP_RT_SCALE_UPDATE_TRANSPOSE};
  for (int32_t inType : {MSAMP_RT_F32, MSAMP_RT_BF16, MSAMP_RT_F16})
    for (int32_t outType : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (const std::vector<int64_t> &shape :
           std::vector<std::vector<int64_t>>{{301, 997}, {3, 33, 65}})
        for (int32_t mode : modes)
          for (bool warm : {false, true})
            for (int32_t kind : {0, 1}) {
              Setting s;
              s.outType = outType;
              s.kind = kind;
              s.algo = kind;
              s.flags = mode;
              s.warm = warm;
              expectSameOnBoth(shaped(inType, finite, shape), 0.5f, s,
                               std::string(rt::dtypeName(inType)) + " -> " +
                                   rt::dtypeName(outType) + " flags " +
                                   std::to_string(mode) +
                                   (warm ? " warm" : "") + " kind " +
                                   std::to_string(kind) + " rank " +
                                   std::to_string(shape.size()));
            }
}

TEST_F(CudaQuantizeScaleUpdate, SpecialAmaxesAndInPlaceLikeTheCpu) {
  const std::vector<float> special = interestingFloats(100000, 5); // Inf, NaN
  std::vector<float> withInf(4096, 1.0f), zeros(3 * 4096, 0.0f);
  withInf[4000] = -std::numeric_limits<float>::infinity();
  struct Case {
    const char *name;
    Raw in;
  };
  const Case cases[] = {{"nan", shaped(MSAMP_RT_F32, special, {100, 1000})},
                        {"inf", shaped(MSAMP_RT_F32, withInf, {64, 64})},
                        {"all zero", shaped(MSAMP_RT_F32, zeros, {3, 4096})},
                        {"empty", Raw(MSAMP_RT_F32, {0, 16})}};
  for (const Case &c : cases)
    for (bool warm : {false, true})
      for (bool inPlace : {false, true})
        for (bool transpose : {false, true}) {
          Setting s;
          s.warm = warm;
          s.inPlace = inPlace;
          if (transpose)
            s.flags |= MSAMP_RT_SCALE_UPDATE_TRANSPOSE;
          expectSameOnBoth(c.in, 4.0f, s,
                           std::string(c.name) + (warm ? " warm" : "") +
                               (inPlace ? " in place" : "") +
                               (transpose ? " transposed" : ""));
        }
}

} // namespace
