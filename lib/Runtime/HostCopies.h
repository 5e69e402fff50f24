//===- HostCopies.h - Host copies of device-resident inputs -----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A GPU step's session buffers are device memory (docs/GPU.md "Session
// buffers in device memory"); the one piece of a step's host code that
// still reads a buffer is the packed entry point's index checks of the
// batch (msamp_rt_check_index, RuntimeABI.md 11.1). The session registers
// the host copy of each input it keeps (msamp_rt_gpu_register_host_copy),
// and the check reads that copy.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_HOSTCOPIES_H
#define MSAMP_LIB_RUNTIME_HOSTCOPIES_H

#include <cstddef>

namespace msamp::runtime {

/// The host address holding what [ptr, ptr + bytes) holds: inside a
/// registered device buffer, the same offset in its host copy; else `ptr`
/// itself (host or managed memory).
const void *hostCopyOf(const void *ptr, size_t bytes);

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_HOSTCOPIES_H
