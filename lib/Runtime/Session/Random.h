//===- Random.h - Seeded, platform-independent random streams ---*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The generators behind "normal(MEAN,STD)" initialization and synthetic
// batches. Requirements: the same seed gives the same bits on every machine
// and standard library (so std::mt19937 + std::normal_distribution, whose
// algorithm is implementation-defined, is out), and a tensor's values depend
// only on the seed and the tensor's name, not on the order or number of other
// tensors.
//
//   stream(seed, name) = splitmix64 seeded with seed ^ FNV-1a-64(name)
//   uniform in (0, 1)  = ((next() >> 11) + 0.5) * 2^-53   (never 0 or 1)
//   normal pair        = Box-Muller in double: r = sqrt(-2 ln u1),
//                        z0 = r cos(2 pi u2), z1 = r sin(2 pi u2)
//
// The integer parts are exact everywhere; log, cos and sin come from the C
// library, so the double result may differ by an ulp between libms, which
// changes the f32 value that is finally stored only in the rare case where
// the double lies within an ulp of an f32 rounding boundary.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_RANDOM_H
#define MSAMP_LIB_RUNTIME_SESSION_RANDOM_H

#include <cmath>
#include <cstdint>
#include <string_view>

namespace msamp::session {

inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Vigna's splitmix64: a full-period 64-bit generator with good statistical
/// quality for this purpose and a three-line, portable definition.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Uniform in the open interval (0, 1), 53 bits.
  double uniform() {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }

  /// Uniform integer in [0, n), n > 0, without modulo bias (rejection).
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
      x = next();
    while (x >= limit);
    return x % n;
  }

private:
  uint64_t state_;
};

/// Standard normal values from a SplitMix64 stream, Box-Muller in double,
/// both values of each pair used (cosine first).
class NormalStream {
public:
  explicit NormalStream(uint64_t seed) : rng_(seed) {}

  double next() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    const double u1 = rng_.uniform(), u2 = rng_.uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 6.283185307179586476925286766559 * u2;
    spare_ = r * std::sin(theta);
    hasSpare_ = true;
    return r * std::cos(theta);
  }

private:
  SplitMix64 rng_;
  double spare_ = 0.0;
  bool hasSpare_ = false;
};

/// The seed of the stream of tensor `name`.
inline uint64_t streamSeed(uint64_t seed, std::string_view name) {
  return seed ^ fnv1a64(name);
}

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_RANDOM_H
