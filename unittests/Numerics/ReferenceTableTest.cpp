//===- ReferenceTableTest.cpp - FP8 encoders against ml_dtypes ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Compares encodeE4M3 / encodeE5M2 bit for bit with a table produced by an
// independent implementation, ml_dtypes (scripts/gen_fp8_reference.py, whose
// docstring documents the file format). The table's inputs are every binary16
// value, a list of hand-picked boundaries stored in the file, and a splitmix64
// stream that this file replays exactly as the script does.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Numerics/FP8.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#ifndef MSAMP_FP8_REFERENCE_TABLE
#error                                                                         \
    "MSAMP_FP8_REFERENCE_TABLE must name unittests/Numerics/Inputs/fp8_reference.bin"
#endif

using namespace msamp::numerics;

namespace {

constexpr char kRegenerate[] = "regenerate it from the repository root with: "
                               "python3 scripts/gen_fp8_reference.py";

// Must match scripts/gen_fp8_reference.py.
constexpr uint32_t kVersion = 1;
constexpr uint32_t kHeaderSize = 48;
constexpr int64_t kUniformRange = 7340032; // 2 * max * 2^shift, both formats
constexpr int kUniformShiftE4M3 = 13;
constexpr int kUniformShiftE5M2 = 6;

float bitsToFloat(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

uint32_t floatToBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

/// Vigna's splitmix64, identical to SplitMix64 in the generator script.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

uint64_t fnv1a64(const std::vector<uint32_t> &words) {
  uint64_t hash = 0xCBF29CE484222325ull;
  for (uint32_t word : words)
    for (int byte = 0; byte < 4; ++byte) // little-endian, as the script
      hash = (hash ^ ((word >> (8 * byte)) & 0xFFu)) * 0x100000001B3ull;
  return hash;
}

struct Table {
  uint32_t numF16 = 0, numBoundary = 0, numRandomBits = 0, numUniformE4M3 = 0,
           numUniformE5M2 = 0;
  uint64_t seed = 0, generatedHash = 0;
  std::vector<uint8_t> f16Codes, boundaryCodes, generatedCodes; // pairs
  std::vector<uint32_t> boundaryInputs;
};

class Reader {
public:
  explicit Reader(const std::vector<uint8_t> &bytes) : bytes(bytes) {}
  bool has(size_t n) const { return pos + n <= bytes.size(); }
  uint32_t u32() { return static_cast<uint32_t>(take(4)); }
  uint64_t u64() { return take(8); }
  std::vector<uint8_t> raw(size_t n) {
    std::vector<uint8_t> out(bytes.begin() + pos, bytes.begin() + pos + n);
    pos += n;
    return out;
  }
  size_t remaining() const { return bytes.size() - pos; }

private:
  uint64_t take(int n) {
    uint64_t value = 0;
    for (int i = 0; i < n; ++i)
      value |= static_cast<uint64_t>(bytes[pos + i]) << (8 * i);
    pos += n;
    return value;
  }
  const std::vector<uint8_t> &bytes;
  size_t pos = 0;
};

/// Loads and validates the table; on failure records a fatal failure that
/// names the regeneration command (a missing table must not pass silently).
void loadTable(Table &table) {
  const std::string path = MSAMP_FP8_REFERENCE_TABLE;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "cannot open the FP8 reference table " << path
                         << "; " << kRegenerate;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), kHeaderSize)
      << path << " is truncated; " << kRegenerate;
  ASSERT_EQ(std::memcmp(bytes.data(), "MSAMPFP8", 8), 0)
      << path << " has a bad magic; " << kRegenerate;
  Reader r(bytes);
  r.raw(8);
  const uint32_t version = r.u32();
  ASSERT_EQ(version, kVersion) << path << ": " << kRegenerate;
  table.numF16 = r.u32();
  table.numBoundary = r.u32();
  table.numRandomBits = r.u32();
  table.numUniformE4M3 = r.u32();
  table.numUniformE5M2 = r.u32();
  table.seed = r.u64();
  table.generatedHash = r.u64();
  ASSERT_EQ(table.numF16, 65536u);
  const size_t numGenerated =
      size_t(table.numRandomBits) + table.numUniformE4M3 + table.numUniformE5M2;
  const size_t bodySize = 2 * size_t(table.numF16) +
                          6 * size_t(table.numBoundary) + 2 * numGenerated;
  ASSERT_EQ(r.remaining(), bodySize)
      << path << " does not match its header; " << kRegenerate;
  table.f16Codes = r.raw(2 * size_t(table.numF16));
  for (uint32_t i = 0; i < table.numBoundary; ++i)
    table.boundaryInputs.push_back(r.u32());
  table.boundaryCodes = r.raw(2 * size_t(table.numBoundary));
  table.generatedCodes = r.raw(2 * numGenerated);
}

