//===- NcclTypeMapTest.cpp - The NCCL (dtype, reduction) table ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Runs without a GPU and without the NCCL library: the table is pure logic
// (comm/NcclTypeMap.cpp) and only nccl.h's enum values are used. Every
// (dtype code, reduction kind) pair in a range wider than both enums, under
// every capability class, is checked to be either mapped to the expected
// strategy and NCCL type or rejected with a reason; ncclAvg never appears.
//
//===----------------------------------------------------------------------===//

#include "comm/NcclTypeMap.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace msamp::runtime::cuda;

namespace {

constexpr NcclGroupCaps kHopper{90, 22809};   // all sm_90, NCCL 2.28.9
constexpr NcclGroupCaps kAda{89, 22809};      // an sm_89 in the group
constexpr NcclGroupCaps kOldNccl{90, 22304};  // NCCL 2.23.4: no FP8 types
constexpr NcclGroupCaps kFirstFP8{90, 22403}; // the first NCCL with FP8

const int32_t kKinds[] = {MSAMP_RT_REDUCE_SUM, MSAMP_RT_REDUCE_MAX,
                          MSAMP_RT_REDUCE_MEAN};

TEST(NcclTypeMap, PinsNcclEnumValues) {
  // docs/Numerics.md 4.4 / docs/Toolchain.md: the values other tools (MS-AMP's
  // MSCCL fork uses different ones) must not be confused with.
  EXPECT_EQ(static_cast<int>(ncclFloat8e4m3), 10);
  EXPECT_EQ(static_cast<int>(ncclFloat8e5m2), 11);
  EXPECT_EQ(static_cast<int>(ncclFloat32), 7);
  EXPECT_EQ(static_cast<int>(ncclUint8), 1);
  EXPECT_EQ(static_cast<int>(ncclSum), 0);
  EXPECT_EQ(static_cast<int>(ncclMax), 2);
  EXPECT_EQ(static_cast<int>(ncclAvg), 4);
}

TEST(NcclTypeMap, F32IsNativeForEveryKind) {
  for (const NcclGroupCaps &caps : {kHopper, kAda, kOldNccl})
    for (int32_t kind : kKinds) {
      const NcclReduceMapping m = mapNcclAllReduce(MSAMP_RT_F32, kind, caps);
      EXPECT_EQ(m.strategy, NcclStrategy::Native) << kind;
      EXPECT_EQ(m.type, ncclFloat32);
      EXPECT_TRUE(m.usesOp);
      EXPECT_EQ(m.op, kind == MSAMP_RT_REDUCE_MAX ? ncclMax : ncclSum);
      EXPECT_EQ(m.postDivide, kind == MSAMP_RT_REDUCE_MEAN);
      EXPECT_FALSE(m.divideScaleInv);
    }
}

TEST(NcclTypeMap, SixteenBitTypesWidenToF32) {
  for (int32_t dtype : {MSAMP_RT_F16, MSAMP_RT_BF16})
    for (int32_t kind : kKinds) {
      const NcclReduceMapping m = mapNcclAllReduce(dtype, kind, kHopper);
      EXPECT_EQ(m.strategy, NcclStrategy::WidenToF32) << dtype << " " << kind;
      // Never ncclFloat16 / ncclBfloat16 sums: they would round every hop.
      EXPECT_EQ(m.type, ncclFloat32);
      EXPECT_EQ(m.op, kind == MSAMP_RT_REDUCE_MAX ? ncclMax : ncclSum);
      EXPECT_EQ(m.postDivide, kind == MSAMP_RT_REDUCE_MEAN);
    }
}

TEST(NcclTypeMap, FP8IsNativeOnlyWhenEveryDeviceIsSm90AndNcclHasFP8) {
  for (int32_t dtype : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2})
    for (int32_t kind : kKinds) {
      for (const NcclGroupCaps &caps : {kHopper, kFirstFP8}) {
        const NcclReduceMapping m = mapNcclAllReduce(dtype, kind, caps);
        EXPECT_EQ(m.strategy, NcclStrategy::Native);
        EXPECT_EQ(m.type,
                  dtype == MSAMP_RT_F8E4M3FN ? ncclFloat8e4m3 : ncclFloat8e5m2);
        EXPECT_EQ(m.op, kind == MSAMP_RT_REDUCE_MAX ? ncclMax : ncclSum);
      }
      for (const NcclGroupCaps &caps : {kAda, kOldNccl}) {
        const NcclReduceMapping m = mapNcclAllReduce(dtype, kind, caps);
        EXPECT_EQ(m.strategy, NcclStrategy::GatherRankOrder);
        EXPECT_EQ(m.type, ncclUint8); // gathered as raw bytes
        EXPECT_FALSE(m.usesOp);
        EXPECT_NE(std::strlen(m.reason), 0u);
      }
    }
}

