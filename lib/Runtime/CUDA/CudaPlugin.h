//===- CudaPlugin.h - Runtime <-> CUDA plugin contract ----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA backend is a separate shared library, libmsamp_runtime_cuda.so,
// that libmsamp_runtime.so opens with dlopen the first time backend "cuda" is
// selected (CudaBackendLoader.cpp). Only the plugin links cudart and
// cuBLASLt (and dlopens NCCL for a multi-rank job), so a compiled step or
// msamp-run linked against the runtime starts on a machine without a driver, or
// without CUDA installed at all, and fails only when "cuda" is asked for.
//
// The two libraries share the C++ Backend/Collective interfaces (Backend.h,
// Collective.h) from one source tree, but the runtime is built with hidden
// visibility, so the plugin cannot call into it by symbol. What the plugin
// needs from the runtime — the one sticky error state and the collective
// slot — is handed over as the function table below when the plugin's entry
// point is called. This header names no CUDA type: the loader that includes
// it is compiled into the CPU-only runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_CUDAPLUGIN_H
#define MSAMP_LIB_RUNTIME_CUDA_CUDAPLUGIN_H

#include "../Backend.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdint>

namespace msamp::runtime {

class Collective;

/// Bumped whenever CudaPluginHost or the entry point's meaning changes.
/// 2: AdamParams::mode1 (it fits in the struct's padding, so the layout
/// fingerprint below does not see it). 3: Backend::scaleUpdate (a new
/// virtual: the vtable's layout changed). 4: ScaleUpdateParams' fused
/// quantize (msamp_rt_quantize_scale_update).
constexpr uint32_t kCudaPluginVersion = 4;

/// A fingerprint of the parameter structs of Backend.h. The loader refuses a
/// plugin built from a different Backend.h (a stale libmsamp_runtime_cuda.so
/// next to a rebuilt runtime would otherwise read the structs with the wrong
/// layout). It is a weighted sum of sizes, not a hash: it catches added or
/// removed fields, which is what drifts in practice.
constexpr uint64_t cudaPluginLayoutFingerprint() {
  return sizeof(TensorRef) + 3 * sizeof(ComputeScaleParams) +
         5 * sizeof(GemmParams) + 7 * sizeof(AllReduceParams) +
         11 * sizeof(AdamParams) + 13 * sizeof(SgdParams) +
         19 * sizeof(ScaleUpdateParams) +
         17 * static_cast<uint64_t>(MSAMP_RT_ABI_VERSION);
}

/// What the runtime lends the plugin. All function pointers are non-null and
/// stay valid for the life of the process.
struct CudaPluginHost {
  uint32_t version;     ///< kCudaPluginVersion of the runtime
  uint64_t fingerprint; ///< cudaPluginLayoutFingerprint() of the runtime
  /// recordError(code, "%s", message) in the runtime's sticky error state;
  /// returns `code`.
  msamp_rt_status (*recordError)(msamp_rt_status code, const char *message);
  /// setCollective(): installs `collective` (ownership passes to the runtime;
  /// null restores the local one).
  void (*setCollective)(Collective *collective);
};

/// The plugin's one exported C symbol. Returns a backend that lives until
/// exit, or null after recording why (e.g. "no CUDA device: ...") through
/// host->recordError.
#define MSAMP_RT_CUDA_PLUGIN_ENTRY "msamp_rt_cuda_plugin_create"
using CudaPluginCreateFn = Backend *(*)(const CudaPluginHost *host);

/// File name of the plugin; the loader looks next to libmsamp_runtime.so
/// unless $MSAMP_CUDA_BACKEND_LIBRARY names another path.
#define MSAMP_RT_CUDA_PLUGIN_FILE "libmsamp_runtime_cuda.so"

} // namespace msamp::runtime

#endif // MSAMP_LIB_RUNTIME_CUDA_CUDAPLUGIN_H
