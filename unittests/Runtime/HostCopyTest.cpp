//===- HostCopyTest.cpp - Index checks read a device input's host copy ----===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A GPU session's inputs are device memory; the packed entry point's index
// checks (msamp_rt_check_index) run on the host before the step and read
// the host copy the session registered (msamp_rt_gpu_register_host_copy).
// The "device" buffer here is a PROT_NONE page: a check that dereferenced
// it would fault.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"

#include "gtest/gtest.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

using namespace msamp_rt_test;

namespace {

class HostCopyTest : public RuntimeTest {};

TEST_F(HostCopyTest, IndexChecksReadTheRegisteredHostCopy) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *device =
      mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(device, MAP_FAILED);
  // The input [2, 3] of i64 at the device buffer's second 64 bytes (the
  // lookup takes any address inside a registered buffer).
  int64_t host[16 + 6] = {};
  int64_t *ids = host + 8;
  for (int i = 0; i < 6; ++i)
    ids[i] = i;
  msamp_rt_gpu_register_host_copy(device, host, sizeof(host));
  auto *at = static_cast<int64_t *>(device) + 8;
  MemRef view(at, {2, 3});
  EXPECT_EQ(msamp_rt_check_index(view, MSAMP_RT_I64, 0, 6, 0, 0, "ids"),
            MSAMP_RT_OK);
  ids[4] = 6;
  EXPECT_EQ(msamp_rt_check_index(view, MSAMP_RT_I64, 0, 6, 0, 0, "ids"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(msamp_rt_get_last_error_message()),
            "msamp_train_step: input 'ids': value 6 at [1, 1] is outside the "
            "valid range [0, 6)");
  msamp_rt_clear_error();
  msamp_rt_gpu_unregister_host_copy(device);
  // Forgotten: the check would now read the device page itself.
  EXPECT_DEATH(
      (void)msamp_rt_check_index(view, MSAMP_RT_I64, 0, 6, 0, 0, "ids"), "");
  munmap(device, page);
}

TEST_F(HostCopyTest, AddressesOutsideEveryCopyAreReadInPlace) {
  int64_t device[4] = {0, 1, 2, 3};
  int64_t host[4] = {9, 9, 9, 9};
  // A registered copy that ends before `other` starts.
  msamp_rt_gpu_register_host_copy(device, host, 2 * sizeof(int64_t));
  MemRef tail(device + 2, {2});
  EXPECT_EQ(msamp_rt_check_index(tail, MSAMP_RT_I64, 0, 4, 0, 0, "t"),
            MSAMP_RT_OK);
  // Straddling the end of the copy: read in place too.
  MemRef straddle(device + 1, {2});
  EXPECT_EQ(msamp_rt_check_index(straddle, MSAMP_RT_I64, 0, 4, 0, 0, "s"),
            MSAMP_RT_OK);
  MemRef head(device, {2});
  EXPECT_EQ(msamp_rt_check_index(head, MSAMP_RT_I64, 0, 4, 0, 0, "h"),
            MSAMP_RT_ERROR_INVALID_ARGUMENT); // the copy's 9s
  msamp_rt_clear_error();
  msamp_rt_gpu_unregister_host_copy(device);
  EXPECT_EQ(msamp_rt_check_index(head, MSAMP_RT_I64, 0, 4, 0, 0, "h"),
            MSAMP_RT_OK);
}

} // namespace
