//===- BufferPlan.cpp - the static buffer plan of a train step --*- C++ -*-===//
//
// Lifetimes come from the IR the deallocation pipeline leaves: each buffer
// is freed by a memref.dealloc of the alloc itself or of a view of it (the
// base buffer of extract_strided_metadata, a cast), possibly under an
// scf.if. A dealloc whose operand does not trace back to one alloc frees
// nothing in the plan, so that buffer counts as live to the end of the step:
// the plan may overestimate, never underestimate.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::msamp;

std::optional<int64_t> mlir::msamp::getStaticMemRefBytes(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type elt = type.getElementType();
  int64_t elementBytes;
  if (isa<IndexType>(elt))
    elementBytes = 8;
  else if (elt.isIntOrFloat())
    elementBytes =
        static_cast<int64_t>(llvm::divideCeil(elt.getIntOrFloatBitWidth(), 8));
  else
    return std::nullopt;
  return type.getNumElements() * elementBytes;
}

/// The allocation `value` is (a view of), or null.
static memref::AllocOp getRootAlloc(Value value) {
  while (value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return nullptr;
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      return alloc;
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def)) {
      value = meta.getSource();
      continue;
    }
    if (auto cast = dyn_cast<UnrealizedConversionCastOp>(def);
        cast && cast.getNumOperands() == 1) {
      value = cast.getOperand(0);
      continue;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      value = view.getViewSource();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

FailureOr<BufferPlan> BufferPlan::compute(func::FuncOp func) {
  BufferPlan plan;
  for (Type type : func.getArgumentTypes())
    if (auto memref = dyn_cast<MemRefType>(type))
      plan.argumentBytes += getStaticMemRefBytes(memref).value_or(0);

  // Program order: a pre-order walk numbers an op before the ops nested in
  // it, so a loop's body lies between the loop and what follows it.
  llvm::DenseMap<Operation *, unsigned> allocIndex;
  unsigned position = 0;
  bool ok = true;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    ++position;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      std::optional<int64_t> bytes = getStaticMemRefBytes(alloc.getType());
      if (!bytes) {
        alloc.emitError("msamp-buffer-plan: cannot size the allocation of ")
            << alloc.getType() << " (expected a static shape)";
        ok = false;
        return;
      }
      allocIndex[op] = plan.buffers.size();
      plan.buffers.push_back({alloc, *bytes, position, 0, false});
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      memref::AllocOp root = getRootAlloc(dealloc.getMemref());
      auto it = root ? allocIndex.find(root) : allocIndex.end();
      if (it == allocIndex.end())
        return;
      PlannedBuffer &buffer = plan.buffers[it->second];
      if (!buffer.freed) {
        buffer.end = position;
        buffer.freed = true;
      }
    }
  });
  if (!ok)
    return failure();
  for (PlannedBuffer &buffer : plan.buffers)
    if (!buffer.freed)
      buffer.end = position;

  // Sweep: +bytes at the alloc, -bytes just after the dealloc. At one
  // position frees come before allocations (a dealloc and an alloc never
  // share a position; the order only matters for ties after it).
  struct Event {
    unsigned position;
    int64_t delta;
    Operation *op;
  };
  llvm::SmallVector<Event> events;
  for (const PlannedBuffer &buffer : plan.buffers) {
    events.push_back({buffer.start, buffer.bytes, buffer.alloc});
    events.push_back({buffer.end + 1, -buffer.bytes, nullptr});
  }
  llvm::sort(events, [](const Event &a, const Event &b) {
    if (a.position != b.position)
      return a.position < b.position;
    return a.delta < b.delta;
  });
  int64_t live = 0;
  for (const Event &event : events) {
    live += event.delta;
    if (event.delta > 0 && live > plan.peakStepBytes) {
      plan.peakStepBytes = live;
      plan.peakOp = event.op;
    }
  }
  return plan;
}
