//===- HostCopies.cpp - Host copies of device-resident inputs -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "HostCopies.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"

#include <cstdint>
#include <map>
#include <mutex>

namespace msamp::runtime {
namespace {

struct HostCopy {
  const char *host;
  size_t bytes;
};

struct Registry {
  std::mutex lock;
  /// By the device buffer's start address.
  std::map<uintptr_t, HostCopy> copies;
};

Registry &registry() {
  static auto *r = new Registry; // never destroyed: sessions close until exit
  return *r;
}

} // namespace

const void *hostCopyOf(const void *ptr, size_t bytes) {
  Registry &r = registry();
  const auto at = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> guard(r.lock);
  auto it = r.copies.upper_bound(at);
  if (it == r.copies.begin())
    return ptr;
  --it;
  const uintptr_t offset = at - it->first;
  if (offset > it->second.bytes || bytes > it->second.bytes - offset)
    return ptr;
  return it->second.host + offset;
}

} // namespace msamp::runtime

extern "C" {

void msamp_rt_gpu_register_host_copy(const void *device, const void *host,
                                     size_t bytes) {
  using namespace msamp::runtime;
  Registry &r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  r.copies[reinterpret_cast<uintptr_t>(device)] = {
      static_cast<const char *>(host), bytes};
}

void msamp_rt_gpu_unregister_host_copy(const void *device) {
  using namespace msamp::runtime;
  Registry &r = registry();
  std::lock_guard<std::mutex> guard(r.lock);
  r.copies.erase(reinterpret_cast<uintptr_t>(device));
}

} // extern "C"
