//===- StateTest.cpp - State buffers and their initialization -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Initialization must be a pure function of (seed, tensor name, init): the
// same on every run and machine, independent of the other tensors, and cast
// to the storage dtype exactly as the numerics core casts. The golden values
// pin the generator (splitmix64 + Box-Muller) so that a change to it is a
// visible, deliberate decision.
//
//===----------------------------------------------------------------------===//

#include "State.h"
#include "SafeTensors.h"
#include "TestUtils.h"

#include "MSAMP/Numerics/FP8.h"
#include "MSAMP/Numerics/Scaling.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace msamp::session;
using namespace msamp_session_test;

namespace {

TensorSpec spec(const std::string &name, const std::string &role,
                std::vector<int64_t> shape, ElementType dtype,
                const std::string &init) {
  TensorSpec s;
  s.name = name;
  s.role = role;
  s.shape = std::move(shape);
  s.dtype = dtype;
  s.initText = init;
  s.init = *parseInit(init);
  s.numElements = 1;
  for (int64_t d : s.shape)
    s.numElements *= d;
  s.numBytes = s.numElements * elementSize(dtype);
  return s;
}

struct State {
  std::vector<std::unique_ptr<TensorBuffer>> owned;
  std::vector<TensorBuffer *> buffers;

  void add(const TensorSpec &s) {
    std::unique_ptr<TensorBuffer> b;
    ASSERT_FALSE(TensorBuffer::create(s, b));
    buffers.push_back(b.get());
    owned.push_back(std::move(b));
  }
  TensorBuffer *get(const std::string &name) {
    for (TensorBuffer *b : buffers)
      if (b->spec().name == name)
        return b;
    return nullptr;
  }
  std::vector<uint8_t> bytes(const std::string &name) {
    TensorBuffer *b = get(name);
    const auto *p = static_cast<const uint8_t *>(b->data());
    return std::vector<uint8_t>(p, p + b->numBytes());
  }
  float scalar(const std::string &name) {
    float v;
    std::memcpy(&v, get(name)->data(), sizeof(v));
    return v;
  }
};

/// The MLP at O1: an f16 weight with a scale, an f32 bias, moments, a step.
void addMLPState(State &s) {
  s.add(spec("fc1.weight", "param", {64, 32}, ElementType::F16,
             "normal(0,0.02)"));
  s.add(spec("fc1.bias", "param", {64}, ElementType::F32, "zeros"));
  s.add(spec("fc1.weight.exp_avg", "opt_state", {64, 32}, ElementType::F32,
             "zeros"));
  s.add(spec("step", "step", {}, ElementType::I64, "zeros"));
  s.add(spec("fc1.weight.scale", "scaling_state", {}, ElementType::F32,
             "from_param"));
  s.add(spec("fc1.fprop.input.scale", "scaling_state", {}, ElementType::F32,
             "ones"));
}

TEST(StateTest, BuffersAndDescriptors) {
  State s;
  s.add(spec("w", "param", {3, 4, 5}, ElementType::F32, "zeros"));
  TensorBuffer *b = s.get("w");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 64, 0u);
  const auto *d = static_cast<const int64_t *>(b->descriptor());
  void *allocated, *aligned;
  std::memcpy(&allocated, &d[0], sizeof(void *));
  std::memcpy(&aligned, &d[1], sizeof(void *));
  EXPECT_EQ(allocated, b->data());
  EXPECT_EQ(aligned, b->data());
  EXPECT_EQ(d[2], 0);                           // offset
  EXPECT_EQ(std::vector<int64_t>(d + 3, d + 6), // sizes
            (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(std::vector<int64_t>(d + 6, d + 9), // row-major strides
            (std::vector<int64_t>{20, 5, 1}));
  // A 0-element tensor still gets a real allocation.
  s.add(spec("empty", "buffer", {0, 7}, ElementType::F32, "zeros"));
  EXPECT_NE(s.get("empty")->data(), nullptr);
}

TEST(StateTest, InitIsDeterministic) {
  State a, b;
  addMLPState(a);
  addMLPState(b);
  ASSERT_FALSE(initializeState(a.buffers, 1234, nullptr, nullptr));
  ASSERT_FALSE(initializeState(b.buffers, 1234, nullptr, nullptr));
  for (TensorBuffer *buffer : a.buffers)
    EXPECT_EQ(a.bytes(buffer->spec().name), b.bytes(buffer->spec().name))
        << buffer->spec().name;
  // Re-initializing the same buffers gives the same bytes again.
  std::vector<uint8_t> first = a.bytes("fc1.weight");
  ASSERT_FALSE(initializeState(a.buffers, 1234, nullptr, nullptr));
  EXPECT_EQ(a.bytes("fc1.weight"), first);

  State c;
  addMLPState(c);
  ASSERT_FALSE(initializeState(c.buffers, 1235, nullptr, nullptr));
  EXPECT_NE(c.bytes("fc1.weight"), first);
}

TEST(StateTest, InitDependsOnlyOnSeedAndName) {
  // The same weight alone, or after other random tensors, gets the same
  // values: adding a layer does not reshuffle the others.
  State alone, crowded;
  alone.add(spec("w", "param", {100}, ElementType::F32, "normal(0,0.02)"));
  crowded.add(spec("other", "param", {77}, ElementType::F32, "normal(0,1)"));
  crowded.add(spec("w", "param", {100}, ElementType::F32, "normal(0,0.02)"));
  ASSERT_FALSE(initializeState(alone.buffers, 7, nullptr, nullptr));
  ASSERT_FALSE(initializeState(crowded.buffers, 7, nullptr, nullptr));
  EXPECT_EQ(alone.bytes("w"), crowded.bytes("w"));
}

TEST(StateTest, NormalGoldenValuesAndStatistics) {
  State s;
  s.add(spec("w", "param", {20000}, ElementType::F32, "normal(0,0.02)"));
  ASSERT_FALSE(initializeState(s.buffers, 0, nullptr, nullptr));
  const float *w = static_cast<const float *>(s.get("w")->data());
  // Pinned: splitmix64(0 ^ FNV-1a-64("w")), Box-Muller, cos then sin.
  // (Computed independently in Python: 0.0017015731, -0.0091660069,
  // 0.0386727080, 0.0539584160.)
  const uint32_t golden[4] = {0x3adf0752, 0xbc162d05, 0x3d1e6746, 0x3d5d0380};
  for (int i = 0; i < 4; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &w[i], sizeof(bits));
    EXPECT_EQ(bits, golden[i]) << "element " << i << " = " << w[i];
  }
  double sum = 0, sumSq = 0;
  for (int i = 0; i < 20000; ++i) {
    sum += w[i];
    sumSq += static_cast<double>(w[i]) * w[i];
  }
  double mean = sum / 20000, stddev = std::sqrt(sumSq / 20000 - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(stddev, 0.02, 0.0005);
}

TEST(StateTest, FromParamScaleAndStorageCast) {
  State s;
  addMLPState(s);
  ASSERT_FALSE(initializeState(s.buffers, 99, nullptr, nullptr));
  // Reproduce the f32 values with a second, all-f32 state of the same seed.
  State f32;
  f32.add(spec("fc1.weight", "param", {64, 32}, ElementType::F32,
               "normal(0,0.02)"));
  ASSERT_FALSE(initializeState(f32.buffers, 99, nullptr, nullptr));
  const float *values =
      static_cast<const float *>(f32.get("fc1.weight")->data());
  const float amax = msamp::numerics::amax(values, 64 * 32);
  const float scale = s.scalar("fc1.weight.scale");
  EXPECT_EQ(scale, msamp::numerics::computeScalePow2(amax, 1.0f, 65504.0f, 0));
  // A power of two that maps the amax into [32752, 65504].
  EXPECT_EQ(std::exp2(std::round(std::log2(scale))), scale);
  EXPECT_LE(amax * scale, 65504.0f);
  EXPECT_GT(amax * scale, 65504.0f / 2);
  const uint16_t *stored =
      static_cast<const uint16_t *>(s.get("fc1.weight")->data());
  for (int i = 0; i < 64 * 32; ++i)
    ASSERT_EQ(stored[i], msamp::numerics::quantize(msamp::numerics::Format::F16,
                                                   values[i], scale))
        << i;
  EXPECT_EQ(s.scalar("fc1.fprop.input.scale"), 1.0f);
  int64_t step;
  std::memcpy(&step, s.get("step")->data(), sizeof(step));
  EXPECT_EQ(step, 0);
}

TEST(StateTest, InitFileReplacesParams) {
  TempDir dir;
  std::vector<float> w(64 * 32), bias(64, 0.5f);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(i) / 1000.0f - 1.0f;
  ASSERT_FALSE(writeSafeTensors(
      dir.file("init.safetensors"),
      {{"fc1.weight", ElementType::F32, {64, 32}, w.data(), w.size() * 4}},
      {}));
  std::unique_ptr<SafeTensorsReader> reader;
  ASSERT_FALSE(SafeTensorsReader::open(dir.file("init.safetensors"), reader));
  State s;
  addMLPState(s);
  int64_t fromFile = -1;
  ASSERT_FALSE(initializeState(s.buffers, 5, reader.get(), &fromFile));
  EXPECT_EQ(fromFile, 1);
  const float scale = s.scalar("fc1.weight.scale");
  EXPECT_EQ(scale,
            msamp::numerics::computeScalePow2(
                msamp::numerics::amax(w.data(), w.size()), 1.0f, 65504.0f, 0));
  std::vector<float> back(w.size());
  decodeToF32(ElementType::F16, s.get("fc1.weight")->data(),
              static_cast<int64_t>(w.size()), 1.0f / scale, back.data());
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(back[i], w[i], std::fabs(w[i]) * 1e-3 + 1e-6) << i;
}

TEST(StateTest, InitFileErrors) {
  TempDir dir;
  auto initWith = [&](const std::vector<TensorToWrite> &tensors) {
    EXPECT_FALSE(writeSafeTensors(dir.file("i.safetensors"), tensors, {}));
    std::unique_ptr<SafeTensorsReader> reader;
    EXPECT_FALSE(SafeTensorsReader::open(dir.file("i.safetensors"), reader));
    State s;
    addMLPState(s);
    return initializeState(s.buffers, 0, reader.get(), nullptr);
  };
  std::vector<float> bias(64, 1.0f);
  std::vector<uint16_t> half(64, 0x3C00);
  Error e =
      initWith({{"fc1.bias", ElementType::F32, {8, 8}, bias.data(), 256}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_MISMATCH);
  EXPECT_NE(e.message().find("tensor 'fc1.bias': shape [8, 8], expected [64]"),
            std::string::npos)
      << e.message();
  e = initWith({{"fc1.bias", ElementType::F16, {64}, half.data(), 128}});
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("dtype F16, expected F32"), std::string::npos)
      << e.message();
  e = initWith({{"fc9.bias", ElementType::F32, {64}, bias.data(), 256}});
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("'fc9.bias': not a param"), std::string::npos)
      << e.message();
  e = initWith({{"step", ElementType::F32, {}, bias.data(), 4}});
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("'step': not a param"), std::string::npos);
  bias[3] = NAN;
  e = initWith({{"fc1.bias", ElementType::F32, {64}, bias.data(), 256}});
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("non-finite"), std::string::npos);
}

