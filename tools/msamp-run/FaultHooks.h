//===- FaultHooks.h - Test hooks that kill or hang a rank -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The fault tests of the data-parallel runs need a rank that dies or hangs
// at a chosen step; environment variables ask for it.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_FAULTHOOKS_H
#define MSAMP_TOOLS_MSAMP_RUN_FAULTHOOKS_H

#include <cstdint>

namespace msamp::run {

/// Test hooks for the fault tests
/// (test/Tools/msamp-run/DataParallel/faults.test): MSAMP_TEST_EXIT_AT_STEP=k
/// makes rank $MSAMP_TEST_FAULT_RANK (default the last) die by SIGKILL when it
/// starts step k, as a crashed node would; MSAMP_TEST_HANG_AT_STEP=k makes it
/// stop responding instead, which only the collective watchdog can end.
void testFaultHook(int64_t step);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_FAULTHOOKS_H
