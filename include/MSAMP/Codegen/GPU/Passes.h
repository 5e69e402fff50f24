//===- Passes.h - msamp GPU lowering passes and pipeline --------*- C++ -*-===//
//
// --msamp-lower-to-gpu: the CUDA target of a compiled train step
// (docs/Passes.md, docs/Design.md "GPU target").
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_PASSES_H
#define MSAMP_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class DialectRegistry;
namespace linalg {
class LinalgDialect;
} // namespace linalg
} // namespace mlir

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Codegen/GPU/Passes.h.inc"

/// Options of --msamp-lower-to-gpu.
struct LowerToGPUOptions : public PassPipelineOptions<LowerToGPUOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture: sm_90 or sm_89"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features; empty: +ptx80 for sm_90, +ptx81 for "
                     "sm_89 (the oldest PTX ISA each accepts)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("threads per block along the innermost dimension"),
      llvm::cl::init(256)};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("NVPTX optimization level"),
                                    llvm::cl::init(3)};
  PassOptions::Option<bool> hostEmulation{
      *this, "host-emulation",
      llvm::cl::desc("test aid: stop before GPU mapping and run the tiled "
                     "parallel loops as host loops (CPU target), so the "
                     "GPU pipeline's transformations can be checked "
                     "numerically without a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (libdevice); empty: the one found "
                     "at build time"),
      llvm::cl::init("")};
  PassOptions::Option<bool> dedupe{
      *this, "dedupe",
      llvm::cl::desc("emit structurally identical kernels once "
                     "(msamp-gpu-dedupe-kernels); host emulation: outline "
                     "loop nests, identical ones once"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("with dedupe: compile each repeated layer's host code "
                     "once, as calls of shared functions "
                     "(msamp-gpu-outline-layers); false: the step inline, "
                     "for comparison"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineTensors{
      *this, "outline-tensors",
      llvm::cl::desc("with dedupe: outline the repeated layers before "
                     "bufferization, as the CPU target does, so that "
                     "bufferization and the GPU passes see each layer "
                     "once; each layer's buffers in a frame its caller "
                     "passes (msamp-gpu-static-arena), each layer's Adam "
                     "updates in a call of their own (docs/GPU.md); false: "
                     "the step bufferized inline"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> upstreamHostConversion{
      *this, "upstream-host-conversion",
      llvm::cl::desc("test aid: convert the host code with upstream "
                     "gpu-to-llvm instead of msamp-gpu-host-to-llvm (the "
                     "same output, more slowly)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> costReport{
      *this, "cost-report",
      llvm::cl::desc("write the step's cost report (gpu_cost.json, "
                     "msamp-gpu-cost-report) to this file; empty: none"),
      llvm::cl::init("")};
};

/// The PTX features for `chip` when none are given: +ptx80 for sm_90,
/// +ptx81 for sm_89 (sm_89 appeared in PTX 7.8 but its FP8 cvt needs 8.1).
std::string defaultPTXFeatures(llvm::StringRef chip);

/// Bufferized train step -> LLVM dialect host code with the kernels as
/// gpu.binary (PTX embedded), runtime calls, and the packed entry point
/// (registered as --msamp-lower-to-gpu).
void buildLowerToGPUPipeline(OpPassManager &pm,
                             const LowerToGPUOptions &options);

void registerMSAMPGPUPipelines();

/// The LLVM IR translations gpu-module-to-binary and msamp-compile need
/// (builtin, LLVM, NVVM, GPU), plus the NVVM target attribute's model.
void registerGPUTargetTranslations(DialectRegistry &registry);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_PASSES_H
