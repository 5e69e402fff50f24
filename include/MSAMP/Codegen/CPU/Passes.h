//===- Passes.h - msamp CPU code generation passes and pipeline -*- C++ -*-===//
//
// --msamp-lower-to-llvm: the CPU target of a compiled train step
// (docs/Passes.md).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_CPU_PASSES_H
#define MSAMP_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Codegen/CPU/Passes.h.inc"

/// Step 4 of --msamp-lower-to-llvm: bufferized linalg, loops and runtime
/// calls -> LLVM dialect for the host, plus the packed entry point.
/// `outlineLoopNests`: each loop nest its own function, identical ones
/// shared (msamp-outline-loop-nests); false keeps the step one function.
void buildLoopsToLLVMPipeline(OpPassManager &pm, bool outlineLoopNests = true);

/// Tensor-level train step -> LLVM dialect with the packed entry point
/// (registered as --msamp-lower-to-llvm).
void buildLowerToLLVMPipeline(OpPassManager &pm, bool outlineLoopNests = true);

/// Options of --msamp-lower-to-llvm.
struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc("compile each loop nest as its own function, "
                     "structurally identical nests once"),
      llvm::cl::init(true)};
};

void registerMSAMPCPUPipelines();

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_CPU_PASSES_H