/// The generated inputs, replayed exactly as generated_inputs() in the script.
std::vector<uint32_t> generatedInputs(const Table &table) {
  SplitMix64 rng{table.seed};
  std::vector<uint32_t> inputs;
  for (uint32_t i = 0; i < table.numRandomBits; ++i)
    inputs.push_back(static_cast<uint32_t>(rng.next() >> 32));
  const struct {
    uint32_t count;
    int shift;
  } uniform[] = {{table.numUniformE4M3, kUniformShiftE4M3},
                 {table.numUniformE5M2, kUniformShiftE5M2}};
  for (const auto &u : uniform) {
    for (uint32_t i = 0; i < u.count; ++i) {
      const int64_t k =
          static_cast<int64_t>(rng.next() %
                               static_cast<uint64_t>(2 * kUniformRange + 1)) -
          kUniformRange;
      // |k| < 2^23: both the conversion and the scaling are exact.
      inputs.push_back(
          floatToBits(std::ldexp(static_cast<float>(k), -u.shift)));
    }
  }
  return inputs;
}

/// Checks our encoders against `codes` (e4m3, e5m2 pairs) for `inputs`.
/// NaN inputs only need a NaN on both sides: ml_dtypes keeps the NaN's sign
/// and, for E5M2, uses 0x7E, where msamp returns the canonical 0x7F.
void checkCodes(const char *section, const std::vector<uint32_t> &inputs,
                const std::vector<uint8_t> &codes) {
  ASSERT_EQ(codes.size(), 2 * inputs.size());
  int mismatches = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float x = bitsToFloat(inputs[i]);
    const uint8_t ours[2] = {encodeE4M3(x), encodeE5M2(x)};
    const uint8_t theirs[2] = {codes[2 * i], codes[2 * i + 1]};
    for (int f = 0; f < 2; ++f) {
      const Format format = f == 0 ? Format::E4M3 : Format::E5M2;
      bool same;
      if (std::isnan(x))
        same = std::isnan(decode(format, ours[f])) &&
               std::isnan(decode(format, theirs[f]));
      else
        same = ours[f] == theirs[f];
      if (!same && ++mismatches <= 10)
        ADD_FAILURE() << section << "[" << i << "] input 0x" << std::hex
                      << inputs[i] << " (" << x << ") "
                      << (f == 0 ? "E4M3" : "E5M2") << ": msamp 0x"
                      << int(ours[f]) << ", ml_dtypes 0x" << int(theirs[f]);
    }
  }
  EXPECT_EQ(mismatches, 0) << "in section " << section;
}

TEST(ReferenceTableTest, EveryF16Value) {
  Table table;
  ASSERT_NO_FATAL_FAILURE(loadTable(table));
  std::vector<uint32_t> inputs;
  for (uint32_t bits = 0; bits < table.numF16; ++bits)
    inputs.push_back(floatToBits(decodeF16(static_cast<uint16_t>(bits))));
  checkCodes("f16", inputs, table.f16Codes);
}

TEST(ReferenceTableTest, HandPickedBoundaries) {
  Table table;
  ASSERT_NO_FATAL_FAILURE(loadTable(table));
  // The list must contain the cases docs/Numerics.md 1.2 singles out.
  const float mustHave[] = {448.0f, 464.0f,  480.0f,   57344.0f, 61440.0f, 0.0f,
                            -0.0f,  0x1p-9f, 0x1p-10f, 0x1p-16f, 0x1p-17f};
  for (float x : mustHave) {
    bool found = false;
    for (uint32_t bits : table.boundaryInputs)
      found |= bits == floatToBits(x);
    EXPECT_TRUE(found) << x;
  }
  checkCodes("boundary", table.boundaryInputs, table.boundaryCodes);
}

TEST(ReferenceTableTest, GeneratedSample) {
  Table table;
  ASSERT_NO_FATAL_FAILURE(loadTable(table));
  const std::vector<uint32_t> inputs = generatedInputs(table);
  ASSERT_EQ(fnv1a64(inputs), table.generatedHash)
      << "the C++ replay of the splitmix64 inputs differs from the script's";
  checkCodes("generated", inputs, table.generatedCodes);
}

} // namespace
