//===- CostModel.h - the GPU step's roofline cost model ---------*- C++ -*-===//
//
// The cost model of gpu_cost.json (docs/Interfaces.md 4, issue 22), fixed so
// that it is nobody's choice: an op's time is
//
//   max(FLOPs / (0.7 x peak of its unit), bytes / (0.8 x 3.35 TB/s)) + 4 us
//
// per kernel launch or library call, with the units' peaks 1979 TFLOP/s
// (FP8 tensor cores), 989 (BF16/FP16/TF32-class tensor cores) and 67 (f32
// CUDA cores: generated kernels and f32 GEMMs, which cuBLASLt runs without
// TF32). The floor is max(the GEMM FLOPs at the units' full peaks, minimal
// bytes / 3.35 TB/s). docs/GPU.md "The cost report" says how FLOPs and
// bytes are counted for each kind of op.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_COSTMODEL_H
#define MSAMP_CODEGEN_GPU_COSTMODEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp::gpucost {

/// The unit an op's arithmetic runs on.
enum class Unit { FP8, BF16, F32 };

llvm::StringRef unitName(Unit unit);
/// Peak FLOP/s of `unit` (the model's figures).
double peakFlops(Unit unit);

constexpr double kComputeEfficiency = 0.7;
constexpr double kMemoryEfficiency = 0.8;
constexpr double kMemoryBandwidth = 3.35e12; // bytes/s (H100 SXM HBM3)
constexpr double kLaunchSeconds = 4e-6;      // per launch or library call

/// One kernel launch or library call.
struct OpCost {
  int64_t flops = 0;
  int64_t bytes = 0;
  Unit unit = Unit::F32;
};

/// The model's time of one launch or call, in seconds.
double predictedSeconds(const OpCost &cost);

/// A generated kernel's cost, from the bufferized linalg op it is made of:
/// FLOPs = the iteration space's size x the floating-point arith/math ops
/// of the body (conversions, selects and constants excepted); bytes = every
/// memref input the body reads, once, plus every output written once (and
/// read once when the body reads its old value). Fails (with a located
/// error) on a dynamic shape.
FailureOr<OpCost> linalgKernelCost(linalg::LinalgOp op);

/// The cost of one kernel made of several bufferized linalg ops that run
/// one after another on the same rows (msamp-gpu-row-reductions' chains):
/// FLOPs = the sum of linalgKernelCost's; bytes = every memref the ops read
/// or write, once (its first access; a row a warp reads again is in the
/// caches), plus the read of an output whose old value the first op to
/// touch it reads. The values in `fromRegisters` (per-row results that
/// start from a constant and reach later ops in registers) are never read.
FailureOr<OpCost>
rowChainKernelCost(ArrayRef<linalg::LinalgOp> ops,
                   const llvm::DenseSet<Value> &fromRegisters);

/// The locations `locs` (each without the cost it held) fused, carrying
/// `cost` (kernelCostAttr).
Location withKernelCost(ArrayRef<Location> locs, DictionaryAttr cost);

/// The cost of msamp-gpu-one-hot-scatter's kernel: `threads` threads each
/// test every one of `ids` ids against their row chunk (two integer
/// compares each, counted as FLOPs like amax's compare) and add each of the
/// `gradElements` gradient elements into the output once (one FLOP each).
/// Bytes: the ids (`idBytes`) and the gradient (`gradBytes`) read once,
/// and the output rows the ids name, at most min(ids, rows) of `rowBytes`
/// each, read and written once. The threads' repeated reads of the ids
/// hit the caches and are not counted, like any re-read.
OpCost oneHotScatterKernelCost(int64_t threads, int64_t ids, int64_t idBytes,
                               int64_t gradElements, int64_t gradBytes,
                               int64_t rows, int64_t rowBytes);

/// A single-thread kernel's cost (msamp-gpu-scalar-kernels), from the host
/// ops moved into it: FLOPs = its floating-point arith/math ops, counted as
/// in linalgKernelCost; bytes = every buffer it loads from, once, plus
/// every buffer it stores to, once (an atomic update both). Fails (with a
/// located error) on a buffer without a static size.
FailureOr<OpCost> scalarKernelCost(ArrayRef<Operation *> ops);

/// A runtime entry point's cost (a func.call of msamp_rt_*): a GEMM does
/// 2 x |out| x K FLOPs on the unit of its operands' type; every other entry
/// point a fixed number of f32 FLOPs per element of its first operand
/// (kElementFlops in CostModel.cpp). Bytes: every memref operand once (each
/// is either read or written; an in-place update passes the buffer twice).
/// Fails on an operand whose static type cannot be traced.
FailureOr<OpCost> libraryCallCost(func::CallOp call, bool &isGemm);

/// The pack kernels an msamp_rt_gemm call launches before its cuBLASLt call
/// (the runtime's own plan, GemmPlan.h: an FP8 operand not stored with K
/// innermost, or with a dimension no multiple of 16, is copied transposed
/// and/or zero-padded into scratch), one cost each: the operand read and
/// its padded copy written, no FLOPs. `sides` receives "a" or "b" for each.
/// Buffers are taken as aligned (the arena's slots are). Empty for a GEMM
/// that runs in place, and for high precision.
FailureOr<SmallVector<OpCost, 2>>
gemmPackCosts(func::CallOp call, SmallVectorImpl<StringRef> &sides);

/// The step's tensor-level floor inputs (msamp-gpu-step-floor), read and
/// removed by msamp-gpu-cost-report.
constexpr llvm::StringLiteral kStepFloorAttr = "msamp.gpu_step_floor";

/// A kernel's cost, {msamp.gpu_kernel_cost = {op, flops, bytes}}: the
/// metadata of the FusedLoc that msamp-gpu-kernel-costs wraps around a
/// linalg op's location; kernelCostOf finds it in a location.
constexpr llvm::StringLiteral kKernelCostAttr = "msamp.gpu_kernel_cost";
DictionaryAttr kernelCostAttr(MLIRContext *context, llvm::StringRef opName,
                              const OpCost &cost);
/// The {op, flops, bytes} of kernelCostAttr inside `loc`, or null.
DictionaryAttr kernelCostOf(Location loc);

} // namespace mlir::msamp::gpucost

#endif // MSAMP_CODEGEN_GPU_COSTMODEL_H
