//===- GPURuntimeSymbols.h - host wrappers of GPU-compiled steps -*- C++
//-*-===//
//
// The runtime entry points the host code of a step compiled with
// --msamp-lower-to-gpu calls (docs/RuntimeABI.md 13). They are plain C
// functions of libmsamp_runtime.so (lib/Runtime/GpuHostABI.cpp), forwarded to
// the CUDA plugin; they take pointers and integers, not memrefs, so they are
// kept out of the memref-ABI table of RuntimeSymbols.h.
//
// The GPU dialect's LLVM IR translation (gpu.binary + gpu.launch_func,
// SelectObjectAttr) and finalize-memref-to-llvm's generic allocation
// functions emit calls to MLIR's CUDA runtime wrappers (mgpu*) and to
// _mlir_memref_to_llvm_*; msamp does not ship those and Debian does not
// either. renameGPUHostCalls() renames the declarations to ours after
// translation, one table for both directions.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_GPURUNTIMESYMBOLS_H
#define MSAMP_CODEGEN_GPU_GPURUNTIMESYMBOLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::msamp {

struct GPUHostSymbol {
  /// The name upstream's lowering emits.
  llvm::StringLiteral upstream;
  /// The runtime's exported function.
  llvm::StringLiteral name;
};

/// Every host wrapper, read from the runtime's MSAMP_RT_GPU_HOST_LIST
/// (msamp_gpu_host.h, docs/RuntimeABI.md 13).
llvm::ArrayRef<GPUHostSymbol> getGPUHostSymbols();

/// Name of the exported constant string a GPU-compiled train_step.so
/// defines ("cuda"); the session allocates its buffers in device-accessible
/// (managed) memory when it finds it.
constexpr llvm::StringLiteral kTrainStepTargetSymbol =
    "msamp_train_step_target";

/// Name of the exported constant string a GPU-compiled train_step.so
/// defines: why the step cannot be replayed as a CUDA graph
/// (msamp-gpu-graph-check), or "" when it can.
constexpr llvm::StringLiteral kTrainStepGraphBlockerSymbol =
    "msamp_train_step_graph_blocker";

/// Renames every upstream host declaration of `module` to the runtime's.
/// Fails, naming it, if the module still declares an mgpu* or
/// _mlir_memref_to_llvm_* function the table does not know: the step would
/// not load.
llvm::Error renameGPUHostCalls(llvm::Module &module);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_GPURUNTIMESYMBOLS_H
