//===- PluginHost.cpp - The runtime services the plugin borrows -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// libmsamp_runtime.so is built with hidden visibility, so this plugin cannot
// link against its recordError(), Backend::~Backend() or
// Collective::~Collective(). It gets the error state through the host table
// (CudaPlugin.h) instead, and defines:
//   * recordError() — the function Status.h declares — as a forwarder into
//     the runtime's one sticky error state, so plugin code reports errors
//     exactly like runtime code;
//   * the two interfaces' out-of-line destructors (defaulted, empty), whose
//     definitions also emit the interfaces' vtables and type info that the
//     plugin's subclasses refer to. Both libraries keep their own hidden copy
//     of these trivial functions; neither can see the other's.
//
//===----------------------------------------------------------------------===//

#include "PluginHost.h"

#include "../../Backend.h"
#include "../../Collective.h"
#include "../../Status.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace msamp::runtime {

Backend::~Backend() = default;
Collective::~Collective() = default;

namespace cuda {
namespace {
std::atomic<const CudaPluginHost *> pluginHost{nullptr};
} // namespace

void setPluginHost(const CudaPluginHost *host) {
  pluginHost.store(host, std::memory_order_release);
}

const CudaPluginHost *getPluginHost() {
  return pluginHost.load(std::memory_order_acquire);
}

} // namespace cuda

msamp_rt_status recordError(msamp_rt_status code, const char *fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  if (const CudaPluginHost *host = cuda::getPluginHost())
    return host->recordError(code, message);
  // Only reachable before the runtime called the entry point (never in
  // practice); say it rather than lose it.
  std::fprintf(stderr, "msamp cuda: %s\n", message);
  return code;
}

} // namespace msamp::runtime