TEST(NcclTypeMap, FP8MeanDividesTheInverseScaleNeverTheBytes) {
  for (const NcclGroupCaps &caps : {kHopper, kAda})
    for (int32_t dtype : {MSAMP_RT_F8E4M3FN, MSAMP_RT_F8E5M2}) {
      const NcclReduceMapping mean =
          mapNcclAllReduce(dtype, MSAMP_RT_REDUCE_MEAN, caps);
      EXPECT_TRUE(mean.postDivide);
      EXPECT_TRUE(mean.divideScaleInv);
      EXPECT_NE(mean.op, ncclAvg);
      const NcclReduceMapping sum =
          mapNcclAllReduce(dtype, MSAMP_RT_REDUCE_SUM, caps);
      EXPECT_FALSE(sum.postDivide);
      EXPECT_FALSE(sum.divideScaleInv);
    }
}

TEST(NcclTypeMap, RejectsIntegersUnknownDTypesAndUnknownKinds) {
  for (int32_t dtype :
       {int32_t(MSAMP_RT_I32), int32_t(MSAMP_RT_I64), -1, 7, 8, 100})
    for (int32_t kind : kKinds) {
      const NcclReduceMapping m = mapNcclAllReduce(dtype, kind, kHopper);
      EXPECT_EQ(m.strategy, NcclStrategy::Reject) << dtype;
      EXPECT_FALSE(m.usesOp);
      EXPECT_NE(std::strlen(m.reason), 0u);
    }
  for (int32_t kind : {-1, 3, 4, 1000})
    EXPECT_EQ(mapNcclAllReduce(MSAMP_RT_F32, kind, kHopper).strategy,
              NcclStrategy::Reject)
        << kind;
}

/// The exhaustive sweep: every pair is mapped or rejected, mapped pairs use
/// a wire type that matches their strategy, and ncclAvg is never chosen.
TEST(NcclTypeMap, EveryPairIsMappedOrRejectedAndNoneUsesAvg) {
  int mapped = 0, rejected = 0;
  for (const NcclGroupCaps &caps : {kHopper, kAda, kOldNccl, kFirstFP8})
    for (int32_t dtype = -2; dtype <= 9; ++dtype)
      for (int32_t kind = -1; kind <= 4; ++kind) {
        const NcclReduceMapping m = mapNcclAllReduce(dtype, kind, caps);
        SCOPED_TRACE(testing::Message() << "dtype " << dtype << " kind " << kind
                                        << " cc " << caps.minComputeCapability
                                        << " nccl " << caps.ncclVersion);
        ASSERT_NE(m.reason, nullptr);
        if (m.usesOp)
          EXPECT_NE(m.op, ncclAvg);
        const bool valid =
            kind >= 0 && kind <= 2 && dtype >= MSAMP_RT_F32 &&
            dtype <= MSAMP_RT_F8E5M2; // f32, f16, bf16, e4m3, e5m2
        switch (m.strategy) {
        case NcclStrategy::Native:
          EXPECT_TRUE(valid);
          EXPECT_TRUE(m.usesOp);
          EXPECT_TRUE(m.type == ncclFloat32 || m.type == ncclFloat8e4m3 ||
                      m.type == ncclFloat8e5m2);
          ++mapped;
          break;
        case NcclStrategy::WidenToF32:
          EXPECT_TRUE(dtype == MSAMP_RT_F16 || dtype == MSAMP_RT_BF16);
          EXPECT_EQ(m.type, ncclFloat32);
          ++mapped;
          break;
        case NcclStrategy::GatherRankOrder:
          EXPECT_TRUE(dtype == MSAMP_RT_F8E4M3FN || dtype == MSAMP_RT_F8E5M2);
          EXPECT_EQ(m.type, ncclUint8);
          ++mapped;
          break;
        case NcclStrategy::Reject:
          EXPECT_FALSE(valid);
          ++rejected;
          break;
        }
      }
  // 5 float dtypes x 3 kinds x 4 capability sets are mapped; the rest of
  // the 12 x 6 x 4 grid is rejected.
  EXPECT_EQ(mapped, 5 * 3 * 4);
  EXPECT_EQ(rejected, 12 * 6 * 4 - 5 * 3 * 4);
}

TEST(NcclTypeMap, StrategyNames) {
  EXPECT_STREQ(ncclStrategyName(NcclStrategy::Native), "native");
  EXPECT_STREQ(ncclStrategyName(NcclStrategy::WidenToF32), "widen-to-f32");
  EXPECT_STREQ(ncclStrategyName(NcclStrategy::GatherRankOrder),
               "gather-rank-order");
  EXPECT_STREQ(ncclStrategyName(NcclStrategy::Reject), "reject");
}

} // namespace
