//===- ScaleUpdateTest.cpp - msamp_rt_scale_update on the CPU -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The fused scaling bookkeeping of one cast (docs/RuntimeABI.md 3.13)
// against its reference, the separate entry points it replaces called in
// the order msamp-fp8-gemms writes them (amax, update_amax_history,
// compute_scale most_recent, the warm-up select, 1 / scale, compute_scale of
// the next step), bit for bit; against hand-computed vectors (a history that
// wraps, the scale rules of Numerics.md 2.1); the amaxes that keep the
// previous scale (zero, NaN, Inf, empty input); in-place history and next
// scale; and what it refuses. The all-reduced amax is checked under mpirun
// (unittests/Runtime/MPI), the CUDA backend against this one in
// unittests/CUDA/ScaleUpdateTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace msamp_rt_test;

namespace {

/// What one update produces.
struct Outcome {
  std::vector<float> history;
  float scale = 0, scaleInv = 0, next = 0;
};

struct Setting {
  int32_t kind = 0, algo = 0, format = MSAMP_RT_F8E4M3FN, margin = 0;
  int32_t flags = 0;
  bool warm = false;
};

/// The input as bf16: the upper half of each f32 (truncated; both paths read
/// the same bits).
Tensor<uint16_t> asBf16(const std::vector<float> &values) {
  Tensor<uint16_t> t({static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t[i] = static_cast<uint16_t>(bitsOf(values[i]) >> 16);
  return t;
}

Outcome fused(msamp_rt_unranked_memref *in, int32_t dtype,
              const std::vector<float> &history, float prev, const Setting &s) {
  Tensor<float> h({static_cast<int64_t>(history.size())}, history);
  Tensor<float> out({static_cast<int64_t>(history.size())}, -1.0f);
  auto p = scalar(prev), sc = scalar(-1.0f), si = scalar(-1.0f),
       nx = scalar(-1.0f);
  auto warm = scalar(uint8_t(s.warm ? 1 : 0));
  _mlir_ciface_msamp_rt_scale_update(in, h, p, warm, out, sc, si, nx, dtype,
                                     s.kind, s.algo, s.format, s.margin,
                                     s.flags);
  return {out.data, sc[0], si[0], nx[0]};
}

/// The reference: the separate entry points.
Outcome separate(msamp_rt_unranked_memref *in, int32_t dtype,
                 const std::vector<float> &history, float prev,
                 const Setting &s) {
  auto a = scalar(0.0f), p = scalar(prev), jit = scalar(0.0f),
       nx = scalar(0.0f);
  Tensor<float> h({static_cast<int64_t>(history.size())}, history);
  _mlir_ciface_msamp_rt_amax(in, a, dtype);
  _mlir_ciface_msamp_rt_update_amax_history(h, a, h);
  _mlir_ciface_msamp_rt_compute_scale(h, p, jit, s.kind, /*most_recent=*/1,
                                      s.format, s.margin);
  const bool useJit = (s.flags & MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME) ||
                      ((s.flags & MSAMP_RT_SCALE_UPDATE_SELECT_JIT) && s.warm);
  auto used = scalar(useJit ? jit[0] : prev);
  _mlir_ciface_msamp_rt_compute_scale(h, used, nx, s.kind, s.algo, s.format,
                                      s.margin);
  volatile float one = 1.0f; // a runtime division, correctly rounded
  return {h.data, used[0], one / used[0], nx[0]};
}

void expectSameBits(const Outcome &a, const Outcome &b,
                    const std::string &what) {
  ASSERT_EQ(a.history.size(), b.history.size()) << what;
  for (size_t i = 0; i < a.history.size(); ++i)
    EXPECT_EQ(bitsOf(a.history[i]), bitsOf(b.history[i]))
        << what << " history[" << i << "]";
  EXPECT_EQ(bitsOf(a.scale), bitsOf(b.scale)) << what << " scale";
  EXPECT_EQ(bitsOf(a.scaleInv), bitsOf(b.scaleInv)) << what << " scale_inv";
  EXPECT_EQ(bitsOf(a.next), bitsOf(b.next)) << what << " next scale";
}

class ScaleUpdateTest : public RuntimeTest {};

TEST_F(ScaleUpdateTest, IsTheSeparateCallsBitForBit) {
  Rng rng(23);
  const int32_t modes[] = {0, MSAMP_RT_SCALE_UPDATE_SELECT_JIT,
                           MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME};
  for (int trial = 0; trial < 6; ++trial) {
    // Magnitudes over many binades (amax from 2^-20 to 2^20).
    std::vector<float> values(257);
    const double e = rng.uniform(-20, 20);
    for (float &v : values)
      v = static_cast<float>(rng.uniform(-1, 1) * std::exp2(e));
    std::vector<float> history(trial % 2 ? 16 : 1);
    for (float &h : history)
      h = static_cast<float>(rng.uniform(0, 1) * std::exp2(rng.uniform(-8, 8)));
    Tensor<float> f32({257}, values);
    Tensor<uint16_t> bf16 = asBf16(values);
    for (int32_t format : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2, MSAMP_RT_F16})
      for (int32_t kind : {0, 1})
        for (int32_t algo : {0, 1})
          for (int32_t margin : {0, 2})
            for (int32_t mode : modes)
              for (bool warm : {false, true}) {
                Setting s{kind, algo, format, margin, mode, warm};
                const std::string what =
                    "trial " + std::to_string(trial) + " format " +
                    std::to_string(format) + " kind " + std::to_string(kind) +
                    " algo " + std::to_string(algo) + " margin " +
                    std::to_string(margin) + " flags " + std::to_string(mode) +
                    (warm ? " warm" : "");
                expectSameBits(fused(f32, MSAMP_RT_F32, history, 0.25f, s),
                               separate(f32, MSAMP_RT_F32, history, 0.25f, s),
                               what + " f32");
                expectSameBits(fused(bf16, MSAMP_RT_BF16, history, 0.25f, s),
                               separate(bf16, MSAMP_RT_BF16, history, 0.25f, s),
                               what + " bf16");
              }
  }
  expectNoError();
}

TEST_F(ScaleUpdateTest, HandComputedVectors) {
  // E4M3, pow2, margin 0 (RuntimeABI.md 3.4): amax 10 -> 32, and the
  // inverse 1/32; the next scale takes the max of the history, 448 -> 1.
  Tensor<float> x({4}, std::vector<float>{1.0f, -10.0f, 3.0f, 0.0f});
  Setting s;
  s.flags = MSAMP_RT_SCALE_UPDATE_SELECT_JIT;
  s.warm = true;
  Outcome o = fused(x, MSAMP_RT_F32, {448.0f, 5.0f, 2.0f}, 4.0f, s);
  EXPECT_EQ(o.history, (std::vector<float>{10.0f, 448.0f, 5.0f}));
  EXPECT_EQ(o.scale, 32.0f);
  EXPECT_EQ(o.scaleInv, 1.0f / 32.0f);
  EXPECT_EQ(o.next, 1.0f);
  // Not warm: the previous scale is used, the next one is still computed.
  s.warm = false;
  o = fused(x, MSAMP_RT_F32, {448.0f, 5.0f, 2.0f}, 4.0f, s);
  EXPECT_EQ(o.scale, 4.0f);
  EXPECT_EQ(o.scaleInv, 0.25f);
  EXPECT_EQ(o.next, 1.0f);
  // most_recent for the next scale: amax 10 -> 32; E5M2: 57344 / 10 ->
  // 4096; exact (TE) E4M3: 44.8.
  s.algo = 1;
  EXPECT_EQ(fused(x, MSAMP_RT_F32, {448.0f}, 4.0f, s).next, 32.0f);
  s.format = MSAMP_RT_F8E5M2;
  EXPECT_EQ(fused(x, MSAMP_RT_F32, {448.0f}, 4.0f, s).next, 4096.0f);
  s.format = MSAMP_RT_F8E4M3FN;
  s.kind = 1;
  EXPECT_EQ(fused(x, MSAMP_RT_F32, {448.0f}, 4.0f, s).next, 448.0f / 10.0f);
  expectNoError();
}

TEST_F(ScaleUpdateTest, HistoryWrapsInPlace) {
  // Five steps into a history of three, in place, the next scale written
  // into the previous scale's buffer (the compiled step's state).
  Tensor<float> h({3}, 0.0f);
  auto scale = scalar(1.0f), s = scalar(0.0f), si = scalar(0.0f);
  auto warm = scalar(uint8_t(0));
  for (int step = 1; step <= 5; ++step) {
    Tensor<float> x({2}, std::vector<float>{float(step), -0.5f});
    const float prev = scale[0];
    _mlir_ciface_msamp_rt_scale_update(x, h, scale, warm, h, s, si, scale,
                                       MSAMP_RT_F32, 0, 0, MSAMP_RT_F8E4M3FN, 0,
                                       MSAMP_RT_SCALE_UPDATE_SELECT_JIT);
    EXPECT_EQ(s[0], prev) << "step " << step << ": not warm, prev is used";
  }
  EXPECT_EQ(h.data, (std::vector<float>{5.0f, 4.0f, 3.0f}));
  EXPECT_EQ(scale[0], 64.0f); // 448 / 5 = 89.6 -> 2^6
  expectNoError();
}

TEST_F(ScaleUpdateTest, AmaxesThatKeepThePreviousScale) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char *name;
    std::vector<float> values;
  };
  const Case cases[] = {{"zero", {0.0f, -0.0f}},
                        {"inf", {1.0f, -inf}},
                        {"nan", {nan, 2.0f}},
                        {"empty", {}}};
  for (const Case &c : cases)
    for (int32_t algo : {0, 1}) {
      Tensor<float> x({static_cast<int64_t>(c.values.size())}, c.values);
      Setting s;
      s.algo = algo;
      s.flags = MSAMP_RT_SCALE_UPDATE_JUST_IN_TIME;
      const Outcome o = fused(x, MSAMP_RT_F32, {3.0f, 1.0f}, 8.0f, s);
      expectSameBits(o, separate(x, MSAMP_RT_F32, {3.0f, 1.0f}, 8.0f, s),
                     c.name);
      EXPECT_EQ(o.scale, 8.0f) << c.name;
      EXPECT_EQ(o.scaleInv, 0.125f) << c.name;
      // A NaN or Inf newest entry keeps prev in the next scale too; 0 and
      // an empty tensor leave the max of the older entries (3 -> 128).
      const bool bad =
          std::string(c.name) == "nan" || std::string(c.name) == "inf";
      EXPECT_EQ(o.next, bad || algo == 1 ? 8.0f : 128.0f) << c.name;
    }
  expectNoError();
}

