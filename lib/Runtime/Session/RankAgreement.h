//===- RankAgreement.h - one refusal for every data-parallel rank -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A data-parallel step must be refused on every rank or on none: a rank that
// leaves (before the step's collectives, or before the session's agreement
// after it) leaves the others waiting in a collective. These helpers turn
// one rank's refusal, with its message, into the same refusal on all ranks,
// through msamp_rt_allreduce_f32 (the only collective the session needs).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_RANKAGREEMENT_H
#define MSAMP_LIB_RUNTIME_SESSION_RANKAGREEMENT_H

#include "Error.h"

#include <cstdint>
#include <string>

namespace msamp::session {

/// Rank `from`'s `message` on every rank (each rank passes its own; only
/// that of `from` is used), at most kMaxSharedMessageBytes bytes of it: one
/// max all-reduce with one float per byte, the other ranks adding zeros.
constexpr int64_t kMaxSharedMessageBytes = 1024;
Error shareMessageOfRank(int64_t from, const std::string &message,
                         std::string &out);

/// Every rank passes whether it refuses and why. On every rank `agreed`
/// becomes "rank R: MESSAGE" for the lowest refusing rank R, or "" when no
/// rank refuses. One all-reduce of one float, and shareMessageOfRank only
/// when some rank refuses. With one rank: `message` when refused, no
/// collective.
Error agreeOnRefusal(bool refused, const std::string &message,
                     std::string &agreed);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_RANKAGREEMENT_H
