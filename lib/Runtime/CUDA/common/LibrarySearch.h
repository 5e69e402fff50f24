//===- LibrarySearch.h - Where the CUDA libraries are found -----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// GPU hosts keep cudart, cuBLASLt and NCCL in different places: a toolkit
// under $CUDA_HOME or /usr/local/cuda (lib64 on most installs, lib on some),
// the nvidia-* Python wheels next to PyTorch (site-packages/nvidia/*/lib), or
// a directory the dynamic loader already searches. The runtime therefore
// bakes in no path: it looks for each library by its soname, in this order,
// and loads the first hit with dlopen:
//
//   0. already loaded in this process (a PyTorch that came first): reused,
//      so the process never holds two copies of cudart;
//   1. $MSAMP_CUDA_LIBRARY_PATH (colon-separated directories; an override);
//   2. $CUDA_HOME/lib64, $CUDA_HOME/lib, then the same under $CUDA_PATH;
//   3. /usr/local/cuda/lib64, /usr/local/cuda/lib;
//   4. <site-packages>/nvidia/*/lib for every site-packages directory in
//      $MSAMP_PYTHON_SITE_PACKAGES (colon-separated; the kit's run.sh sets it
//      from the host's python3), $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local and
//      /usr/local/lib, /usr/lib (python3.*/{site,dist}-packages);
//   5. the bare soname: LD_LIBRARY_PATH, the ldconfig cache, the default
//      directories.
//
// A library found nowhere gives one line naming it and every place searched.
//
// This file is device-free and includes no CUDA header: libmsamp_runtime's
// loader (CudaBackendLoader.cpp) uses it to load cudart and cuBLASLt before
// the plugin (whose DT_NEEDED entries then resolve to those copies, which
// the dynamic loader matches by soname), the plugin uses it to load NCCL only
// when a multi-rank collective is created, and msamp-cuda-libs prints what it
// finds (the GPU kit's run.sh).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_LIBRARYSEARCH_H
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_LIBRARYSEARCH_H

#include <functional>
#include <string>
#include <vector>

namespace msamp::runtime::cuda {

/// The sonames the CUDA backend needs, for the CUDA major version the plugin
/// was built with (MSAMP_CUDA_MAJOR, from CMake's CUDAToolkit_VERSION_MAJOR).
const char *cudartSoname();
const char *cublasLtSoname();
/// NCCL keeps soname major 2 across CUDA versions.
const char *ncclSoname();

/// Reads an environment variable; null when unset. Tests pass their own.
using EnvLookup = std::function<const char *(const char *)>;
EnvLookup processEnvironment();

/// Steps 1-4 above: the directories to try, in order, without duplicates.
/// Directories that do not exist are left out, except that step 1-3 entries
/// are kept (they name where a user would look) when `keepMissing` is set.
std::vector<std::string> cudaLibraryDirs(const EnvLookup &env,
                                         bool keepMissing = false);

/// The outcome of findCudaLibrary.
struct FoundLibrary {
  void *handle = nullptr; ///< dlopen handle; never closed
  std::string path;       ///< where it came from ("(already loaded)" etc.)
  std::string error;      ///< the one-line reason when handle is null
};

/// Loads `soname` following steps 0-5 with dlopen(RTLD_NOW | flags).
/// `rtldFlags` is RTLD_LOCAL or RTLD_GLOBAL.
FoundLibrary findCudaLibrary(const char *soname, const EnvLookup &env,
                             int rtldFlags);

/// Ahead-of-time kernels. A GPU-compiled step embeds PTX, which the driver
/// would JIT at the first launch; the GPU kit assembles every module with
/// ptxas beforehand and, when $MSAMP_CUDA_CUBIN_DIR is set, the plugin loads
/// DIR/<cubinFileName(ptx, cc)> instead of JIT-compiling that PTX
/// (gpu/GpuHost.cpp; $MSAMP_CUDA_REQUIRE_CUBIN=1 makes a missing one an
/// error). The name is the FNV-1a 64-bit hash of the PTX text (up to its
/// NUL) and the chip: "<16 hex digits>.sm_<cc>.cubin", cc = 10 * major +
/// minor. msamp-cuda-libs --cubin-name prints it for the kit script, so the
/// scheme is defined here only.
std::string cubinFileName(const char *ptx, int computeCapability);

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_LIBRARYSEARCH_H
