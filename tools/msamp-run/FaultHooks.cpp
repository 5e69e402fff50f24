//===- FaultHooks.cpp - Test hooks that kill or hang a rank ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "FaultHooks.h"
#include "Group.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace msamp::run {

void testFaultHook(int64_t step) {
  static const char *exitAt = std::getenv("MSAMP_TEST_EXIT_AT_STEP");
  static const char *hangAt = std::getenv("MSAMP_TEST_HANG_AT_STEP");
  if (!exitAt && !hangAt)
    return;
  const char *rankVar = std::getenv("MSAMP_TEST_FAULT_RANK");
  int faultRank = rankVar ? std::atoi(rankVar) : group.size - 1;
  if (group.rank != faultRank)
    return;
  if (exitAt && std::atoll(exitAt) == step) {
    std::fprintf(stderr, "msamp-run: test hook: rank %d dies at step %lld\n",
                 group.rank, static_cast<long long>(step));
    std::fflush(stderr);
    raise(SIGKILL);
  }
  if (hangAt && std::atoll(hangAt) == step) {
    std::fprintf(stderr, "msamp-run: test hook: rank %d hangs at step %lld\n",
                 group.rank, static_cast<long long>(step));
    std::fflush(stderr);
    for (;;)
      pause();
  }
}

} // namespace msamp::run
