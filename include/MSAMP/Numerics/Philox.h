//===- Philox.h - Philox4x32-10 and the dropout stream ----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The single definition of the random numbers of a compiled train step
// (docs/Interfaces.md 1, docs/Randomness.md): Philox4x32-10, the counter-based
// generator of Salmon, Moraes, Dror and Shaw, "Parallel Random Numbers: As
// Easy as 1, 2, 3" (SC'11), implemented here from the paper's description:
// ten rounds of two 32x32->64 multiplications whose halves are mixed into
// the four counter words, the 64-bit key bumped by the Weyl constants
// between rounds.
//
// How the step keys it (`msamp.random_uniform`, lowered by
// --msamp-lower-random-uniform to the same integer arithmetic inline, so
// the CPU and GPU targets compute identical bits):
//
//   key     = (seed low 32 bits, seed high 32 bits)       rng.seed state
//   counter = (element index, op id, step low 32, rank)
//
// where `step` is the number of completed steps before this one (the step
// counter state), `op id` the op's stable id in the graph and `element
// index` the row-major linear index in the result. Words 0 and 1 of the
// output form 64 random bits (word 0 high); the uniform number in [0, 1) is
// their top 53 bits times 2^-53, exact in f64.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_NUMERICS_PHILOX_H
#define MSAMP_NUMERICS_PHILOX_H

#include <cstdint>

#if defined(__CUDACC__)
#define MSAMP_PHILOX_HD __host__ __device__
#else
#define MSAMP_PHILOX_HD
#endif

namespace msamp::numerics {

/// Multipliers of the two S-boxes and the Weyl key increments (the paper's
/// Philox4x32 constants).
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

struct Philox4x32 {
  uint32_t v[4];
};

/// One round: (c0, c1, c2, c3) -> (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
/// with hi0:lo0 = M0 * c0 and hi1:lo1 = M1 * c2.
MSAMP_PHILOX_HD inline Philox4x32 philoxRound(Philox4x32 c, uint32_t k0,
                                              uint32_t k1) {
  uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c.v[0];
  uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c.v[2];
  Philox4x32 out;
  out.v[0] = static_cast<uint32_t>(p1 >> 32) ^ c.v[1] ^ k0;
  out.v[1] = static_cast<uint32_t>(p1);
  out.v[2] = static_cast<uint32_t>(p0 >> 32) ^ c.v[3] ^ k1;
  out.v[3] = static_cast<uint32_t>(p0);
  return out;
}

/// Philox4x32-10 of `counter` under the key (k0, k1).
MSAMP_PHILOX_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, uint32_t k0,
                                                uint32_t k1) {
  for (int r = 0; r < kPhiloxRounds; ++r) {
    if (r > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    counter = philoxRound(counter, k0, k1);
  }
  return counter;
}

/// The 64 random bits of element `index` of random op `opId` at `step` on
/// `rank`, under `seed` (the keying above).
MSAMP_PHILOX_HD inline uint64_t randomBits(uint64_t seed, uint64_t step,
                                           uint32_t rank, uint32_t opId,
                                           uint32_t index) {
  Philox4x32 c = {{index, opId, static_cast<uint32_t>(step), rank}};
  Philox4x32 r = philox4x32_10(c, static_cast<uint32_t>(seed),
                               static_cast<uint32_t>(seed >> 32));
  return (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
}

/// The uniform number in [low, high) of that element, as the step computes
/// it: the top 53 of the 64 bits times 2^-53 (exact in f64, never 1.0),
/// then scaled to the interval unless it is [0, 1).
MSAMP_PHILOX_HD inline double randomUniform(uint64_t seed, uint64_t step,
                                            uint32_t rank, uint32_t opId,
                                            uint32_t index, double low = 0.0,
                                            double high = 1.0) {
  const double twoPowMinus53 = 1.1102230246251565404e-16; // 2^-53
  double u =
      static_cast<double>(randomBits(seed, step, rank, opId, index) >> 11) *
      twoPowMinus53;
  if (low == 0.0 && high == 1.0)
    return u;
  return u * (high - low) + low;
}

} // namespace msamp::numerics

#endif // MSAMP_NUMERICS_PHILOX_H
