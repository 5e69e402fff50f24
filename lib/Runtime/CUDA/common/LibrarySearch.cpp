//===- LibrarySearch.cpp - Where the CUDA libraries are found -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The search order and its reasons are in LibrarySearch.h.
//
//===----------------------------------------------------------------------===//

#include "LibrarySearch.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef MSAMP_CUDA_MAJOR
#error "MSAMP_CUDA_MAJOR (the CUDA toolkit's major version) must be defined"
#endif
#define MSAMP_STRINGIFY_(x) #x
#define MSAMP_STRINGIFY(x) MSAMP_STRINGIFY_(x)

namespace msamp::runtime::cuda {

const char *cudartSoname() {
  return "libcudart.so." MSAMP_STRINGIFY(MSAMP_CUDA_MAJOR);
}
const char *cublasLtSoname() {
  return "libcublasLt.so." MSAMP_STRINGIFY(MSAMP_CUDA_MAJOR);
}
const char *ncclSoname() { return "libnccl.so.2"; }

EnvLookup processEnvironment() {
  return [](const char *name) { return std::getenv(name); };
}

namespace {

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::vector<std::string> splitPath(const char *list) {
  std::vector<std::string> out;
  if (!list)
    return out;
  std::string text = list;
  size_t start = 0;
  while (start <= text.size()) {
    size_t colon = text.find(':', start);
    if (colon == std::string::npos)
      colon = text.size();
    if (colon > start)
      out.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

/// Sorted matches of a glob pattern (directories only).
std::vector<std::string> globDirs(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t matches;
  if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i)
      out.push_back(matches.gl_pathv[i]);
    ::globfree(&matches);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const char *nonEmpty(const EnvLookup &env, const char *name) {
  const char *value = env(name);
  return value && *value ? value : nullptr;
}

} // namespace

std::vector<std::string> cudaLibraryDirs(const EnvLookup &env,
                                         bool keepMissing) {
  std::vector<std::string> dirs;
  auto add = [&](const std::string &dir, bool named) {
    if (dir.empty() || std::find(dirs.begin(), dirs.end(), dir) != dirs.end())
      return;
    if (isDirectory(dir) || (named && keepMissing))
      dirs.push_back(dir);
  };
  // 1. The explicit override.
  for (const std::string &dir :
       splitPath(nonEmpty(env, "MSAMP_CUDA_LIBRARY_PATH")))
    add(dir, true);
  // 2-3. Toolkit roots.
  std::vector<std::string> roots;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = nonEmpty(env, var))
      roots.push_back(root);
  roots.push_back("/usr/local/cuda");
  for (const std::string &root : roots) {
    add(root + "/lib64", true);
    add(root + "/lib", true);
  }
  // 4. The nvidia-* wheels: nvidia/<component>/lib (CUDA 13 wheels put
  // cudart and cuBLASLt in nvidia/cu13/lib, NCCL in nvidia/nccl/lib).
  std::vector<std::string> sitePackages =
      splitPath(nonEmpty(env, "MSAMP_PYTHON_SITE_PACKAGES"));
  std::vector<std::string> prefixes;
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *prefix = nonEmpty(env, var))
      prefixes.push_back(prefix);
  if (const char *home = nonEmpty(env, "HOME"))
    prefixes.push_back(std::string(home) + "/.local");
  prefixes.push_back("/usr/local");
  prefixes.push_back("/usr");
  for (const std::string &prefix : prefixes) {
    for (const char *kind : {"site-packages", "dist-packages"})
      for (const std::string &dir : globDirs(prefix + "/lib/python3*/" + kind))
        sitePackages.push_back(dir);
  }
  if (isDirectory("/usr/lib/python3/dist-packages"))
    sitePackages.push_back("/usr/lib/python3/dist-packages");
  for (const std::string &site : sitePackages)
    for (const std::string &dir : globDirs(site + "/nvidia/*/lib"))
      add(dir, false);
  return dirs;
}

FoundLibrary findCudaLibrary(const char *soname, const EnvLookup &env,
                             int rtldFlags) {
  FoundLibrary found;
  // 0. Already loaded: RTLD_NOLOAD only returns a library that is resident.
  if (void *handle = ::dlopen(soname, RTLD_NOW | RTLD_NOLOAD | rtldFlags)) {
    found.handle = handle;
    found.path = "(already loaded)";
    struct link_map *map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
        *map->l_name)
      found.path = map->l_name;
    return found;
  }
  std::string searched, failures;
  // 1-4. The directories, in order.
  for (const std::string &dir : cudaLibraryDirs(env, /*keepMissing=*/true)) {
    searched += (searched.empty() ? "" : ", ") + dir;
    const std::string path = dir + "/" + soname;
    if (!isFile(path))
      continue;
    if (void *handle = ::dlopen(path.c_str(), RTLD_NOW | rtldFlags)) {
      found.handle = handle;
      found.path = path;
      return found;
    }
    // Present but unusable (another architecture, a missing dependency):
    // say so, then keep looking.
    const char *why = ::dlerror();
    failures += std::string("; ") + path + ": " + (why ? why : "dlopen failed");
  }
  // 5. The loader's own search.
  searched += (searched.empty() ? "" : ", ") +
              std::string("the loader path (LD_LIBRARY_PATH, ldconfig)");
  if (void *handle = ::dlopen(soname, RTLD_NOW | rtldFlags)) {
    found.handle = handle;
    found.path = soname;
    struct link_map *map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
        *map->l_name)
      found.path = map->l_name;
    return found;
  }
  found.error = std::string("msamp cuda: cannot load ") + soname +
                " (searched " + searched + ")" + failures +
                "; install it or point CUDA_HOME or MSAMP_CUDA_LIBRARY_PATH "
                "at its directory";
  return found;
}

std::string cubinFileName(const char *ptx, int computeCapability) {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis
  for (const unsigned char *c = reinterpret_cast<const unsigned char *>(ptx);
       *c; ++c) {
    hash ^= *c;
    hash *= 0x100000001b3ull; // FNV-1a 64 prime
  }
  char name[64];
  std::snprintf(name, sizeof(name), "%016llx.sm_%d.cubin",
                static_cast<unsigned long long>(hash), computeCapability);
  return name;
}

} // namespace msamp::runtime::cuda