TEST(StateTest, FromParamNeedsAParam) {
  State s;
  s.add(spec("orphan.scale", "scaling_state", {}, ElementType::F32,
             "from_param"));
  Error e = initializeState(s.buffers, 0, nullptr, nullptr);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_MANIFEST);
  EXPECT_NE(e.message().find("'orphan.scale'"), std::string::npos);
}

TEST(StateTest, EncodeDecode) {
  const float in[5] = {1.0f, -2.0f, 0.1f, 1000.0f, 3.0e38f};
  uint16_t bf16[5];
  encodeFromF32(ElementType::BF16, in, 5, 1.0f, bf16);
  EXPECT_EQ(bf16[0], 0x3F80);
  EXPECT_EQ(bf16[1], 0xC000);
  EXPECT_EQ(bf16[2], 0x3DCD); // 0.1 rounds up to nearest even
  float back[5];
  decodeToF32(ElementType::BF16, bf16, 5, 1.0f, back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[3], 1000.0f);

  uint8_t e4m3[5];
  encodeFromF32(ElementType::F8E4M3FN, in, 5, 1.0f, e4m3);
  EXPECT_EQ(e4m3[0], msamp::numerics::encodeE4M3(1.0f));
  EXPECT_EQ(e4m3[3], 0x7E); // saturates at 448
  decodeToF32(ElementType::F8E4M3FN, e4m3, 5, 0.5f, back);
  EXPECT_EQ(back[0], 0.5f);
  EXPECT_EQ(back[3], 224.0f);

  EXPECT_EQ(storageMaxFinite(ElementType::F16), 65504.0f);
  EXPECT_EQ(storageMaxFinite(ElementType::F8E4M3FN), 448.0f);
  EXPECT_EQ(storageMaxFinite(ElementType::F8E5M2), 57344.0f);
  EXPECT_EQ(storageMaxFinite(ElementType::F32), 0.0f);
}

