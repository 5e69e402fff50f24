//===- Error.cpp - Message helpers of the session library -----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Error.h"

#include <cstring>

namespace msamp::session {

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string systemError(int errnum) {
  char buffer[256];
  // GNU strerror_r may return a static string instead of filling `buffer`.
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(errnum, buffer, sizeof(buffer));
#else
  if (strerror_r(errnum, buffer, sizeof(buffer)) != 0)
    return "error " + std::to_string(errnum);
  return buffer;
#endif
}

std::string runtimeFailure(msamp_rt_status status) {
  if (status == MSAMP_RT_OK)
    return "";
  std::string message = msamp_rt_get_last_error_message();
  msamp_rt_clear_error();
  return message.empty() ? "error " + std::to_string(status) : message;
}

} // namespace msamp::session
