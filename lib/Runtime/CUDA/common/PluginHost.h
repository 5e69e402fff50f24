//===- PluginHost.h - The host table the plugin was given -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Where the plugin keeps the CudaPluginHost the runtime passed to its entry
// point (see PluginHost.cpp for why it needs one).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_CUDA_COMMON_PLUGINHOST_H
#define MSAMP_LIB_RUNTIME_CUDA_COMMON_PLUGINHOST_H

#include "../CudaPlugin.h"

namespace msamp::runtime::cuda {

void setPluginHost(const CudaPluginHost *host);
/// Null until the entry point ran.
const CudaPluginHost *getPluginHost();

} // namespace msamp::runtime::cuda

#endif // MSAMP_LIB_RUNTIME_CUDA_COMMON_PLUGINHOST_H
