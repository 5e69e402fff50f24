//===- SafeTensorsTest.cpp - safetensors reader and writer ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Round trips of every dtype msamp writes, the byte layout other readers rely
// on (header length, space padding, aligned data), and one test per way a
// file can be malformed: each must be an error naming the file and the
// problem, never a crash or an out-of-bounds read. Interoperability with the
// `safetensors` Python package is tested by the msamp-run lit tests.
//
//===----------------------------------------------------------------------===//

#include "SafeTensors.h"
#include "TestUtils.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace msamp::session;
using namespace msamp_session_test;

namespace {

/// A file image from a header text and the data bytes.
std::vector<uint8_t> image(const std::string &header,
                           const std::vector<uint8_t> &data = {}) {
  std::vector<uint8_t> bytes(8 + header.size() + data.size());
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  if (!data.empty())
    std::memcpy(bytes.data() + 8 + header.size(), data.data(), data.size());
  return bytes;
}

Error parseImage(const std::vector<uint8_t> &bytes,
                 std::unique_ptr<SafeTensorsReader> &out) {
  return SafeTensorsReader::parse(bytes.data(), bytes.size(),
                                  "test.safetensors", out);
}

/// Expects `bytes` to be rejected as malformed with `fragment` in the message.
void expectMalformed(const std::vector<uint8_t> &bytes,
                     const std::string &fragment) {
  std::unique_ptr<SafeTensorsReader> reader;
  Error e = parseImage(bytes, reader);
  ASSERT_TRUE(e) << "accepted a malformed file; expected: " << fragment;
  EXPECT_EQ(e.code(), MSAMP_ERROR_FORMAT);
  EXPECT_NE(e.message().find("test.safetensors"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find(fragment), std::string::npos) << e.message();
}

TEST(SafeTensorsTest, RoundTripEveryDtype) {
  TempDir dir;
  const float f32[6] = {1.0f, -2.5f, 3.25f, 0.0f, -0.0f, 1e-30f};
  const uint16_t f16[3] = {0x3C00, 0xC000, 0x7BFF};
  const uint16_t bf16[2] = {0x3F80, 0xFF80};
  const uint8_t e4m3[5] = {0x00, 0x7E, 0xFE, 0x7F, 0x38};
  const uint8_t e5m2[1] = {0x7B};
  const int64_t i64[2] = {-1, INT64_MAX};
  const int32_t i32[1] = {42};
  const uint8_t u8[3] = {1, 2, 255};
  std::vector<TensorToWrite> tensors = {
      {"w.f32", ElementType::F32, {2, 3}, f32, sizeof(f32)},
      {"h.f16", ElementType::F16, {3}, f16, sizeof(f16)},
      {"b.bf16", ElementType::BF16, {1, 2}, bf16, sizeof(bf16)},
      {"m.e4m3", ElementType::F8E4M3FN, {5}, e4m3, sizeof(e4m3)},
      {"g.e5m2", ElementType::F8E5M2, {}, e5m2, sizeof(e5m2)},
      {"step", ElementType::I64, {2}, i64, sizeof(i64)},
      {"c.i32", ElementType::I32, {1, 1, 1}, i32, sizeof(i32)},
      {"bytes", ElementType::U8, {3}, u8, sizeof(u8)},
      {"empty", ElementType::F32, {0, 4}, nullptr, 0},
  };
  std::map<std::string, std::string> metadata = {{"level", "O2"},
                                                 {"graph_hash", "sha256:00"}};
  const std::string path = dir.file("rt.safetensors");
  ASSERT_FALSE(writeSafeTensors(path, tensors, metadata));
  EXPECT_FALSE(exists(path + ".tmp"));

  std::unique_ptr<SafeTensorsReader> reader;
  Error e = SafeTensorsReader::open(path, reader);
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(reader->metadata(), metadata);
  ASSERT_EQ(reader->tensors().size(), tensors.size());
  for (const TensorToWrite &w : tensors) {
    const SafeTensor *t = reader->find(w.name);
    ASSERT_NE(t, nullptr) << w.name;
    EXPECT_EQ(t->dtype, w.dtype) << w.name;
    EXPECT_EQ(t->shape, w.shape) << w.name;
    ASSERT_EQ(t->numBytes, w.numBytes) << w.name;
    if (w.numBytes)
      EXPECT_EQ(std::memcmp(t->data, w.data, w.numBytes), 0) << w.name;
  }
  EXPECT_EQ(reader->find("absent"), nullptr);
}

TEST(SafeTensorsTest, LayoutIsAlignedAndDeterministic) {
  const uint8_t one[1] = {7};
  const int64_t eight[1] = {-3};
  const float four[2] = {1, 2};
  std::vector<TensorToWrite> tensors = {
      {"a", ElementType::U8, {1}, one, 1},
      {"b", ElementType::F32, {2}, four, 8},
      {"c", ElementType::I64, {1}, eight, 8},
  };
  std::vector<uint8_t> first, second;
  ASSERT_FALSE(serializeSafeTensors(tensors, {{"k", "v"}}, first));
  ASSERT_FALSE(serializeSafeTensors(tensors, {{"k", "v"}}, second));
  EXPECT_EQ(first, second);

  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | first[i];
  // The data starts at a multiple of 8 and the padding is spaces.
  EXPECT_EQ((8 + headerSize) % 8, 0u);
  EXPECT_EQ(first[8], '{');
  EXPECT_TRUE(first[8 + headerSize - 1] == '}' ||
              first[8 + headerSize - 1] == ' ');
  // Larger elements first: every tensor is naturally aligned.
  std::unique_ptr<SafeTensorsReader> reader;
  ASSERT_FALSE(
      SafeTensorsReader::parse(first.data(), first.size(), "mem", reader));
  const uint8_t *base = first.data() + 8 + headerSize;
  for (const SafeTensor &t : reader->tensors()) {
    size_t offset = static_cast<size_t>(t.data - base);
    EXPECT_EQ(offset % elementSize(t.dtype), 0u) << t.name;
  }
  // I64 first, then F32, then U8 (reader order is data order).
  ASSERT_EQ(reader->tensors().size(), 3u);
  EXPECT_EQ(reader->tensors()[0].name, "c");
  EXPECT_EQ(reader->tensors()[1].name, "b");
  EXPECT_EQ(reader->tensors()[2].name, "a");
}

TEST(SafeTensorsTest, WriterRefusesBadTensors) {
  const float x[2] = {1, 2};
  std::vector<uint8_t> bytes;
  Error e = serializeSafeTensors({{"x", ElementType::F32, {3}, x, sizeof(x)}},
                                 {}, bytes);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("'x'"), std::string::npos) << e.message();
  e = serializeSafeTensors({{"x", ElementType::F32, {2}, x, sizeof(x)},
                            {"x", ElementType::F32, {2}, x, sizeof(x)}},
                           {}, bytes);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("twice"), std::string::npos) << e.message();
  e = serializeSafeTensors(
      {{"__metadata__", ElementType::F32, {2}, x, sizeof(x)}}, {}, bytes);
  EXPECT_TRUE(e);
}

