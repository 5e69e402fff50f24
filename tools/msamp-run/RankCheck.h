//===- RankCheck.h - Settings every rank must share -------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Under mpirun every rank must run the same program the same way; a value
// that differs on one rank is named with both spellings, and every rank
// stops.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_RANKCHECK_H
#define MSAMP_TOOLS_MSAMP_RUN_RANKCHECK_H

#include "RunContext.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace msamp::run {

/// One value every rank must agree on at start-up, with its spelling for
/// the message.
struct Setting {
  std::string what; // "level", "--seed", ...
  uint64_t value;
  std::function<std::string(uint64_t)> spell;
};

/// The bits of `v`, to compare doubles exactly.
uint64_t bitsOf(double v);

/// The first 64 bits of a hex digest ("sha256:" prefix allowed).
uint64_t hashPrefix(const std::string &hex);

/// Spellings of a Setting's value for the messages.
std::string spellHash(uint64_t v);
std::string spellDouble(uint64_t bits);
std::string spellInt(uint64_t v);

/// Compares `settings` with rank 0's on every rank. Each 64-bit value
/// travels as four 16-bit pieces, exact in f32; rank 0's pieces reach
/// everyone through a sum all-reduce to which the others add zeros. A rank
/// that differs names both values ("rank 0 runs level O1, rank 1 runs level
/// O2"); then every rank stops with `code`.
int checkSameOnAllRanks(const std::vector<Setting> &settings,
                        const std::string &context);

/// The start-up check: every rank runs the same program (graph, level,
/// world size) with the same options.
int checkStartupSettings(RunContext &ctx);

/// After initialization: the same start step, initial state and data.
int checkInitialState(RunContext &ctx);

/// --check-replicas: the data-parallel invariant, byte for byte: the
/// replicated state is identical on every rank after training.
int checkReplicas(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_RANKCHECK_H
