//===- SinkGlobals.h - Constant tables read in kernels ----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-sink-globals (SinkGlobals.cpp, docs/GPU.md "Constant tables in
// the kernel module"). Declared here rather than in Passes.td so that
// adding it did not regenerate Passes.h.inc, which every GPU pass includes.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_SINKGLOBALS_H
#define MSAMP_CODEGEN_GPU_SINKGLOBALS_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::msamp {

/// On a func.func, before gpu-kernel-outlining: a memref.get_global defined
/// outside a gpu.launch and used inside it is cloned into the launch body,
/// so that outlining copies the memref.global into the kernel's module
/// (device memory) instead of passing its host-image address as an
/// argument. A read left with no user outside is erased.
std::unique_ptr<Pass> createMSAMPGPUSinkGlobals();

/// Registers it as `msamp-gpu-sink-globals` (msamp-opt).
void registerMSAMPGPUSinkGlobals();

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_SINKGLOBALS_H