// The session's non-finite scan of inputs and state (docs/Design.md "Bad
// data and bad updates"): every storage type, read from the bits; FP8
// E4M3FN has no infinity, its NaNs are 0x7F and 0xFF.
TEST(NonFiniteScan, EveryStorageType) {
  std::vector<float> f32(3000, 1.5f);
  EXPECT_EQ(findNonFinite(ElementType::F32, f32.data(), 3000), -1);
  f32[2500] = -INFINITY;
  f32[2999] = NAN;
  EXPECT_EQ(findNonFinite(ElementType::F32, f32.data(), 3000), 2500);
  EXPECT_STREQ(spellNonFinite(ElementType::F32, f32.data(), 2500), "-inf");
  EXPECT_STREQ(spellNonFinite(ElementType::F32, f32.data(), 2999), "nan");
  f32[3] = std::numeric_limits<float>::max(); // finite: not reported
  EXPECT_EQ(findNonFinite(ElementType::F32, f32.data(), 2500), -1);

  std::vector<uint16_t> f16 = {0x3C00, 0x7BFF, 0xFBFF, 0x7C00, 0xFE00};
  EXPECT_EQ(findNonFinite(ElementType::F16, f16.data(), 3), -1);
  EXPECT_EQ(findNonFinite(ElementType::F16, f16.data(), 5), 3);
  EXPECT_STREQ(spellNonFinite(ElementType::F16, f16.data(), 3), "inf");
  EXPECT_STREQ(spellNonFinite(ElementType::F16, f16.data(), 4), "nan");
  std::vector<uint16_t> bf16 = {0x3F80, 0x7F7F, 0xFF80};
  EXPECT_EQ(findNonFinite(ElementType::BF16, bf16.data(), 3), 2);
  EXPECT_STREQ(spellNonFinite(ElementType::BF16, bf16.data(), 2), "-inf");

  // E4M3FN: 0x7E (448) and 0xFE (-448) are finite, 0x7F and 0xFF NaN.
  std::vector<uint8_t> e4m3 = {0x00, 0x7E, 0xFE, 0xFF};
  EXPECT_EQ(findNonFinite(ElementType::F8E4M3FN, e4m3.data(), 3), -1);
  EXPECT_EQ(findNonFinite(ElementType::F8E4M3FN, e4m3.data(), 4), 3);
  EXPECT_STREQ(spellNonFinite(ElementType::F8E4M3FN, e4m3.data(), 3), "nan");
  // E5M2: 0x7B (57344) finite, 0x7C Inf, 0x7D NaN.
  std::vector<uint8_t> e5m2 = {0x7B, 0xFB, 0x7C, 0x7D};
  EXPECT_EQ(findNonFinite(ElementType::F8E5M2, e5m2.data(), 2), -1);
  EXPECT_EQ(findNonFinite(ElementType::F8E5M2, e5m2.data(), 4), 2);
  EXPECT_STREQ(spellNonFinite(ElementType::F8E5M2, e5m2.data(), 3), "nan");

  // Integers have no non-finite values, whatever their bits.
  std::vector<int64_t> ids = {-1, INT64_MAX};
  EXPECT_EQ(findNonFinite(ElementType::I64, ids.data(), 2), -1);
}

} // namespace
