//===- Status.cpp - Sticky error state and library-level C API ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The error functions and the small library-level entry points of
// msamp_runtime.h (version, dtype sizes). The message lives in a fixed buffer
// that is written only while no error is recorded, so the pointer handed out
// by msamp_rt_get_last_error_message() stays valid and unchanged until the
// next msamp_rt_clear_error().
//
//===----------------------------------------------------------------------===//

#include "Status.h"
#include "DType.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace msamp::runtime {
namespace {

struct ErrorState {
  std::mutex mutex;
  // Read without the lock on the fast path of lastError().
  std::atomic<int> code{MSAMP_RT_OK};
  char message[1024] = {0};
};

ErrorState &errorState() {
  // Leaked on purpose: kernel calls from static destructors of other
  // libraries must still find it.
  static ErrorState *state = new ErrorState();
  return *state;
}

} // namespace

msamp_rt_status recordError(msamp_rt_status code, const char *fmt, ...) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.code.load(std::memory_order_relaxed) != MSAMP_RT_OK)
    return code;
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(state.message, sizeof(state.message), fmt, args);
  va_end(args);
  state.code.store(code, std::memory_order_release);
  return code;
}

msamp_rt_status lastError() {
  return static_cast<msamp_rt_status>(
      errorState().code.load(std::memory_order_acquire));
}

const char *lastErrorMessage() {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.code.load(std::memory_order_relaxed) == MSAMP_RT_OK
             ? ""
             : state.message;
}

void clearError() {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.message[0] = '\0';
  state.code.store(MSAMP_RT_OK, std::memory_order_release);
}

} // namespace msamp::runtime

using namespace msamp::runtime;

extern "C" {

MSAMP_RT_EXPORT int32_t msamp_rt_abi_version(void) {
  return MSAMP_RT_ABI_VERSION;
}

MSAMP_RT_EXPORT msamp_rt_status msamp_rt_get_last_error(void) {
  return lastError();
}

MSAMP_RT_EXPORT const char *msamp_rt_get_last_error_message(void) {
  return lastErrorMessage();
}

MSAMP_RT_EXPORT void msamp_rt_clear_error(void) { clearError(); }

MSAMP_RT_EXPORT int32_t msamp_rt_dtype_size(int32_t dtype) {
  return dtypeSize(dtype);
}

} // extern "C"
