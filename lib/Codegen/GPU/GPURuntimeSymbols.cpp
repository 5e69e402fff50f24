//===- GPURuntimeSymbols.cpp - host wrappers of GPU-compiled steps -*- C++
//-*-===//
//
// The table of GPURuntimeSymbols.h, expanded from the runtime's
// MSAMP_RT_GPU_HOST_LIST (msamp_gpu_host.h, docs/RuntimeABI.md 13).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/GPURuntimeSymbols.h"
#include "MSAMP/Runtime/msamp_gpu_host.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::msamp;

// The names only: the runtime's build checks the C types of the list against
// its prototypes, and the step's calls are upstream's, whose types match.
static const GPUHostSymbol kGPUHostSymbols[] = {
#define MSAMP_GPU_HOST_SYMBOL_(upstream, symbol, ...) {#upstream, #symbol},
    MSAMP_RT_GPU_HOST_LIST(MSAMP_GPU_HOST_SYMBOL_)
#undef MSAMP_GPU_HOST_SYMBOL_
};

llvm::ArrayRef<GPUHostSymbol> mlir::msamp::getGPUHostSymbols() {
  return kGPUHostSymbols;
}

llvm::Error mlir::msamp::renameGPUHostCalls(llvm::Module &module) {
  for (const GPUHostSymbol &symbol : kGPUHostSymbols) {
    if (symbol.upstream == symbol.name)
      continue; // the runtime's own name already (the arenas)
    llvm::Function *function = module.getFunction(symbol.upstream);
    if (!function)
      continue;
    if (!function->isDeclaration())
      return llvm::createStringError(
          "%s is defined in the step; expected a declaration",
          symbol.upstream.data());
    if (llvm::Function *existing = module.getFunction(symbol.name)) {
      function->replaceAllUsesWith(existing);
      function->eraseFromParent();
      continue;
    }
    function->setName(symbol.name);
  }
  for (const llvm::Function &function : module)
    if (function.isDeclaration() &&
        (function.getName().starts_with("mgpu") ||
         function.getName().starts_with("_mlir_memref_to_llvm_")))
      return llvm::createStringError(
          "the step calls %s, which no msamp runtime wrapper implements "
          "(add it to MSAMP_RT_GPU_HOST_LIST in msamp_gpu_host.h)",
          function.getName().str().c_str());
  return llvm::Error::success();
}
