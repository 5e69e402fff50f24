//===- IndexChecks.h - Index checks read after the step ---------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A GPU step must not wait inside (docs/GPU.md "No managed memory, every
// step a CUDA graph"), so msamp_rt_check_computed_index cannot read its
// indices on the host there. Between msamp_rt_index_checks_begin and _end
// (the session, around a step in device memory) the calls of this thread
// are deferred: the k-th call of the step gets slot k of the record, the
// check runs on the stream (the CUDA plugin's checkIndex) or, without a
// CUDA backend (host emulation, the session tests' fake device), on the
// host into the same slots, and the host keeps what the message needs
// (site text, shape, bounds). _end reads the slots after the step's wait
// and records the error of the first failing call in step order, exactly
// the message the immediate check gives.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_INDEXCHECKS_H
#define MSAMP_LIB_RUNTIME_INDEXCHECKS_H

#include "MemRefView.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <string>

namespace msamp::runtime {

/// Records the message of element `linear` of `view` (its sizes and rank
/// give the coordinates) holding `value`, outside [lower, upper):
/// "FN: WHAT: value V at [coords] is outside the valid range [lower,
/// upper)", with the ignore_index when `hasIgnore`. Returns its code.
msamp_rt_status recordIndexError(const char *fn, const char *what,
                                 const int64_t *sizes, int64_t rank,
                                 int64_t linear, int64_t value, int64_t lower,
                                 int64_t upper, int64_t ignoreIndex,
                                 int32_t hasIgnore);

/// Whether this thread's computed-index checks are deferred now; if so,
/// takes the check (`what` is its "index computed at SITE" text) and
/// returns true.
bool deferComputedIndexCheck(const char *fn, const std::string &what,
                             const View &ids, int32_t dtype, int64_t upper,
                             int64_t ignoreIndex, int32_t hasIgnore);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_INDEXCHECKS_H
