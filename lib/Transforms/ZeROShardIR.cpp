//===- ZeROShardIR.cpp - IR helpers of the O3 rewrite -----------*- C++ -*-===//

#include "ZeROShardIR.h"

#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::msamp;

namespace mlir::msamp::zero_shard {

/// The optimizer-state operands of an update (moments, momentum buffer and
/// their scales): what only the owner keeps.
SmallVector<Value> optimizerState(Operation *op) {
  SmallVector<Value> state;
  if (auto adam = dyn_cast<AdamUpdateOp>(op)) {
    state = {adam.getExpAvg(), adam.getExpAvgScale(), adam.getExpAvgSq(),
             adam.getExpAvgSqScale()};
  } else {
    auto sgd = cast<SGDUpdateOp>(op);
    state = {sgd.getMomentumBuffer()};
  }
  llvm::erase_if(state, [](Value v) { return !v; });
  return state;
}

/// Erases the update `op` of a param this rank does not own. Each step
/// result it produced is first pointed back at the state it updates (a
/// placeholder, replaced by a broadcast or erased with the state).
void eraseUpdate(func::FuncOp func, Operation *op) {
  Operation *ret = func.getBody().front().getTerminator();
  for (OpOperand &use : ret->getOpOperands()) {
    if (use.get().getDefiningOp() != op)
      continue;
    auto updates = func.getResultAttrOfType<IntegerAttr>(use.getOperandNumber(),
                                                         kUpdatesAttr);
    assert(updates && "an update result that is not a state result");
    use.set(func.getArgument(updates.getInt()));
  }
  op->erase();
}

/// Removes arguments `args` (which must be unused) and the results that
/// update them, renumbering every remaining msamp.updates.
void eraseStateArguments(func::FuncOp func, const llvm::BitVector &args) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::BitVector results(func.getNumResults());
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
      if (args.test(u.getInt()))
        results.set(r);
  SmallVector<unsigned> newIndex(func.getNumArguments());
  for (unsigned i = 0, n = 0, e = func.getNumArguments(); i < e; ++i)
    newIndex[i] = args.test(i) ? ~0u : n++;
  for (int r = static_cast<int>(func.getNumResults()) - 1; r >= 0; --r)
    if (results.test(r))
      ret->eraseOperand(r);
  (void)func.eraseResults(results);
  (void)func.eraseArguments(args);
  Builder b(func.getContext());
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
      func.setResultAttr(r, kUpdatesAttr,
                         b.getI64IntegerAttr(newIndex[u.getInt()]));
  updateFunctionType(func);
}

/// The just-in-time E4M3 cast the FP8 GEMM pass put on the dequantized
/// weight `weight`: quantize(weight, compute_scale(expand(amax(weight)))).
/// Null when the weight reaches no FP8 GEMM.
ComputeScaleOp findWeightCast(Value weight, QuantizeOp &cast) {
  for (Operation *user : weight.getUsers()) {
    auto q = dyn_cast<QuantizeOp>(user);
    if (!q || q.getInput() != weight ||
        !isa<Float8E4M3FNType>(q.getType().getElementType()))
      continue;
    auto scale = q.getScale().getDefiningOp<ComputeScaleOp>();
    if (!scale || scale.getAlgo() != AmaxAlgo::MostRecent)
      continue;
    Value history = scale.getAmaxHistory();
    while (auto expand = history.getDefiningOp<tensor::ExpandShapeOp>())
      history = expand.getSrc();
    auto amax = history.getDefiningOp<AmaxOp>();
    if (!amax || amax.getInput() != weight)
      continue;
    cast = q;
    return scale;
  }
  return nullptr;
}

/// Whether `op` computes nothing the step uses: side-effect free, and every
/// user of its results likewise (earlier rewrites leave such ops behind,
/// e.g. the transpose the FP8 GEMM pass no longer reads, until canonicalize
/// erases them).
bool isDead(Operation *op) {
  // A terminator passes values on (a linalg.yield in the region of a
  // gather that reads the weight).
  if (op->hasTrait<OpTrait::IsTerminator>() || !isMemoryEffectFree(op))
    return false;
  for (Value v : op->getResults())
    for (Operation *user : v.getUsers())
      if (!isDead(user))
        return false;
  return true;
}

