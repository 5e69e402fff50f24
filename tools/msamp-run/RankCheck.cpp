//===- RankCheck.cpp - Settings every rank must share ---------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "RankCheck.h"
#include "Group.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace msamp::run {

uint64_t bitsOf(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

uint64_t hashPrefix(const std::string &hex) {
  size_t colon = hex.find(':');
  std::string digits = hex.substr(colon == std::string::npos ? 0 : colon + 1);
  return std::strtoull(digits.substr(0, 16).c_str(), nullptr, 16);
}

std::string spellHash(uint64_t v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%016llx...",
                static_cast<unsigned long long>(v));
  return buffer;
}

std::string spellDouble(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

std::string spellInt(uint64_t v) {
  return std::to_string(static_cast<int64_t>(v));
}

/// Compares `settings` with rank 0's on every rank. Each 64-bit value
/// travels as four 16-bit pieces, exact in f32; rank 0's pieces reach
/// everyone through a sum all-reduce to which the others add zeros. A rank
/// that differs names both values ("rank 0 runs level O1, rank 1 runs level
/// O2"); then every rank stops with `code`.
int checkSameOnAllRanks(const std::vector<Setting> &settings,
                        const std::string &context) {
  if (!group.multi())
    return 0;
  std::vector<float> pieces(settings.size() * 4, 0.0f);
  if (group.rank == 0)
    for (size_t i = 0; i < settings.size(); ++i)
      for (int k = 0; k < 4; ++k)
        pieces[i * 4 + k] =
            static_cast<float>((settings[i].value >> (16 * k)) & 0xffff);
  hostAllReduce(pieces.data(), static_cast<int64_t>(pieces.size()), 0);
  std::string message;
  for (size_t i = 0; i < settings.size(); ++i) {
    uint64_t theirs = 0;
    for (int k = 0; k < 4; ++k)
      theirs |= static_cast<uint64_t>(pieces[i * 4 + k]) << (16 * k);
    const Setting &s = settings[i];
    if (theirs != s.value)
      message += (message.empty() ? "" : "; ") + std::string("rank 0 has ") +
                 s.what + " " + s.spell(theirs) + ", rank " +
                 std::to_string(group.rank) + " has " + s.what + " " +
                 s.spell(s.value);
  }
  return agree(message.empty() ? 0 : kRunError,
               "the ranks disagree " + context + ": " + message);
}

} // namespace msamp::run
