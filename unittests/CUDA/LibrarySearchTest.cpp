//===- LibrarySearchTest.cpp - Where the CUDA libraries are found ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Runs without a GPU and without CUDA: fake host layouts (a toolkit under
// CUDA_HOME, nvidia-* wheels in a site-packages directory, an override
// directory) are made in a temporary directory with copies of a stub shared
// library (FakeCudaLib.cpp) under made-up sonames, the environment is passed
// as a lookup function, and the test checks which copy findCudaLibrary
// loaded (dladdr of the stub's function) and the one-line error when none
// is found. The stub is at the build's path unless $MSAMP_FAKE_CUDA_LIB
// names another (the GPU kit's copy).
//
//===----------------------------------------------------------------------===//

#include "common/LibrarySearch.h"

#include "gtest/gtest.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

using namespace msamp::runtime::cuda;

namespace {

class LibrarySearch : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    root = std::string(tmp && *tmp ? tmp : "/tmp") + "/msamp-libsearch-" +
           std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    sh("rm -rf '" + root + "' && mkdir -p '" + root + "'");
  }
  void TearDown() override { sh("rm -rf '" + root + "'"); }

  static void sh(const std::string &cmd) {
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  /// Copies the stub to DIR/NAME (DIR relative to the test's root).
  std::string stub(const std::string &dir, const std::string &name) {
    const std::string path = root + "/" + dir + "/" + name;
    const char *fake = std::getenv("MSAMP_FAKE_CUDA_LIB");
    sh("mkdir -p '" + root + "/" + dir + "' && cp '" +
       std::string(fake && *fake ? fake : MSAMP_FAKE_CUDA_LIB) + "' '" + path +
       "'");
    return path;
  }
  void mkdir(const std::string &dir) {
    sh("mkdir -p '" + root + "/" + dir + "'");
  }
  EnvLookup env() const {
    return [this](const char *name) -> const char * {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
  /// The file the loaded stub was mapped from.
  static std::string loadedFrom(const FoundLibrary &lib) {
    void *fn = ::dlsym(lib.handle, "msamp_fake_cuda_lib");
    Dl_info info;
    if (!fn || !::dladdr(fn, &info) || !info.dli_fname)
      return "(not the stub)";
    return info.dli_fname;
  }
  /// Index of `dir` in `dirs`, or -1.
  static long indexOf(const std::vector<std::string> &dirs,
                      const std::string &dir) {
    auto it = std::find(dirs.begin(), dirs.end(), dir);
    return it == dirs.end() ? -1 : it - dirs.begin();
  }

  std::string root;
  std::map<std::string, std::string> vars;
};

TEST_F(LibrarySearch, OrderIsOverrideToolkitWheelsAndNoDuplicates) {
  mkdir("override");
  mkdir("home/lib64");
  mkdir("home/lib");
  mkdir("site/nvidia/cu13/lib");
  mkdir("site/nvidia/nccl/lib");
  mkdir("site/nvidia/nolib");
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/override::" + root + "/override";
  vars["CUDA_HOME"] = root + "/home";
  vars["MSAMP_PYTHON_SITE_PACKAGES"] = root + "/site";
  const std::vector<std::string> dirs = cudaLibraryDirs(env());
  const long override = indexOf(dirs, root + "/override");
  const long lib64 = indexOf(dirs, root + "/home/lib64");
  const long lib = indexOf(dirs, root + "/home/lib");
  const long cu13 = indexOf(dirs, root + "/site/nvidia/cu13/lib");
  const long nccl = indexOf(dirs, root + "/site/nvidia/nccl/lib");
  EXPECT_EQ(override, 0);
  EXPECT_EQ(lib64, 1);
  EXPECT_EQ(lib, 2);
  ASSERT_GE(cu13, 3);
  ASSERT_GE(nccl, 3);
  EXPECT_EQ(std::count(dirs.begin(), dirs.end(), root + "/override"), 1);
  EXPECT_EQ(indexOf(dirs, root + "/site/nvidia/nolib"), -1);
  // /usr/local/cuda, where it exists, comes after CUDA_HOME, before wheels.
  const long usrLocal = indexOf(dirs, "/usr/local/cuda/lib64");
  if (usrLocal >= 0) {
    EXPECT_GT(usrLocal, lib);
    EXPECT_LT(usrLocal, cu13);
  }
  // Named directories that do not exist are kept only when asked (for the
  // error message), wheel globs never.
  vars["CUDA_HOME"] = root + "/absent";
  EXPECT_EQ(indexOf(cudaLibraryDirs(env()), root + "/absent/lib64"), -1);
  EXPECT_EQ(indexOf(cudaLibraryDirs(env(), true), root + "/absent/lib64"), 1);
}

TEST_F(LibrarySearch, CudaHomeWinsOverWheelAndLib64OverLib) {
  const std::string soname = "libmsamp_fake_order.so.1";
  const std::string inLib64 = stub("home/lib64", soname);
  stub("home/lib", soname);
  const std::string inWheel = stub("site/nvidia/cu13/lib", soname);
  vars["CUDA_HOME"] = root + "/home";
  vars["MSAMP_PYTHON_SITE_PACKAGES"] = root + "/site";
  FoundLibrary lib = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  ASSERT_NE(lib.handle, nullptr) << lib.error;
  EXPECT_EQ(lib.path, inLib64);
  EXPECT_EQ(loadedFrom(lib), inLib64);

  // Without CUDA_HOME the wheel's copy is the one found.
  vars.erase("CUDA_HOME");
  FoundLibrary wheel = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  ASSERT_NE(wheel.handle, nullptr) << wheel.error;
  EXPECT_EQ(wheel.path, inWheel);
  EXPECT_EQ(loadedFrom(wheel), inWheel);
}

TEST_F(LibrarySearch, OverrideComesFirst) {
  const std::string soname = "libmsamp_fake_override.so.1";
  const std::string mine = stub("mine", soname);
  stub("home/lib64", soname);
  vars["CUDA_HOME"] = root + "/home";
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/mine";
  FoundLibrary lib = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  ASSERT_NE(lib.handle, nullptr) << lib.error;
  EXPECT_EQ(loadedFrom(lib), mine);
}

TEST_F(LibrarySearch, BrokenCopyIsSkippedAndNamed) {
  const std::string soname = "libmsamp_fake_broken.so.1";
  mkdir("first");
  std::ofstream(root + "/first/" + soname) << "not an ELF file\n";
  const std::string good = stub("second", soname);
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/first:" + root + "/second";
  FoundLibrary lib = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  ASSERT_NE(lib.handle, nullptr) << lib.error;
  EXPECT_EQ(loadedFrom(lib), good);

  // Only the broken copy: the error names it and dlopen's reason.
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/first";
  FoundLibrary none = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  EXPECT_EQ(none.handle, nullptr);
  EXPECT_NE(none.error.find(root + "/first/" + soname + ": "),
            std::string::npos)
      << none.error;
}

TEST_F(LibrarySearch, MissingLibraryIsOneLineNamingEveryPlace) {
  const std::string soname = "libmsamp_fake_missing.so.1";
  mkdir("site/nvidia/cu13/lib");
  vars["CUDA_HOME"] = root + "/home";
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/mine";
  vars["MSAMP_PYTHON_SITE_PACKAGES"] = root + "/site";
  FoundLibrary lib = findCudaLibrary(soname.c_str(), env(), RTLD_LOCAL);
  EXPECT_EQ(lib.handle, nullptr);
  const std::string &e = lib.error;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.rfind("msamp cuda: cannot load " + soname + " (searched ", 0), 0u)
      << e;
  for (const std::string &place :
       {root + "/mine", root + "/home/lib64", root + "/home/lib",
        std::string("/usr/local/cuda/lib64"),
        std::string("/usr/local/cuda/lib"), root + "/site/nvidia/cu13/lib",
        std::string("the loader path (LD_LIBRARY_PATH, ldconfig)")})
    EXPECT_NE(e.find(place), std::string::npos) << place << " in: " << e;
}

TEST_F(LibrarySearch, AlreadyLoadedLibraryIsReused) {
  // libm is loaded in every C++ process; a decoy in the override directory
  // must not be opened instead (two copies of cudart would mean two
  // runtimes).
  const std::string decoy = stub("mine", "libm.so.6");
  vars["MSAMP_CUDA_LIBRARY_PATH"] = root + "/mine";
  FoundLibrary lib = findCudaLibrary("libm.so.6", env(), RTLD_LOCAL);
  ASSERT_NE(lib.handle, nullptr) << lib.error;
  EXPECT_NE(lib.path, decoy);
  EXPECT_EQ(::dlsym(lib.handle, "msamp_fake_cuda_lib"), nullptr);
  EXPECT_NE(::dlsym(lib.handle, "cos"), nullptr);
}

TEST(LibrarySearchSonames, FollowTheToolkitMajorVersion) {
  const std::string major = std::to_string(MSAMP_CUDA_MAJOR);
  EXPECT_EQ(std::string(cudartSoname()), "libcudart.so." + major);
  EXPECT_EQ(std::string(cublasLtSoname()), "libcublasLt.so." + major);
  EXPECT_EQ(std::string(ncclSoname()), "libnccl.so.2");
}

TEST(CubinFileName, IsFnv1a64OfThePtxAndTheChip) {
  // The published FNV-1a 64 test vectors ("" and "a"): the kit script names
  // its cubins through msamp-cuda-libs, which calls this same function.
  EXPECT_EQ(cubinFileName("", 90), "cbf29ce484222325.sm_90.cubin");
  EXPECT_EQ(cubinFileName("a", 89), "af63dc4c8601ec8c.sm_89.cubin");
  // Only the text up to the NUL counts, as the step embeds it.
  const char withNul[] = "a\0b";
  EXPECT_EQ(cubinFileName(withNul, 89), cubinFileName("a", 89));
  EXPECT_NE(cubinFileName(".version 8.0", 90),
            cubinFileName(".version 8.1", 90));
}

} // namespace