/// Whether every use of the FP16 weight `weight` other than its optimizer
/// `update` is a just-in-time E4M3 cast for an FP8 GEMM (the dequantize,
/// the amax and scale that feed the cast, and the cast itself). Only then
/// may O3 replace the stored FP16 value by the E4M3 weight: a weight whose
/// dequantized value is read elsewhere (GPT-2's tied wte, gathered by the
/// embedding and cast for the lm_head GEMM) would read E4M3 values where
/// the O2 step reads FP16 ones, and the losses would differ from step 1.
bool onlyFeedsFP8Gemms(BlockArgument weight, Operation *update) {
  for (Operation *user : weight.getUsers()) {
    if (user == update)
      continue;
    auto dequantize = dyn_cast<DequantizeOp>(user);
    if (!dequantize || dequantize.getInput() != weight)
      return false;
    Value real = dequantize.getResult();
    // The casts that read `real` and the amax + expand_shape chains that
    // feed their scales (the scales themselves become the stored weight's
    // scale, so their other users are fine).
    llvm::SmallPtrSet<Operation *, 8> castParts;
    for (Operation *use : real.getUsers()) {
      auto q = dyn_cast<QuantizeOp>(use);
      if (!q || q.getInput() != real ||
          !isa<Float8E4M3FNType>(q.getType().getElementType()))
        continue;
      auto scale = q.getScale().getDefiningOp<ComputeScaleOp>();
      if (!scale || scale.getAlgo() != AmaxAlgo::MostRecent)
        continue;
      SmallVector<Operation *> chain;
      Value history = scale.getAmaxHistory();
      while (auto expand = history.getDefiningOp<tensor::ExpandShapeOp>()) {
        chain.push_back(expand);
        history = expand.getSrc();
      }
      auto amax = history.getDefiningOp<AmaxOp>();
      if (!amax || amax.getInput() != real)
        continue;
      chain.push_back(amax);
      castParts.insert(q);
      castParts.insert(scale);
      castParts.insert(chain.begin(), chain.end());
    }
    for (Operation *use : real.getUsers())
      if (!castParts.contains(use) && !isDead(use))
        return false;
    for (Operation *part : castParts)
      if (isa<AmaxOp, tensor::ExpandShapeOp>(part))
        for (Operation *next : part->getResult(0).getUsers())
          if (!castParts.contains(next) && !isDead(next))
            return false;
  }
  return true;
}

/// `value` as a 1-D tensor.
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 1)
    return value;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{all});
}

/// The 1-D `flat` in the shape of `type`.
Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

/// Elements [offset, offset + size) of the 1-D `flat`.
Value slice(OpBuilder &b, Location loc, Value flat, int64_t offset,
            int64_t size) {
  auto type = cast<RankedTensorType>(flat.getType());
  if (offset == 0 && size == type.getDimSize(0))
    return flat;
  auto result = RankedTensorType::get({size}, type.getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, result, flat, ValueRange{}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({offset}), b.getDenseI64ArrayAttr({size}),
      b.getDenseI64ArrayAttr({1}));
}

/// `dest` with the 1-D `piece` written at `offset`.
Value insert(OpBuilder &b, Location loc, Value piece, Value dest,
             int64_t offset) {
  int64_t size = cast<RankedTensorType>(piece.getType()).getDimSize(0);
  return tensor::InsertSliceOp::create(
      b, loc, piece, dest, ValueRange{}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr({offset}), b.getDenseI64ArrayAttr({size}),
      b.getDenseI64ArrayAttr({1}));
}

Value emptyFlat(OpBuilder &b, Location loc, int64_t size, Type elt) {
  return tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, elt);
}

/// f32 `stored / scale` (the optimizers' decode of a scaled tensor).
Value decode(OpBuilder &b, Location loc, Value stored, Value scale, Value one) {
  auto type = cast<RankedTensorType>(stored.getType());
  if (!scale)
    return stored;
  Value inv = arith::DivFOp::create(b, loc, one, scale);
  return DequantizeOp::create(b, loc, type.clone(b.getF32Type()), stored, inv);
}

/// Replaces state argument `index` by a sharded piece of `length` elements at
/// `offset` of the param, named and initialized like it; returns the piece.
BlockArgument addPiece(func::FuncOp func, unsigned index, int64_t length,
                       int64_t offset) {
  auto type = cast<RankedTensorType>(func.getArgument(index).getType());
  auto init = func.getArgAttrOfType<StringAttr>(index, kInitAttr);
  BlockArgument piece = addStateArgument(
      func, RankedTensorType::get({length}, type.getElementType()),
      getArgRole(func, index), getArgName(func, index),
      init ? init.getValue() : StringRef(kInitZeros));
  Builder b(func.getContext());
  func.setArgAttr(piece.getArgNumber(), kShardedAttr, b.getUnitAttr());
  func.setArgAttr(piece.getArgNumber(), kShardOffsetAttr,
                  b.getI64IntegerAttr(offset));
  return piece;
}

} // namespace mlir::msamp::zero_shard
