//===- GPURuntimeSymbols.cpp - host wrappers of GPU-compiled steps -*- C++
//-*-===//
//
// Keep in sync with lib/Runtime/GpuHostABI.cpp and docs/RuntimeABI.md 13.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/GPURuntimeSymbols.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::msamp;

static const GPUHostSymbol kGPUHostSymbols[] = {
    // gpu.binary: a global constructor per kernel module loads it, a
    // destructor unloads it.
    {"mgpuModuleLoad", "msamp_rt_gpu_module_load",
     "void *(const void *image, size_t bytes)"},
    {"mgpuModuleLoadJIT", "msamp_rt_gpu_module_load_jit",
     "void *(const char *ptx, int32_t opt_level)"},
    {"mgpuModuleUnload", "msamp_rt_gpu_module_unload", "void (void *module)"},
    // gpu.launch_func.
    {"mgpuModuleGetFunction", "msamp_rt_gpu_module_get_function",
     "void *(void *module, const char *name)"},
    {"mgpuStreamCreate", "msamp_rt_gpu_stream_create", "void *(void)"},
    {"mgpuStreamSynchronize", "msamp_rt_gpu_stream_synchronize",
     "void (void *stream)"},
    {"mgpuStreamDestroy", "msamp_rt_gpu_stream_destroy", "void (void *stream)"},
    {"mgpuLaunchKernel", "msamp_rt_gpu_launch_kernel",
     "void (void *function, intptr_t grid_x, intptr_t grid_y, intptr_t "
     "grid_z, intptr_t block_x, intptr_t block_y, intptr_t block_z, int32_t "
     "shared_bytes, void *stream, void **params, void **extra, size_t "
     "num_params)"},
    // memref.alloc / dealloc of the host code (finalize-memref-to-llvm with
    // use-generic-functions): device-accessible (managed) memory.
    {"_mlir_memref_to_llvm_alloc", "msamp_rt_gpu_alloc",
     "void *(size_t bytes)"},
    {"_mlir_memref_to_llvm_aligned_alloc", "msamp_rt_gpu_aligned_alloc",
     "void *(size_t alignment, size_t bytes)"},
    {"_mlir_memref_to_llvm_free", "msamp_rt_gpu_free", "void (void *ptr)"},
};

llvm::ArrayRef<GPUHostSymbol> mlir::msamp::getGPUHostSymbols() {
  return kGPUHostSymbols;
}

llvm::Error mlir::msamp::renameGPUHostCalls(llvm::Module &module) {
  for (const GPUHostSymbol &symbol : kGPUHostSymbols) {
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
          "(add it to GPURuntimeSymbols.cpp and lib/Runtime/GpuHostABI.cpp)",
          function.getName().str().c_str());
  return llvm::Error::success();
}
