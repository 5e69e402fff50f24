//===- HostToLLVM.h - The host step's GPU ops to runtime calls --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-host-to-llvm (HostToLLVM.cpp). Declared here rather than in
// Passes.td so that adding it did not regenerate Passes.h.inc, which every
// GPU pass includes (as msamp-gpu-split-host-step).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_HOSTTOLLVM_H
#define MSAMP_CODEGEN_GPU_HOSTTOLLVM_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::msamp {

/// On the module, where --target cuda ran gpu-to-llvm: the same conversion
/// of the host code (gpu.launch_func to runtime calls, kernels taking bare
/// pointers, the rest to the LLVM dialect), without gpu-to-llvm's greedy
/// rewrite beforehand when the host code has no vector op.
std::unique_ptr<Pass> createMSAMPGPUHostToLLVM();

/// Registers it as `msamp-gpu-host-to-llvm` (msamp-opt).
void registerMSAMPGPUHostToLLVM();

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_HOSTTOLLVM_H
