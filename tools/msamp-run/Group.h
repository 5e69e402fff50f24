//===- Group.h - msamp-run's place in the data-parallel group ---*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Exit codes, the rank and size of this process in the launcher's group,
// and the agreement by which every rank takes the same path out of a
// failure (docs/RuntimeABI.md 12).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_GROUP_H
#define MSAMP_TOOLS_MSAMP_RUN_GROUP_H

#include <cstdint>
#include <string>

namespace msamp::run {

/// Exit codes: 1 for a failed run, 2 for a bad command line.
constexpr int kRunError = 1;
constexpr int kUsageError = 2;

/// This process's place in the data-parallel group (rank 0 of 1 until
/// msamp_rt_distributed_init joined a launcher's group).
struct Group {
  int rank = 0;
  int size = 1;
  bool joined = false; // msamp_rt_distributed_init succeeded
  bool agreed = false; // the failure being returned is every rank's
  bool multi() const { return size > 1; }
};
extern Group group;

/// Prints `message` as msamp-run's error (with the rank when there are
/// several) and returns `code`.
int fail(int code, const std::string &message);

/// An all-reduce msamp-run itself needs; a failure here means the group is
/// broken, so stop every rank.
void hostAllReduce(float *values, int64_t n, int32_t op);

/// Turns this rank's outcome (0 or an exit code with its message) of an
/// action every rank takes into one outcome for all: 0 when every rank
/// succeeded, else the largest code, on every rank. Rank 0's message is
/// printed once; when rank 0 succeeded, each failing rank prints its own.
int agree(int code, const std::string &message);

/// The loss of this step averaged over the ranks (the sum of every rank's
/// loss, combined in rank order, divided by N): what one rank with the
/// union of the batches would report. Non-finite when any rank's is.
float meanOverRanks(float loss);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_GROUP_H