class ScaleUpdateRefusal : public RuntimeTest {
protected:
  /// One call with the given codes, history shape and aliasing; returns the
  /// error and whether anything was written.
  msamp_rt_status call(int32_t dtype, int32_t kind, int32_t algo,
                       int32_t format, int32_t flags,
                       std::vector<int64_t> historyShape = {4},
                       std::vector<int64_t> warmShape = {}, int alias = 0) {
    Tensor<float> x({3}, std::vector<float>{1, 2, 3});
    Tensor<float> h(historyShape, 0.5f);
    auto p = scalar(2.0f), s = scalar(-1.0f), si = scalar(-1.0f),
         nx = scalar(-1.0f);
    Tensor<uint8_t> warm(warmShape, uint8_t(1));
    msamp_rt_unranked_memref *outHistory = h;
    msamp_rt_unranked_memref *outScale = s, *outInv = si;
    if (alias == 1)
      outScale = p; // the scale into prev_scale's buffer
    if (alias == 2)
      outInv = nx; // two outputs in one buffer
    std::vector<float> five(5, 0.5f);
    MemRef first(five.data(), {4}), shifted(five.data() + 1, {4});
    msamp_rt_unranked_memref *history = h;
    if (alias == 3) {
      // out_history one entry into history's buffer.
      history = first;
      outHistory = shifted;
    }
    _mlir_ciface_msamp_rt_scale_update(x, history, p, warm, outHistory,
                                       outScale, outInv, nx, dtype, kind, algo,
                                       format, 0, flags);
    written = s[0] != -1.0f || si[0] != -1.0f || nx[0] != -1.0f;
    return msamp_rt_get_last_error();
  }