TEST(SafeTensorsTest, AcceptsWhatTheReferenceWriterProduces) {
  // Byte for byte what safetensors.numpy.save_file({"x": np.array([1, 2],
  // np.float32)}) writes: compact JSON padded with spaces to 8 bytes.
  std::string header =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> data(8);
  const float values[2] = {1.0f, 2.0f};
  std::memcpy(data.data(), values, 8);
  std::unique_ptr<SafeTensorsReader> reader;
  Error e = parseImage(image(header, data), reader);
  ASSERT_FALSE(e) << e.message();
  ASSERT_NE(reader->find("x"), nullptr);
  EXPECT_EQ(reinterpret_cast<const float *>(reader->find("x")->data)[1], 2.0f);
  EXPECT_TRUE(reader->metadata().empty());
}

TEST(SafeTensorsTest, MalformedFiles) {
  const std::string ok =
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::vector<uint8_t> eight(8, 0);

  expectMalformed({1, 2, 3}, "fewer than the 8-byte header length");
  {
    std::vector<uint8_t> truncated = image(ok, eight);
    truncated.resize(20);
    expectMalformed(truncated, "runs past the end of the file");
  }
  {
    std::vector<uint8_t> huge = image("{}");
    huge[4] = 0x10; // 2^36 bytes
    expectMalformed(huge, "exceeds the format's limit");
  }
  expectMalformed(image(""), "not a JSON object");
  expectMalformed(image("[1, 2]"), "not a JSON object");
  expectMalformed(image("{\"x\": "), "not valid JSON");
  expectMalformed(image(R"({"x": 3})"),
                  "tensor 'x': entry is not a JSON object");
  expectMalformed(image(R"({"x":{"shape":[2],"data_offsets":[0,8]}})", eight),
                  "missing string \"dtype\"");
  expectMalformed(
      image(R"({"x":{"dtype":"F9","shape":[2],"data_offsets":[0,8]}})", eight),
      "unknown dtype 'F9'");
  expectMalformed(image(R"({"x":{"dtype":"F32","data_offsets":[0,8]}})", eight),
                  "missing array \"shape\"");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
            eight),
      "not a non-negative integer");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})",
            eight),
      "not a non-negative integer");
  expectMalformed(image(R"({"x":{"dtype":"F32","shape":[2]}})", eight),
                  "\"data_offsets\" must be [BEGIN, END]");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight),
      "end before they begin");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight),
      "hold 8 bytes, but shape [3] of F32 needs 12");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
            eight),
      "run past the end of the data (8 bytes)");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
            eight),
      "overlaps");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight),
      "bytes 0..4 of the data belong to no tensor");
  expectMalformed(image(ok, std::vector<uint8_t>(12, 0)),
                  "bytes 8..12 of the data belong to no tensor");
  expectMalformed(image(R"({"__metadata__":{"a":1}})"),
                  "__metadata__ value 'a' is not a string");
  expectMalformed(image(R"({"__metadata__":[1]})"),
                  "__metadata__ is not a JSON object");
  expectMalformed(
      image(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],)"
            R"("data_offsets":[0,8]}})",
            eight),
      "too large");
}

TEST(SafeTensorsTest, OpenReportsFileErrors) {
  TempDir dir;
  std::unique_ptr<SafeTensorsReader> reader;
  Error e = SafeTensorsReader::open(dir.file("missing.safetensors"), reader);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_IO);
  EXPECT_NE(e.message().find("missing.safetensors"), std::string::npos);
  EXPECT_NE(e.message().find("No such file"), std::string::npos) << e.message();

  e = SafeTensorsReader::open(dir.file(""), reader);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("is a directory"), std::string::npos)
      << e.message();

  writeText(dir.file("short.safetensors"), "abc");
  e = SafeTensorsReader::open(dir.file("short.safetensors"), reader);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_FORMAT);
  EXPECT_NE(e.message().find("short.safetensors"), std::string::npos);
}

} // namespace
