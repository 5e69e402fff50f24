//===- Error.h - Status values of the session library -----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Every internal function of libmsamp_session returns an Error: a status code
// of msamp_session.h plus the message the user will read. The message is
// built where the failure is detected, because only there can it name the
// file, the tensor and the expected and found values. The C boundary
// (CApi.cpp) turns it into a return code and a thread-local message.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_ERROR_H
#define MSAMP_LIB_RUNTIME_SESSION_ERROR_H

#include "MSAMP/Runtime/msamp_runtime.h"
#include "MSAMP/Runtime/msamp_session.h"

#include <cstdint>
#include <string>
#include <vector>

namespace msamp::session {

class [[nodiscard]] Error {
public:
  Error() = default;
  Error(msamp_status code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Error success() { return Error(); }

  /// True when this is a failure, so that `if (Error e = f()) return e;`
  /// reads naturally.
  explicit operator bool() const { return code_ != MSAMP_OK; }

  msamp_status code() const { return code_; }
  const std::string &message() const { return message_; }

  /// Prefixes the message with `context: `.
  Error &withContext(const std::string &context) {
    message_ = context + ": " + message_;
    return *this;
  }

private:
  msamp_status code_ = MSAMP_OK;
  std::string message_;
};

/// "[4, 3]"; "[]" for a 0-d tensor.
std::string shapeToString(const std::vector<int64_t> &shape);

/// strerror(errnum) as a std::string.
std::string systemError(int errnum);

/// "" for MSAMP_RT_OK; else the runtime's last error message (cleared), or
/// "error N" when it left none: what the session's device wrappers
/// (BufferDevice, StepGraph) report for a failed runtime call.
std::string runtimeFailure(msamp_rt_status status);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_ERROR_H