  void expectRefused(msamp_rt_status status, msamp_rt_status code,
                     const std::string &message) {
    EXPECT_EQ(status, code);
    EXPECT_NE(std::string(msamp_rt_get_last_error_message()).find(message),
              std::string::npos)
        << msamp_rt_get_last_error_message();
    EXPECT_FALSE(written) << message;
    msamp_rt_clear_error();
  }

  bool written = false;
};

TEST_F(ScaleUpdateRefusal, BadArgumentsWriteNothing) {
  const int32_t e4m3 = MSAMP_RT_F8E4M3FN, f32 = MSAMP_RT_F32;
  EXPECT_EQ(call(f32, 0, 0, e4m3, 0), MSAMP_RT_OK);
  EXPECT_TRUE(written);
  expectRefused(call(f32, 0, 0, e4m3, 0x8), MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "msamp_rt_scale_update: unknown flags 0x8");
  expectRefused(call(f32, 2, 0, e4m3, 0), MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "kind 2 is neither 0 (pow2) nor 1 (exact)");
  expectRefused(call(f32, 0, 2, e4m3, 0), MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "algo 2 is neither 0 (max) nor 1 (most_recent)");
  expectRefused(call(e4m3, 0, 0, e4m3, 0), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                "input dtype 3");
  expectRefused(call(f32, 0, 0, f32, 0), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE,
                "format dtype 0");
  expectRefused(call(f32, 0, 0, e4m3, 0, {2, 2}), MSAMP_RT_ERROR_SHAPE_MISMATCH,
                "history must be rank 1");
  expectRefused(call(f32, 0, 0, e4m3, 0, {0}), MSAMP_RT_ERROR_SHAPE_MISMATCH,
                "with at least one entry");
  expectRefused(
      call(f32, 0, 0, e4m3, MSAMP_RT_SCALE_UPDATE_SELECT_JIT, {4}, {2}),
      MSAMP_RT_ERROR_SHAPE_MISMATCH, "use_jit must hold one element");
  expectRefused(call(f32, 0, 0, e4m3, 0, {4}, {}, 1),
                MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "only out_next_scale may be prev_scale's buffer");
  expectRefused(call(f32, 0, 0, e4m3, 0, {4}, {}, 2),
                MSAMP_RT_ERROR_INVALID_ARGUMENT, "must be three buffers");
  expectRefused(call(f32, 0, 0, e4m3, 0, {4}, {}, 3),
                MSAMP_RT_ERROR_INVALID_ARGUMENT,
                "out_history partially overlaps history");
}

} // namespace
