//===- SplitHostStep.h - The host step in bounded blocks --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-gpu-split-host-step (SplitHostStep.cpp). Declared here rather than
// in Passes.td so that adding it did not regenerate Passes.h.inc, which
// every GPU pass includes.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_SPLITHOSTSTEP_H
#define MSAMP_CODEGEN_GPU_SPLITHOSTSTEP_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::msamp {

/// On the module, before the host conversions of --target cuda: every
/// func.func definition's blocks are cut into blocks of at most `max-ops`
/// operations (default 64), each ending in a cf.br to the next.
std::unique_ptr<Pass> createMSAMPGPUSplitHostStep();

/// Registers it as `msamp-gpu-split-host-step` (msamp-opt).
void registerMSAMPGPUSplitHostStep();

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_SPLITHOSTSTEP_H
