//===- SessionTensors.cpp - Copies of a session's tensors in and out ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The C API's access to single tensors (msamp_session_read_tensor,
// msamp_session_write_tensor, msamp_tensor_info's data). A GPU step's
// buffers are device memory: the host copy of a state tensor or metric is
// read from the device when asked for, an input's host copy is the source
// every step sends (docs/GPU.md "Session buffers in device memory").
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include <cstring>

namespace msamp::session {

/// The state tensor or input `name` for a copy of `numBytes`.
static Error findSized(const Session &session, const char *what,
                       const std::string &name, int64_t numBytes,
                       TensorBuffer *&buffer) {
  buffer = session.findState(name);
  if (!buffer)
    buffer = session.findInput(name);
  if (!buffer)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 std::string(what) + ": no state or input named '" + name +
                     "'");
  if (numBytes != buffer->spec().numBytes)
    return Error(MSAMP_ERROR_MISMATCH,
                 std::string(what) + ": '" + name + "' has " +
                     std::to_string(buffer->spec().numBytes) +
                     " bytes, the caller's buffer " + std::to_string(numBytes));
  return Error::success();
}

Error Session::refreshHostCopy(const TensorBuffer &buffer) const {
  for (const auto &input : inputs_)
    if (input.get() == &buffer)
      return Error::success();
  return buffer.download();
}

Error Session::readTensor(const std::string &name, void *out,
                          int64_t numBytes) const {
  TensorBuffer *buffer = nullptr;
  if (Error e =
          findSized(*this, "msamp_session_read_tensor", name, numBytes, buffer))
    return e;
  if (Error e = refreshHostCopy(*buffer))
    return e;
  if (numBytes)
    std::memcpy(out, buffer->data(), static_cast<size_t>(numBytes));
  return Error::success();
}

Error Session::writeTensor(const std::string &name, const void *data,
                           int64_t numBytes) {
  TensorBuffer *buffer = nullptr;
  if (Error e = findSized(*this, "msamp_session_write_tensor", name, numBytes,
                          buffer))
    return e;
  if (numBytes)
    std::memcpy(buffer->data(), data, static_cast<size_t>(numBytes));
  return buffer->upload();
}

} // namespace msamp::session
