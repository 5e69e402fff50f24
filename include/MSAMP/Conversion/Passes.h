//===- Passes.h - msamp lowering passes and pipelines -----------*- C++ -*-===//

#ifndef MSAMP_CONVERSION_PASSES_H
#define MSAMP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::msamp {

#define GEN_PASS_DECL
#include "MSAMP/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "MSAMP/Conversion/Passes.h.inc"

/// Steps 1-3 of --msamp-lower-to-llvm, shared with --msamp-lower-to-gpu:
/// elementwise fusion, runtime calls, one-shot bufferization, buffer
/// deallocation and msamp-finalize-runtime-calls. `onTensors` may add
/// passes after fusion, before the runtime calls (on tensors);
/// `afterBufferize` between bufferization and deallocation;
/// `beforeBufferize` between the runtime calls and bufferization (no CSE or
/// canonicalization there: see Pipelines.cpp).
void buildBufferizeTrainStepPipeline(
    OpPassManager &pm,
    llvm::function_ref<void(OpPassManager &)> afterBufferize = {},
    llvm::function_ref<void(OpPassManager &)> onTensors = {},
    llvm::function_ref<void(OpPassManager &)> beforeBufferize = {});

/// On buffers, after bufferization with layers outlined before it (both
/// targets): a private function's results become buffers its caller
/// allocates (its allocations of them hoisted to the call), and a result
/// that is an argument's buffer, written in place, the caller's operand.
/// Returned, they were call results that might alias any argument.
void buildOutlinedResultsToOutParams(OpPassManager &pm);

/// The host tail shared by the CPU and GPU lowerings: control flow,
/// strided metadata, libm, then `lowerMemory` (memref -> LLVM and what must
/// come with it), the remaining dialects -> LLVM, a canonicalization and the
/// packed entry point. The canonicalization has the canonicalizer's
/// defaults, or with `stepInBlocks` (a step already cut into bounded
/// blocks) runs bottom-up without region simplification.
void buildHostToLLVMPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> lowerMemory,
    bool stepInBlocks = false);

} // namespace mlir::msamp

#endif // MSAMP_CONVERSION_PASSES_H
