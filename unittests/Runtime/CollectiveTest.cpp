//===- CollectiveTest.cpp - all_reduce and the FP8 hop arithmetic ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The all_reduce entry point in a world of one (the built-in local
// collective), and the per-hop FP8 arithmetic every collective shares
// (Collective.h), against docs/Numerics.md 4.4's byte vectors from MS-AMP's
// tests/operators/test_dist.py.
//
//===----------------------------------------------------------------------===//

#include "Collective.h"
#include "RuntimeTestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace msamp_rt_test;
namespace numerics = msamp::numerics;
using msamp::runtime::CollectiveOp;
using msamp::runtime::combineFP8;
using numerics::Format;

namespace {

class CollectiveTest : public RuntimeTest {};

TEST(FP8Combine, NumericsByteVectors) {
  // 5 + 8 = 13, 16 + 24 = 40 (E4M3), exact in half and in FP8.
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0x4A, 0x50), 0x55);
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0x58, 0x5C), 0x62);
  // 448 + 448 saturates to 448 (never NaN, never Inf).
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0x7E, 0x7E), 0x7E);
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0xFE, 0xFE), 0xFE);
  // E5M2: 57344 + 57344 overflows half to Inf, which saturates.
  EXPECT_EQ(combineFP8(Format::E5M2, CollectiveOp::Sum, 0x7B, 0x7B), 0x7B);
  // Rounding at the hop: 1 + 2^-3 (0x38 + 0x20 in E4M3) = 1.125 is exact;
  // 16 + 1 = 17 rounds to even (16).
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0x38, 0x20), 0x39);
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Sum, 0x58, 0x38), 0x58);
}

TEST(FP8Combine, MaxComparesDecodedValues) {
  // -448 (0xFE) vs 1 (0x38): the byte order would pick 0xFE.
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Max, 0xFE, 0x38), 0x38);
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Max, 0x50, 0x4A), 0x50);
  EXPECT_EQ(combineFP8(Format::E5M2, CollectiveOp::Max, 0x80, 0x01), 0x01);
  // NaN wins.
  EXPECT_EQ(combineFP8(Format::E4M3, CollectiveOp::Max, 0x38, 0x7F), 0x7F);
}

TEST(FP8Combine, RankOrderFoldRoundsAtEveryHop) {
  // Three ranks: ((r0 + r1) + r2), each hop rounded to E4M3. With 16, 1, 1:
  // 16 + 1 -> 16 (tie to even), 16 + 1 -> 16, although 18 is representable.
  const uint8_t r0[] = {0x58, 0x4A}, r1[] = {0x38, 0x50}, r2[] = {0x38, 0x00};
  const uint8_t *contrib[] = {r0, r1, r2};
  uint8_t out[2];
  msamp::runtime::reduceFP8InRankOrder(contrib, 3, 2, Format::E4M3,
                                       CollectiveOp::Sum, out);
  EXPECT_EQ(out[0], 0x58);
  EXPECT_EQ(out[1], 0x55);
  // The same fold computed with the core's addViaHalf directly.
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(out[i],
              numerics::addViaHalf(
                  Format::E4M3,
                  numerics::addViaHalf(Format::E4M3, r0[i], r1[i]), r2[i]));
}

TEST_F(CollectiveTest, WorldOfOne) {
  EXPECT_EQ(msamp_rt_rank(), 0);
  EXPECT_EQ(msamp_rt_world_size(), 1);
}

TEST_F(CollectiveTest, F32IsTheIdentityForEveryKind) {
  const std::vector<float> x = {1.5f, -2.0f, 0.0f, 1e30f,
                                std::numeric_limits<float>::infinity()};
  for (int32_t kind :
       {MSAMP_RT_REDUCE_SUM, MSAMP_RT_REDUCE_MAX, MSAMP_RT_REDUCE_MEAN}) {
    Tensor<float> in({5}, x), out({5}, 9.0f);
    _mlir_ciface_msamp_rt_all_reduce(in, nullptr, out, nullptr, MSAMP_RT_F32,
                                     kind, 0);
    expectNoError();
    EXPECT_EQ(out.data, x) << "kind " << kind;
    // In place.
    _mlir_ciface_msamp_rt_all_reduce(in, nullptr, in, nullptr, MSAMP_RT_F32,
                                     kind, 0);
    expectNoError();
    EXPECT_EQ(in.data, x) << "kind " << kind;
  }
}

TEST_F(CollectiveTest, HalfPayloadsAreTheIdentity) {
  const std::vector<uint16_t> x = {0x3C00, 0xFBFF, 0x0001, 0x7C00};
  for (int32_t dtype : {MSAMP_RT_F16, MSAMP_RT_BF16}) {
    Tensor<uint16_t> in({4}, x), out({4});
    // Dummy scales, as the compiler passes them without has_scale.
    auto dummy = scalar(1.0f), dummyOut = scalar(1.0f);
    _mlir_ciface_msamp_rt_all_reduce(in, dummy, out, dummyOut, dtype,
                                     MSAMP_RT_REDUCE_MEAN, 0);
    expectNoError();
    EXPECT_EQ(out.data, x);
    EXPECT_EQ(dummyOut[0], 1.0f);
  }
}

