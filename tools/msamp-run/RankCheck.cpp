//===- RankCheck.cpp - Settings every rank must share ---------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "RankCheck.h"
#include "Group.h"

#include "MSAMP/Runtime/msamp_session.h"

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

int checkStartupSettings(RunContext &ctx) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const std::string &level = ctx.level;
  const double baseLR = ctx.baseLR;
  // mpirun's MPMD form (-np 1 A : -np 1 B), a stale cache or a typo in one
  // rank's command line would otherwise train N different models whose
  // gradients get averaged. Checked before any state is touched.
  if (group.multi()) {
    auto spellLevel = [](uint64_t v) { return "O" + std::to_string(v); };
    auto spellBool = [](uint64_t v) -> std::string { return v ? "on" : "off"; };
    auto spellData = [](uint64_t v) -> std::string {
      return v == 1 ? "--data" : v == 2 ? "--synthetic" : "no data";
    };
    // An O3 program differs per rank: compare the model it came from.
    std::string graph = msamp_session_graph_hash(session.get());
    if (ctx.sharded() && !ctx.compiledDir) {
      char modelHash[65];
      if (msamp_sha256_file(o.model.c_str(), modelHash) == MSAMP_OK)
        graph = modelHash;
    }
    std::vector<Setting> settings = {
        {"graph", hashPrefix(graph.c_str()), spellHash},
        {"level", static_cast<uint64_t>(level.size() == 2 ? level[1] - '0' : 9),
         spellLevel},
        {"world size",
         static_cast<uint64_t>(msamp_session_world_size(session.get())),
         spellInt},
        {"--steps", static_cast<uint64_t>(o.steps.value_or(-1)),
         [](uint64_t v) {
           return static_cast<int64_t>(v) < 0 ? std::string("(default)")
                                              : spellInt(v);
         }},
        {"--seed", o.seed, [](uint64_t v) { return std::to_string(v); }},
        {"lr", bitsOf(baseLR), spellDouble},
        {"--lr-schedule", o.lrSchedule == "cosine" ? 1u : 0u,
         [](uint64_t v) -> std::string { return v ? "cosine" : "constant"; }},
        {"--warmup", static_cast<uint64_t>(o.warmup), spellInt},
        {"--schedule-steps",
         static_cast<uint64_t>(o.scheduleSteps.value_or(-1)), spellInt},
        {"--clip-grad-norm", bitsOf(o.clipGradNorm.value_or(0.0)), spellDouble},
        {"--skip-nonfinite", o.skipNonFinite, spellBool},
        {"--eval", o.eval, spellBool},
        {"data source",
         o.data        ? 1u
         : o.synthetic ? 2u
                       : 0u,
         spellData},
        {"--synthetic-classes", static_cast<uint64_t>(o.syntheticClasses),
         spellInt},
        {"--resume", o.resume ? 1u : 0u, spellBool},
        // Saves and log lines end in collectives of their own.
        {"--save", o.save ? 1u : 0u, spellBool},
        {"--save-every", static_cast<uint64_t>(o.saveEvery), spellInt},
        {"--log-json", o.logJson ? 1u : 0u, spellBool},
    };
    if (int rc = checkSameOnAllRanks(settings, "at start-up"))
      return rc;
  }
  return 0;
}

int checkInitialState(RunContext &ctx) {
  SessionPtr &session = ctx.session;
  const int64_t numBatches = ctx.numBatches;
  // Identical replicas to start from, and the same data to slice.
  if (group.multi()) {
    char checksum[65];
    // At O3 each rank holds other shards: compare what all of them hold.
    msamp_session_state_checksum(session.get(),
                                 /*replicated_only=*/ctx.sharded(), checksum);
    std::vector<Setting> settings = {
        {"start step",
         static_cast<uint64_t>(msamp_session_get_step(session.get())),
         spellInt},
        {"initial state sha256", hashPrefix(checksum), spellHash},
        {"data batches K", static_cast<uint64_t>(numBatches), spellInt},
    };
    if (int rc = checkSameOnAllRanks(settings, "after initialization"))
      return rc;
  }
  return 0;
}

int checkReplicas(RunContext &ctx) {
  SessionPtr &session = ctx.session;
  const bool lead = ctx.lead;
  char checksum[65];
  // The replicated state: params, master copies, optimizer moments, the
  // step and the params' scales. Activation and output-gradient scaling
  // state records each rank's own amaxes and differs by design.
  msamp_session_state_checksum(session.get(), /*replicated_only=*/1, checksum);
  if (int rc = checkSameOnAllRanks(
          {{"final state sha256", hashPrefix(checksum), spellHash}},
          "after training (replicas are not byte-identical)"))
    return rc;
  if (lead)
    std::printf("msamp-run: replicas identical on %d rank%s (replicated state "
                "sha256 %.16s...)\n",
                group.size, group.size == 1 ? "" : "s", checksum);
  return 0;
}

} // namespace msamp::run
