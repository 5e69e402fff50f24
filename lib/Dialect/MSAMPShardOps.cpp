//===- MSAMPShardOps.cpp - msamp.reduce_scatter and msamp.all_gather ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The verifiers of ZeRO's flat-shard collectives (issue 20): 1-D payloads,
// one element type, and a result `world_size` times smaller (reduce-scatter)
// or larger (all-gather) than the input.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

/// `shard` is 1-D, `whole` 1-D of world_size times its length, both of one
/// element type.
static LogicalResult verifyShards(Operation *op, RankedTensorType shard,
                                  RankedTensorType whole, int64_t world) {
  if (shard.getRank() != 1 || whole.getRank() != 1 || !shard.hasStaticShape() ||
      !whole.hasStaticShape())
    return op->emitOpError("flat shards are static 1-D tensors, got ")
           << shard << " and " << whole;
  if (shard.getElementType() != whole.getElementType())
    return op->emitOpError("the input and the result have one element type, "
                           "got ")
           << shard.getElementType() << " and " << whole.getElementType();
  if (whole.getDimSize(0) != shard.getDimSize(0) * world)
    return op->emitOpError("the whole buffer has world_size (")
           << world << ") shards of " << shard.getDimSize(0)
           << " elements, got " << whole.getDimSize(0);
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyShards(*this, getResult().getType(), getInput().getType(),
                          getWorldSize())))
    return failure();
  if (getKind() == ReduceKind::Mean &&
      !getInput().getType().getElementType().isF32())
    return emitOpError("an FP8 payload is reduced as codes (sum or max); the "
                       "caller divides each tensor's inverse scale for a mean");
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyShards(*this, getInput().getType(), getResult().getType(),
                      getWorldSize());
}
