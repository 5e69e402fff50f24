//===- SingleThreadKernels.cpp - facts about single-thread kernels --------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"
#include "MSAMP/Codegen/GPU/CostModel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value msamp::rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      value = cast.getSource();
    else if (auto cast = dyn_cast<UnrealizedConversionCastOp>(def);
             cast && cast->getNumOperands() == 1)
      value = cast.getOperand(0);
    else
      break;
  }
  return value;
}

/// The cost model's name of a single-thread kernel (gpu_cost.json's "op").
static constexpr llvm::StringLiteral kScalarOp = "scalar";

FailureOr<Location> msamp::singleThreadKernelLoc(ArrayRef<Operation *> ops) {
  FailureOr<gpucost::OpCost> cost = gpucost::scalarKernelCost(ops);
  if (failed(cost))
    return failure();
  MLIRContext *context = ops.front()->getContext();
  return Location(
      FusedLoc::get(context, {ops.front()->getLoc()},
                    gpucost::kernelCostAttr(context, kScalarOp, *cost)));
}

/// Whether `loop` is a one-dimensional scf.parallel of exactly one
/// iteration (0 to 1 step 1).
static bool isOneIteration(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || loop.getNumResults() != 0)
    return false;
  auto isConstant = [](Value value, int64_t expected) {
    auto constant = value.getDefiningOp<arith::ConstantIndexOp>();
    return constant && constant.value() == expected;
  };
  return isConstant(loop.getLowerBound()[0], 0) &&
         isConstant(loop.getUpperBound()[0], 1) &&
         isConstant(loop.getStep()[0], 1);
}

scf::ParallelOp msamp::singleThreadBody(Operation *op) {
  auto blocks = dyn_cast<scf::ParallelOp>(op);
  if (!blocks || !isOneIteration(blocks))
    return {};
  DictionaryAttr cost = gpucost::kernelCostOf(blocks.getLoc());
  auto name = cost ? cost.getAs<StringAttr>("op") : nullptr;
  if (!name || name.getValue() != kScalarOp)
    return {};
  Block *body = blocks.getBody();
  if (body->getOperations().size() != 2)
    return {};
  auto threads = dyn_cast<scf::ParallelOp>(body->front());
  if (!threads || !isOneIteration(threads))
    return {};
  return threads;
}

bool msamp::isKernelLocalScalar(Value buffer, ArrayRef<Block *> bodies) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType().getRank() != 0)
    return false;
  // The first access: the earliest body, then the earliest op in it.
  Operation *first = nullptr;
  size_t firstBody = bodies.size();
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user))
      continue;
    const auto *body = llvm::find(bodies, user->getBlock());
    if (body == bodies.end())
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (store.getMemRef() != buffer)
        return false; // the buffer's address stored as a value
    } else if (!isa<memref::LoadOp>(user)) {
      return false;
    }
    size_t index = body - bodies.begin();
    if (!first || index < firstBody ||
        (index == firstBody && user->isBeforeInBlock(first))) {
      first = user;
      firstBody = index;
    }
  }
  return first && isa<memref::StoreOp>(first);
}
