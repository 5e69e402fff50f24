//===- FakeCudaLib.cpp - A stub shared library for the search tests -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// LibrarySearchTest copies this library, under the file names it looks for,
// into fake CUDA layouts, then checks which copy the search loaded by asking
// the loaded copy where it lives (dladdr of this function).
//
//===----------------------------------------------------------------------===//

extern "C" __attribute__((visibility("default"))) int msamp_fake_cuda_lib() {
  return 42;
}
