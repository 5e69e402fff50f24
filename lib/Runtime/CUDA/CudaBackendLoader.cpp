//===- CudaBackendLoader.cpp - Registers "cuda", loads it on demand -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// This file is compiled into libmsamp_runtime.so itself (lib/Runtime/CUDA/
// CMakeLists.txt adds it with target_sources when the CUDA toolkit was found),
// not into the CUDA plugin: it is the registry entry for "cuda", and it
// includes no CUDA header and links nothing of CUDA. Its factory runs on the
// first selection of "cuda" (msamp_rt_set_backend("cuda") or
// MSAMP_BACKEND=cuda) and
//   0. loads cudart and cuBLASLt from where the host keeps them
//      (common/LibrarySearch.h), so that the plugin's DT_NEEDED entries,
//      which the dynamic loader matches by soname, resolve to those copies
//      whatever the plugin's RUNPATH says;
//   1. dlopens libmsamp_runtime_cuda.so, from $MSAMP_CUDA_BACKEND_LIBRARY or
//      else from the directory libmsamp_runtime.so was loaded from;
//   2. checks the plugin was built from the same Backend.h (CudaPlugin.h);
//   3. calls its entry point with the runtime's error and collective hooks.
// Every failure is recorded as MSAMP_RT_ERROR_BACKEND_UNAVAILABLE with the
// reason (dlerror() text, or the plugin's own "no CUDA device: ..."), and the
// registry keeps the previous backend.
//
// Keeping the registration here, rather than in BackendRegistry.cpp, leaves
// the registry untouched (its comment promises that adding a backend touches
// no code there), and a build without CUDA simply has no "cuda" entry.
//
// The plugin handle is never closed: the backend it created lives until exit
// like every backend, and cudart/NCCL keep threads that must not lose their
// code.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"
#include "../Collective.h"
#include "../GpuHost.h"
#include "../Status.h"
#include "CudaPlugin.h"
#include "common/LibrarySearch.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace msamp::runtime {
namespace {

msamp_rt_status hostRecordError(msamp_rt_status code, const char *message) {
  return recordError(code, "%s", message ? message : "(no message)");
}

void hostSetCollective(Collective *collective) {
  setCollective(std::unique_ptr<Collective>(collective));
}

/// The plugin's path: $MSAMP_CUDA_BACKEND_LIBRARY, else next to this library
/// (found with dladdr), else the bare name for the dynamic loader's search.
std::string pluginPath() {
  if (const char *env = std::getenv("MSAMP_CUDA_BACKEND_LIBRARY"); env && *env)
    return env;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&pluginPath), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      return self.substr(0, slash + 1) + MSAMP_RT_CUDA_PLUGIN_FILE;
  }
  return MSAMP_RT_CUDA_PLUGIN_FILE;
}

std::unique_ptr<Backend> createCudaBackend() {
  // NCCL is not among these: the plugin loads it only for a multi-rank
  // collective (comm/NcclCollective.cpp).
  for (const char *soname : {cuda::cudartSoname(), cuda::cublasLtSoname()}) {
    cuda::FoundLibrary lib =
        cuda::findCudaLibrary(soname, cuda::processEnvironment(), RTLD_LOCAL);
    if (!lib.handle) {
      recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                  "msamp_rt_set_backend: %s", lib.error.c_str());
      return nullptr;
    }
  }
  const std::string path = pluginPath();
  // RTLD_LOCAL: the plugin's symbols (and cudart's) stay out of the global
  // namespace of the process that loaded the runtime.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                "msamp_rt_set_backend: cannot load the CUDA backend '%s': %s",
                path.c_str(), why ? why : "unknown dlopen error");
    return nullptr;
  }
  auto create = reinterpret_cast<CudaPluginCreateFn>(
      dlsym(handle, MSAMP_RT_CUDA_PLUGIN_ENTRY));
  if (!create) {
    recordError(MSAMP_RT_ERROR_BACKEND_UNAVAILABLE,
                "msamp_rt_set_backend: '%s' has no entry point %s",
                path.c_str(), MSAMP_RT_CUDA_PLUGIN_ENTRY);
    return nullptr;
  }
  static const CudaPluginHost host = {kCudaPluginVersion,
                                      cudaPluginLayoutFingerprint(),
                                      hostRecordError, hostSetCollective};
  // The plugin compares host.version/fingerprint with its own and records
  // the mismatch itself, so the message names both builds.
  std::unique_ptr<Backend> backend(create(&host));
  // The host wrappers of GPU-compiled steps (GpuHost.h) run on this backend.
  if (backend)
    if (auto gpuHost = reinterpret_cast<CudaPluginGpuHostFn>(
            dlsym(handle, MSAMP_RT_CUDA_PLUGIN_GPU_HOST)))
      installGpuHost(gpuHost());
  return backend;
}

} // namespace

MSAMP_RT_REGISTER_BACKEND_FACTORY("cuda", CudaPlugin, createCudaBackend);

} // namespace msamp::runtime
