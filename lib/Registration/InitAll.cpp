//===- InitAll.cpp - what msamp tools register -------------------*- C++
//-*-===//

#include "MSAMP/Registration/InitAll.h"
#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Dialect/MSAMPDialect.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void mlir::msamp::registerAllMSAMPDialects(DialectRegistry &registry) {
  registry.insert<msamp::MSAMPDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, cf::ControlFlowDialect,
                  affine::AffineDialect, vector::VectorDialect,
                  bufferization::BufferizationDialect, memref::MemRefDialect,
                  shard::ShardDialect, ml_program::MLProgramDialect,
                  gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
  // The bufferization, inlining, tiling and to-LLVM interface models of the
  // dialects above live with the upstream "all dialects" registration and
  // its extensions: without them the lowering pipelines fail at run time
  // ("op was not bufferized"). Registering the other upstream dialects too
  // is harmless: the contract check decides what a graph may contain.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the tools.
  registerGPUTargetTranslations(registry);
}

void mlir::msamp::registerAllMSAMPPasses() {
  registerAllPasses();
  registerMSAMPPasses();
  registerMSAMPPipelines();
  registerMSAMPReferencePipelines();
  registerMSAMPConversionPasses();
  registerMSAMPCodegenCPUPasses();
  registerMSAMPCPUPipelines();
  registerMSAMPCodegenGPUPasses();
  registerMSAMPGPUPipelines();
}
