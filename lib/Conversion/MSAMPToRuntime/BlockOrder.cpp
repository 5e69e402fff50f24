//===- BlockOrder.cpp - op order of one block, kept across a rewrite -----===//

#include "BlockOrder.h"

using namespace mlir;
using namespace mlir::msamp;

BlockOrder::BlockOrder(Block &block) : block(block) {
  uint64_t index = 0;
  for (Operation &op : block)
    positions[&op] = {index++, /*original=*/true};
}

bool BlockOrder::isBefore(Operation *a, Operation *b) const {
  assert(a->getBlock() == &block && b->getBlock() == &block &&
         "ops of another block");
  if (a == b)
    return false;
  auto pa = positions.find(a), pb = positions.find(b);
  if (pa != positions.end() && pb != positions.end()) {
    // Before an original: a key at most its index; after it: more.
    if (pb->second.original)
      return pa->second.key <= pb->second.key;
    if (pa->second.original)
      return pa->second.key < pb->second.key;
  }
  return a->isBeforeInBlock(b);
}

void BlockOrder::notifyOperationInserted(Operation *op,
                                         OpBuilder::InsertPoint previous) {
  // A move loses its old key: it is no original any more.
  positions.erase(op);
  if (op->getBlock() != &block)
    return;
  Operation *next = op->getNextNode();
  auto it = next ? positions.find(next) : positions.end();
  // An unknown successor (made by a builder this listener never saw): `op`
  // gets no key either, and its queries fall back.
  if (it == positions.end())
    return;
  // Copied before inserting, which may rehash.
  uint64_t key = it->second.key;
  positions[op] = {key, /*original=*/false};
}

void BlockOrder::notifyOperationErased(Operation *op) { positions.erase(op); }
