//===- DedupeKernels.cpp - one gpu.module per distinct kernel -------------===//
//
// gpu-kernel-outlining makes a gpu.module per gpu.launch: GPT-2 small had
// 1,446, each lowered to NVVM, printed as PTX, embedded and JIT-compiled by
// the driver when the step first runs, although every layer launches the
// same kernels on other buffers. Modules are compared by their generic-form
// text with their own symbol names replaced by a placeholder (printing is
// linear in the kernel's size), so ops, attributes, shapes, element types
// and launch-independent constants all take part.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUDEDUPEKERNELS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// `module`'s text with its name and its one kernel's name replaced by a
/// placeholder, or "" when it holds other than exactly one function (left
/// alone).
std::string identityText(gpu::GPUModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<gpu::GPUFuncOp>());
  if (funcs.size() != 1)
    return "";
  gpu::GPUFuncOp kernel = funcs.front();
  std::string moduleName = module.getSymName().str();
  std::string kernelName = kernel.getName().str();
  module.setSymName("kernel");
  kernel.setName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  // Local scope: value numbers start at 0 in every module.
  module->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  module.setSymName(moduleName);
  kernel.setName(kernelName);
  return text;
}

struct MSAMPGPUDedupeKernelsPass
    : ::mlir::msamp::impl::MSAMPGPUDedupeKernelsBase<
          MSAMPGPUDedupeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto modules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    // Module name -> the launch target that replaces its kernel.
    llvm::StringMap<SymbolRefAttr> replacement;
    llvm::StringMap<gpu::GPUModuleOp> byText;
    SmallVector<gpu::GPUModuleOp> duplicates;
    for (gpu::GPUModuleOp kernels : modules) {
      std::string text = identityText(kernels);
      if (text.empty())
        continue;
      auto [it, inserted] = byText.try_emplace(text, kernels);
      if (inserted)
        continue;
      gpu::GPUModuleOp original = it->second;
      auto kernel = *original.getOps<gpu::GPUFuncOp>().begin();
      replacement[kernels.getSymName()] =
          SymbolRefAttr::get(original.getSymNameAttr(),
                             {FlatSymbolRefAttr::get(kernel.getNameAttr())});
      duplicates.push_back(kernels);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr target = replacement.lookup(launch.getKernelModuleName());
      if (target)
        launch.setKernelAttr(target);
    });
    for (gpu::GPUModuleOp kernels : duplicates)
      kernels.erase();

    numDeduplicated += duplicates.size();
    remark::passed(
        module.getLoc(),
        msamp::remarkOptions("gpu-dedupe-kernels", "kernels-deduplicated"))
        << remark::add("{0} kernels emitted as {1} ({2} deduplicated: "
                       "structurally identical to an earlier kernel)",
                       modules.size(), modules.size() - duplicates.size(),
                       duplicates.size());
  }
};

} // namespace
