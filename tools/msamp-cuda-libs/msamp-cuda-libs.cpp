//===- msamp-cuda-libs.cpp - Where this host's CUDA libraries are ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
//   msamp-cuda-libs [--ld-path]
//   msamp-cuda-libs --cubin-name FILE.ptx CC
//
// Runs the CUDA backend's own library search (common/LibrarySearch.h) for
// cudart, cuBLASLt and NCCL and prints one line per library:
//
//   found libcudart.so.13 /usr/local/cuda/lib64/libcudart.so.13
//   missing libnccl.so.2: msamp cuda: cannot load libnccl.so.2 (searched ...)
//
// then the directories searched. With --ld-path it prints only the
// directories of the libraries found, colon-separated, for LD_LIBRARY_PATH
// (the GPU kit's test binaries link cudart directly, before any search could
// run). Exit status 0 when cudart and cuBLASLt were found (NCCL is only
// needed by multi-rank jobs), 1 otherwise, 2 for a bad command line.
//
// --cubin-name prints the file name under which the CUDA plugin looks for
// the ahead-of-time cubin of that PTX module for compute capability CC (90
// for sm_90): the GPU kit names its ptxas outputs with it.
//
//===----------------------------------------------------------------------===//

#include "common/LibrarySearch.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace msamp::runtime::cuda;

namespace {

int cubinName(const char *ptxPath, const char *ccText) {
  std::ifstream in(ptxPath, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "msamp-cuda-libs: cannot read '%s'\n", ptxPath);
    return 1;
  }
  std::string ptx((std::istreambuf_iterator<char>(in)), {});
  char *end = nullptr;
  const long cc = std::strtol(ccText, &end, 10);
  if (!end || *end || cc < 10 || cc > 999) {
    std::fprintf(stderr,
                 "msamp-cuda-libs: compute capability '%s' is not a number "
                 "such as 90\n",
                 ccText);
    return 2;
  }
  // The step embeds the PTX up to its first NUL; so does the hash.
  std::printf("%s\n", cubinFileName(ptx.c_str(), static_cast<int>(cc)).c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], "--cubin-name") == 0)
    return cubinName(argv[2], argv[3]);
  bool ldPath = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ld-path") == 0) {
      ldPath = true;
    } else {
      std::fprintf(stderr,
                   "msamp-cuda-libs: unknown argument '%s'\n"
                   "usage: msamp-cuda-libs [--ld-path]\n"
                   "       msamp-cuda-libs --cubin-name FILE.ptx CC\n",
                   argv[i]);
      return 2;
    }
  }
  const EnvLookup env = processEnvironment();
  struct Wanted {
    const char *soname;
    bool required;
  };
  const Wanted wanted[] = {
      {cudartSoname(), true}, {cublasLtSoname(), true}, {ncclSoname(), false}};
  bool complete = true;
  std::vector<std::string> dirs;
  for (const Wanted &w : wanted) {
    FoundLibrary lib = findCudaLibrary(w.soname, env, RTLD_LOCAL);
    if (!lib.handle) {
      complete = complete && !w.required;
      if (!ldPath)
        std::printf("missing %s%s: %s\n", w.soname,
                    w.required ? "" : " (optional)", lib.error.c_str());
      continue;
    }
    if (!ldPath)
      std::printf("found %s %s\n", w.soname, lib.path.c_str());
    const size_t slash = lib.path.rfind('/');
    if (slash != std::string::npos) {
      std::string dir = lib.path.substr(0, slash);
      bool seen = false;
      for (const std::string &d : dirs)
        seen = seen || d == dir;
      if (!seen)
        dirs.push_back(dir);
    }
  }
  if (ldPath) {
    for (size_t i = 0; i < dirs.size(); ++i)
      std::printf("%s%s", i ? ":" : "", dirs[i].c_str());
    std::printf("\n");
  } else {
    std::printf("searched:");
    for (const std::string &dir : cudaLibraryDirs(env))
      std::printf(" %s", dir.c_str());
    std::printf(" + the loader path\n");
  }
  return complete ? 0 : 1;
}
