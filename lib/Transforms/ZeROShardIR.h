//===- ZeROShardIR.h - IR helpers of the O3 rewrite -------------*- C++ -*-===//
//
// What msamp-zero-shard (ZeROShard.cpp) needs besides its own phases: reading
// the O2 step (an update's optimizer state, the FP8 cast of a weight, dead
// ops), removing what a rank does not keep, and building the flat 1-D views
// and pieces of a tensor.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TRANSFORMS_ZEROSHARDIR_H
#define MSAMP_LIB_TRANSFORMS_ZEROSHARDIR_H

#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::msamp::zero_shard {

/// The optimizer-state operands of an update (moments, momentum buffer and
/// their scales): what only the owner keeps.
SmallVector<Value> optimizerState(Operation *op);

/// Erases the update `op` of a param this rank does not own. Each step
/// result it produced is first pointed back at the state it updates (a
/// placeholder, replaced by a broadcast or erased with the state).
void eraseUpdate(func::FuncOp func, Operation *op);

/// Removes arguments `args` (which must be unused) and the results that
/// update them, renumbering every remaining msamp.updates.
void eraseStateArguments(func::FuncOp func, const llvm::BitVector &args);

/// The just-in-time E4M3 cast the FP8 GEMM pass put on the dequantized
/// weight `weight`: quantize(weight, compute_scale(expand(amax(weight)))).
/// Null when the weight reaches no FP8 GEMM.
ComputeScaleOp findWeightCast(Value weight, QuantizeOp &cast);

/// Whether `op` computes nothing the step uses: side-effect free, and every
/// user of its results likewise (earlier rewrites leave such ops behind,
/// e.g. the transpose the FP8 GEMM pass no longer reads, until canonicalize
/// erases them).
bool isDead(Operation *op);

/// Whether every use of the FP16 weight `weight` other than its optimizer
/// `update` is a just-in-time E4M3 cast for an FP8 GEMM (the dequantize,
/// the amax and scale that feed the cast, and the cast itself). Only then
/// may O3 replace the stored FP16 value by the E4M3 weight: a weight whose
/// dequantized value is read elsewhere (GPT-2's tied wte, gathered by the
/// embedding and cast for the lm_head GEMM) would read E4M3 values where
/// the O2 step reads FP16 ones, and the losses would differ from step 1.
bool onlyFeedsFP8Gemms(BlockArgument weight, Operation *update);

/// `value` as a 1-D tensor.
Value flatten(OpBuilder &b, Location loc, Value value);

/// The 1-D `flat` in the shape of `type`.
Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type);

/// Elements [offset, offset + size) of the 1-D `flat`.
Value slice(OpBuilder &b, Location loc, Value flat, int64_t offset,
            int64_t size);

/// `dest` with the 1-D `piece` written at `offset`.
Value insert(OpBuilder &b, Location loc, Value piece, Value dest,
             int64_t offset);

/// An empty 1-D tensor of `size` elements of type `elt`.
Value emptyFlat(OpBuilder &b, Location loc, int64_t size, Type elt);

/// f32 `stored / scale` (the optimizers' decode of a scaled tensor).
Value decode(OpBuilder &b, Location loc, Value stored, Value scale, Value one);

/// Replaces state argument `index` by a sharded piece of `length` elements at
/// `offset` of the param, named and initialized like it; returns the piece.
BlockArgument addPiece(func::FuncOp func, unsigned index, int64_t length,
                       int64_t offset);

} // namespace mlir::msamp::zero_shard

#endif // MSAMP_LIB_TRANSFORMS_ZEROSHARDIR_H
