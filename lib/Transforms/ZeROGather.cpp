//===- ZeROGather.cpp - O3's all-gathers of flat groups -------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "ZeROGather.h"
#include "ZeROShardIR.h"

#include "MSAMP/Dialect/MSAMPOps.h"

using namespace mlir;
using namespace mlir::msamp;

SmallVector<Value> mlir::msamp::zero_shard::gatherGroup(
    OpBuilder &b, Location loc, const FlatShardLayout &layout, Type stored,
    ArrayRef<GatherMember> members, int64_t me) {
  const int64_t world = layout.world;
  Value buffer = emptyFlat(b, loc, layout.shard, stored);
  for (const GatherMember &m : members)
    if (m.piece)
      buffer =
          insert(b, loc, m.piece, buffer, m.offset + m.lo - layout.bounds[me]);
  auto wholeType = RankedTensorType::get({layout.shard * world}, stored);
  Value whole = AllGatherOp::create(b, loc, wholeType, buffer, world);
  SmallVector<Value> result;
  for (const GatherMember &m : members) {
    const int64_t numel = m.type.getNumElements();
    Value flat;
    for (int64_t r = 0; r < world; ++r) {
      auto [a, e] = layout.piece(m.offset, numel, r);
      if (a >= e)
        continue;
      Value piece =
          slice(b, loc, whole, r * layout.shard + a - layout.bounds[r], e - a);
      if (e - a == numel) {
        flat = piece;
        break;
      }
      if (!flat)
        flat = emptyFlat(b, loc, numel, stored);
      flat = insert(b, loc, piece, flat, a - m.offset);
    }
    result.push_back(unflatten(b, loc, flat, m.type));
  }
  return result;
}

unsigned mlir::msamp::zero_shard::gatherBeforeUse(
    func::FuncOp func, const FlatShardLayout &layout, Type stored,
    ArrayRef<unsigned> args, ArrayRef<GatherMember> members,
    const llvm::SmallPtrSetImpl<Operation *> &readers, Operation *loss,
    int64_t me) {
  Block &entry = func.getBody().front();
  // The readers of each phase, as (member, use).
  SmallVector<std::pair<unsigned, OpOperand *>> phases[2];
  Operation *first[2] = {nullptr, nullptr};
  for (auto [k, index] : llvm::enumerate(args))
    for (OpOperand &use : func.getArgument(index).getUses()) {
      Operation *op = entry.findAncestorOpInBlock(*use.getOwner());
      if (!op || !readers.contains(op))
        continue;
      const unsigned phase =
          loss && loss != op && loss->isBeforeInBlock(op) ? 1 : 0;
      phases[phase].push_back({static_cast<unsigned>(k), &use});
      if (!first[phase] || op->isBeforeInBlock(first[phase]))
        first[phase] = op;
    }
  unsigned gathers = 0;
  for (unsigned phase = 0; phase < 2; ++phase) {
    if (!first[phase])
      continue;
    OpBuilder b(first[phase]);
    SmallVector<Value> whole =
        gatherGroup(b, first[phase]->getLoc(), layout, stored, members, me);
    for (auto [k, use] : phases[phase])
      use->set(whole[k]);
    ++gathers;
  }
  return gathers;
}
