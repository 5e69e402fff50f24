//===- Status.h - Sticky error state of the runtime -------------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The runtime is built without exceptions and its kernel entry points return
// void (compiled code has nowhere to put a status), so failures are recorded
// here and read back by the caller after a step through
// msamp_rt_get_last_error(). Internally every layer returns msamp_rt_status;
// recordError() is called where the failure is detected, because that is
// where the message can name the argument and the values that were wrong.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_STATUS_H
#define MSAMP_LIB_RUNTIME_STATUS_H

#include "MSAMP/Runtime/msamp_runtime.h"

namespace msamp::runtime {

/// Records `code` with a printf-style message unless an error is already
/// recorded (the first error is the informative one; later ones are usually
/// its consequences). Returns `code` so callers can write
/// `return recordError(...)`.
msamp_rt_status recordError(msamp_rt_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

msamp_rt_status lastError();
const char *lastErrorMessage();
void clearError();

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_STATUS_H