TEST_F(CollectiveTest, FP8MeanDividesTheInverseScaleNotTheBytes) {
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i)
    bytes[i] = static_cast<uint8_t>(i);
  const float world = static_cast<float>(msamp_rt_world_size());
  for (int32_t dtype : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2}) {
    for (int32_t kind :
         {MSAMP_RT_REDUCE_SUM, MSAMP_RT_REDUCE_MAX, MSAMP_RT_REDUCE_MEAN}) {
      Tensor<uint8_t> in({256}, bytes), out({256});
      auto scaleInv = scalar(0.375f), outScaleInv = scalar(-1.0f);
      _mlir_ciface_msamp_rt_all_reduce(in, scaleInv, out, outScaleInv, dtype,
                                       kind, 1);
      expectNoError();
      EXPECT_EQ(out.data, bytes) << "dtype " << dtype << " kind " << kind;
      EXPECT_EQ(outScaleInv[0],
                kind == MSAMP_RT_REDUCE_MEAN ? 0.375f / world : 0.375f);
    }
  }
}

TEST_F(CollectiveTest, FP8InPlaceWithAliasedScale) {
  Tensor<uint8_t> g({2, 3}, {0x4A, 0x50, 0x7E, 0xFE, 0x00, 0x80});
  const std::vector<uint8_t> before = g.data;
  auto scaleInv = scalar(0.5f);
  _mlir_ciface_msamp_rt_all_reduce(g, scaleInv, g, scaleInv, MSAMP_RT_F8E4M3FN,
                                   MSAMP_RT_REDUCE_MEAN, 1);
  expectNoError();
  EXPECT_EQ(g.data, before);
  EXPECT_EQ(scaleInv[0], 0.5f / msamp_rt_world_size());
}

// ZeRO's flat-shard collectives in a group of one: the shard is the whole
// buffer, the gather its only part; the FP8 mean still divides the inverse
// scale by the world size (1). Multi-rank: MPI/MpiCollectiveTest.cpp.
TEST_F(CollectiveTest, ReduceScatterAndAllGatherInAWorldOfOne) {
  Tensor<uint8_t> q({2, 3}, {0x4A, 0x50, 0x7E, 0xFE, 0x00, 0x80}), out({6});
  auto s = scalar(0.5f), os = scalar(-1.0f);
  const int64_t before = msamp_rt_collective_bytes();
  _mlir_ciface_msamp_rt_reduce_scatter(q, s, out, os, MSAMP_RT_F8E5M2,
                                       MSAMP_RT_REDUCE_MEAN, 1);
  expectNoError();
  EXPECT_EQ(out.data, q.data);
  EXPECT_EQ(os[0], 0.5f);
  Tensor<float> f({4}, {1.0f, -2.0f, 3.5f, 0.0f}), fo({4});
  _mlir_ciface_msamp_rt_reduce_scatter(f, nullptr, fo, nullptr, MSAMP_RT_F32,
                                       MSAMP_RT_REDUCE_SUM, 0);
  expectNoError();
  EXPECT_EQ(fo.data, f.data);
  Tensor<uint16_t> h({3}, {1, 2, 3}), ho({3});
  _mlir_ciface_msamp_rt_all_gather(h, ho, MSAMP_RT_F16);
  expectNoError();
  EXPECT_EQ(ho.data, h.data);
  // A group of one sends nothing.
  EXPECT_EQ(msamp_rt_collective_bytes(), before);
}

TEST_F(CollectiveTest, ReduceScatterAndAllGatherRefuseBadCalls) {
  Tensor<float> f({4}, 1.0f), half({2}), same({4});
  auto s = scalar(1.0f);
  // The output of a reduce-scatter is 1 / N of the input.
  _mlir_ciface_msamp_rt_reduce_scatter(f, nullptr, half, nullptr, MSAMP_RT_F32,
                                       MSAMP_RT_REDUCE_SUM, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_all_gather(f, half, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_SHAPE_MISMATCH);
  msamp_rt_clear_error();
  // No aliasing, FP8 needs its scale, f32 has none, no f16 reduce-scatter.
  _mlir_ciface_msamp_rt_reduce_scatter(f, nullptr, f, nullptr, MSAMP_RT_F32,
                                       MSAMP_RT_REDUCE_SUM, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_reduce_scatter(f, s, same, s, MSAMP_RT_F32,
                                       MSAMP_RT_REDUCE_SUM, 1);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  Tensor<uint8_t> q({4}), qo({4});
  _mlir_ciface_msamp_rt_reduce_scatter(
      q, nullptr, qo, nullptr, MSAMP_RT_F8E4M3FN, MSAMP_RT_REDUCE_SUM, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  Tensor<uint16_t> h({4}), ho({4});
  _mlir_ciface_msamp_rt_reduce_scatter(h, nullptr, ho, nullptr, MSAMP_RT_F16,
                                       MSAMP_RT_REDUCE_SUM, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_UNSUPPORTED_DTYPE);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_all_gather(f, f, MSAMP_RT_F32);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
}

TEST_F(CollectiveTest, ScaleFlagMustMatchThePayload) {
  Tensor<uint8_t> q({4}, 0x38), outQ({4});
  Tensor<float> f({4}, 1.0f), outF({4});
  auto s = scalar(1.0f);
  _mlir_ciface_msamp_rt_all_reduce(q, s, outQ, s, MSAMP_RT_F8E4M3FN,
                                   MSAMP_RT_REDUCE_SUM, 0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_all_reduce(f, s, outF, s, MSAMP_RT_F32,
                                   MSAMP_RT_REDUCE_SUM, 1);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
  msamp_rt_clear_error();
  _mlir_ciface_msamp_rt_all_reduce(f, nullptr, outF, nullptr, MSAMP_RT_F32, 3,
                                   0);
  EXPECT_EQ(msamp_rt_get_last_error(), MSAMP_RT_ERROR_INVALID_ARGUMENT);
}

} // namespace
