//===- KernelLocalScalars.cpp - 0-d buffers one kernel owns as values -----===//
//
// Part of the msamp project.
//
// msamp-gpu-split-scalar-buffers gives each 0-d value its own buffer, so
// that msamp-gpu-merge-scalar-kernels can move the single-thread kernels
// that store them freely. Once merged, many of those buffers are written
// and read by one kernel only: the gradient norm's running sum over the
// parameters stores each partial sum into a buffer of its own and loads it
// back for the next parameter. Each such buffer was a kernel parameter
// (one pointer), a slot of the arena, a store and a load: that chain took
// two parameters per parameter tensor, so it passed the single-thread
// kernels' parameter budget at about 30 layers of the benchmark LM and
// was cut into two kernels (one distinct kernel more from 32 layers on).
//
// Here a 0-d allocation whose only users are deallocations and loads and
// stores directly in the body of one single-thread kernel, where a store
// comes before any load, becomes a value of that kernel: each load reads
// the last value stored before it, and the stores, the loads, the
// deallocations and the allocation go. The kernel computes the same
// values in the same order, so the bits are unchanged.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUKERNELLOCALSCALARS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The 0-d allocation `op` loads from or stores into, or null.
memref::AllocOp accessedAlloc(Operation *op) {
  Value buffer;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    buffer = load.getMemRef();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    buffer = store.getMemRef();
  else
    return {};
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType().getRank() != 0)
    return {};
  return alloc;
}

struct KernelLocalScalarsPass
    : msamp::impl::MSAMPGPUKernelLocalScalarsBase<KernelLocalScalarsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> bodies;
    getOperation().walk([&](scf::ParallelOp op) {
      if (scf::ParallelOp body = singleThreadBody(op))
        bodies.push_back(body);
    });
    for (scf::ParallelOp body : bodies)
      localize(*body.getBody());
  }

  void localize(Block &body) {
    // The candidates, in the order of their first access (deterministic).
    llvm::MapVector<Operation *, bool> candidates;
    for (Operation &op : body)
      if (memref::AllocOp alloc = accessedAlloc(&op))
        candidates.insert({alloc, false});
    for (auto &[alloc, owned] : candidates)
      owned = isKernelLocalScalar(alloc->getResult(0), {&body});

    // Each load of an owned buffer reads the last value stored into it.
    DenseMap<Operation *, Value> current;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      memref::AllocOp alloc = accessedAlloc(&op);
      if (!alloc || !candidates.lookup(alloc))
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        current[alloc] = store.getValueToStore();
      } else {
        op.getResult(0).replaceAllUsesWith(current.lookup(alloc));
      }
      op.erase();
    }
    for (auto &[op, owned] : candidates) {
      if (!owned)
        continue;
      for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
        user->erase(); // the deallocations: nothing else is left
      op->erase();
      ++numLocalized;
    }
  }
};

} // namespace
