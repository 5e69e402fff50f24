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
#include "mlir/IR/SymbolTable.h"
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

/// The value `value` is a view of: through views, casts and the base buffer
/// of extract_strided_metadata, as far as they go.
static Value getViewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
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
    break;
  }
  return value;
}

namespace {
/// Walks a function in program order and, at each call of a function of the
/// module (a layer or loop nest msamp-outline-* made a function), the
/// callee's body in place of the call: every call is its own instance of
/// the callee's allocations, and the buffers a callee returns are the call
/// results' (freed where the caller frees them).
class PlanWalker {
public:
  PlanWalker(BufferPlan::Buffers &buffers, ModuleOp module) : buffers(buffers) {
    if (module)
      symbols.emplace(module);
  }

  /// Walks `func` with `bound` (argument -> buffer index) and returns the
  /// buffer index of each result, if it is one of the plan's buffers.
  FailureOr<SmallVector<std::optional<unsigned>>>
  walk(func::FuncOp func, llvm::DenseMap<Value, unsigned> bound) {
    SmallVector<std::optional<unsigned>> returned;
    bool ok = true;
    auto bufferOf = [&](Value value) -> std::optional<unsigned> {
      auto it = bound.find(getViewRoot(value));
      if (it == bound.end())
        return std::nullopt;
      return it->second;
    };
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!ok)
        return WalkResult::interrupt();
      ++position;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        std::optional<int64_t> bytes = getStaticMemRefBytes(alloc.getType());
        if (!bytes) {
          alloc.emitError("msamp-buffer-plan: cannot size the allocation of ")
              << alloc.getType() << " (expected a static shape)";
          ok = false;
          return WalkResult::interrupt();
        }
        bound[alloc.getResult()] = buffers.size();
        buffers.push_back({alloc, *bytes, position, 0, false});
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        std::optional<unsigned> index = bufferOf(dealloc.getMemref());
        if (index && !buffers[*index].freed) {
          buffers[*index].end = position;
          buffers[*index].freed = true;
        }
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols ? symbols->lookup<func::FuncOp>(call.getCallee())
                              : func::FuncOp();
        if (!callee || callee.isExternal())
          return WalkResult::advance();
        llvm::DenseMap<Value, unsigned> calleeBound;
        for (auto [operand, argument] :
             llvm::zip_equal(call.getOperands(), callee.getArguments()))
          if (std::optional<unsigned> index = bufferOf(operand))
            calleeBound[argument] = *index;
        auto results = walk(callee, std::move(calleeBound));
        if (failed(results)) {
          ok = false;
          return WalkResult::interrupt();
        }
        for (auto [result, index] :
             llvm::zip_equal(call.getResults(), *results))
          if (index)
            bound[result] = *index;
      } else if (auto ret = dyn_cast<func::ReturnOp>(op);
                 ret && ret->getParentOp() == func) {
        for (Value operand : ret.getOperands())
          returned.push_back(bufferOf(operand));
      }
      return WalkResult::advance();
    });
    if (!ok)
      return failure();
    return returned;
  }

  unsigned getPosition() const { return position; }

private:
  BufferPlan::Buffers &buffers;
  std::optional<SymbolTable> symbols;
  unsigned position = 0;
};
} // namespace

FailureOr<BufferPlan> BufferPlan::compute(func::FuncOp func) {
  BufferPlan plan;
  for (Type type : func.getArgumentTypes())
    if (auto memref = dyn_cast<MemRefType>(type))
      plan.argumentBytes += getStaticMemRefBytes(memref).value_or(0);

  // Program order: a pre-order walk numbers an op before the ops nested in
  // it, so a loop's body lies between the loop and what follows it.
  PlanWalker walker(plan.buffers, func->getParentOfType<ModuleOp>());
  bool ok = succeeded(walker.walk(func, llvm::DenseMap<Value, unsigned>()));
  unsigned position = walker.getPosition();
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
