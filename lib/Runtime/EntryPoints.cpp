//===- EntryPoints.cpp - msamp_runtime.h against the entry-point list -----===//
//
// The compiler declares every kernel entry point from
// MSAMP_RT_ENTRY_POINT_LIST (msamp_entry_points.h), the functions the
// packed entry point calls from MSAMP_RT_HOST_ENTRY_POINT_LIST, and renames
// the host calls of GPU-compiled steps from MSAMP_RT_GPU_HOST_LIST
// (msamp_gpu_host.h); the runtime defines them against their documented
// prototypes in msamp_runtime.h and msamp_gpu_host.h. This file holds no code:
// it makes the runtime's build fail when a prototype's types and the list's
// differ in number, order or type, so that compiled steps and the runtime
// cannot disagree on a call. (A definition that differs from its extern "C"
// prototype does not compile either.)
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include <type_traits>

#define MSAMP_RT_CHECK_ENTRY_POINT_(Name, symbol, ...)                         \
  static_assert(                                                               \
      std::is_same_v<decltype(&_mlir_ciface_##symbol), void (*)(__VA_ARGS__)>, \
      "_mlir_ciface_" #symbol " in msamp_runtime.h does not match "            \
      "its parameters in msamp_entry_points.h");
MSAMP_RT_ENTRY_POINT_LIST(MSAMP_RT_CHECK_ENTRY_POINT_)
#undef MSAMP_RT_CHECK_ENTRY_POINT_

#define MSAMP_RT_CHECK_HOST_ENTRY_POINT_(Name, symbol, Result, ...)            \
  static_assert(std::is_same_v<decltype(&symbol), Result (*)(__VA_ARGS__)>,    \
                #symbol " does not match msamp_entry_points.h");
MSAMP_RT_HOST_ENTRY_POINT_LIST(MSAMP_RT_CHECK_HOST_ENTRY_POINT_)
#undef MSAMP_RT_CHECK_HOST_ENTRY_POINT_

#define MSAMP_RT_CHECK_GPU_HOST_(upstream, symbol, Result, ...)                \
  static_assert(std::is_same_v<decltype(&symbol), Result (*)(__VA_ARGS__)>,    \
                #symbol " in msamp_gpu_host.h does not match "                 \
                        "MSAMP_RT_GPU_HOST_LIST");
MSAMP_RT_GPU_HOST_LIST(MSAMP_RT_CHECK_GPU_HOST_)
#undef MSAMP_RT_CHECK_GPU_HOST_
