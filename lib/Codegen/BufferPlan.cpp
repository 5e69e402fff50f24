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

#include "MSAMP/Codegen/ArenaLayout.h"
#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
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

Value mlir::msamp::getViewRoot(Value value) {
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

/// Whether `op` passes `operand` on as a value the plan does not follow:
/// into a loop's iteration arguments or out of a region (region branch ops
/// and terminators), through a select or a branch, or as a memref result
/// of an op that is no view of it. (A return is the walker's business.)
static bool forwardsBuffer(Operation *op, Value operand) {
  if (isa<memref::ExtractStridedMetadataOp, memref::DeallocOp, func::CallOp,
          func::ReturnOp>(op))
    return false; // a callee is walked with its arguments bound
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op))
    return cast.getNumOperands() != 1;
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource() != operand;
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      isa<RegionBranchOpInterface, BranchOpInterface>(op))
    return true;
  return llvm::any_of(op->getResultTypes(),
                      [](Type type) { return isa<BaseMemRefType>(type); });
}

namespace {
/// Walks a function in program order and, at each call of a function of the
/// module (a layer or loop nest msamp-outline-* made a function), the
/// callee's body in place of the call: every call is its own instance of
/// the callee's allocations, and the buffers a callee returns are the call
/// results' (freed where the caller frees them).
///
/// Last uses: every op being walked is a frame on a stack; a buffer
/// allocated by an op at depth d and used by an op nested deeper is live
/// until the frame at depth d closes (the end of the loop or if that holds
/// the use, or of the call whose callee uses it).
class PlanWalker {
public:
  PlanWalker(BufferPlan::Buffers &buffers, func::FuncOp top)
      : buffers(buffers), top(top) {
    ModuleOp module = top->getParentOfType<ModuleOp>();
    if (module)
      symbols.emplace(module);
  }

  /// Walks `func` with `bound` (argument -> buffer index) and returns the
  /// buffer index of each result, if it is one of the plan's buffers.
  FailureOr<SmallVector<std::optional<unsigned>>>
  walk(func::FuncOp func, llvm::DenseMap<Value, unsigned> bound, bool inLoop) {
    SmallVector<std::optional<unsigned>> returned;
    // The function op itself takes a position, as in a pre-order walk.
    ++position;
    for (Block &block : func.getBody())
      for (Operation &op : block)
        if (failed(walkOp(&op, func, bound, returned, inLoop)))
          return failure();
    return returned;
  }

  unsigned getPosition() const { return position; }

private:
  std::optional<unsigned> bufferOf(const llvm::DenseMap<Value, unsigned> &bound,
                                   Value value) const {
    auto it = bound.find(getViewRoot(value));
    if (it == bound.end())
      return std::nullopt;
    return it->second;
  }

  LogicalResult walkOp(Operation *op, func::FuncOp func,
                       llvm::DenseMap<Value, unsigned> &bound,
                       SmallVector<std::optional<unsigned>> &returned,
                       bool inLoop) {
    ++position;
    const unsigned depth = frames.size();
    frames.emplace_back();
    // A dealloc frees, and a view or cast is used where its result is
    // (traced back by getViewRoot): neither extends a lifetime.
    const bool isUse =
        !isa<memref::DeallocOp, memref::ExtractStridedMetadataOp,
             UnrealizedConversionCastOp, ViewLikeOpInterface>(op);
    for (Value operand : op->getOperands()) {
      std::optional<unsigned> index = bufferOf(bound, operand);
      if (!index)
        continue;
      if (isUse)
        frames[std::min(depthOf[*index], depth)].push_back(*index);
      if (forwardsBuffer(op, operand) ||
          (isa<func::ReturnOp>(op) && func == top))
        buffers[*index].escapes = true;
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      std::optional<int64_t> bytes = getStaticMemRefBytes(alloc.getType());
      if (!bytes)
        return alloc.emitError(
                   "msamp-buffer-plan: cannot size the allocation of ")
               << alloc.getType() << " (expected a static shape)";
      bound[alloc.getResult()] = buffers.size();
      depthOf.push_back(depth);
      PlannedBuffer buffer{alloc, *bytes, position, 0, false};
      buffer.lastUse = position;
      buffer.repeated = inLoop;
      buffers.push_back(buffer);
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      std::optional<unsigned> index = bufferOf(bound, dealloc.getMemref());
      if (index && !buffers[*index].freed) {
        buffers[*index].end = position;
        buffers[*index].freed = true;
      }
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = symbols ? symbols->lookup<func::FuncOp>(call.getCallee())
                            : func::FuncOp();
      if (callee && !callee.isExternal()) {
        llvm::DenseMap<Value, unsigned> calleeBound;
        for (auto [operand, argument] :
             llvm::zip_equal(call.getOperands(), callee.getArguments()))
          if (std::optional<unsigned> index = bufferOf(bound, operand))
            calleeBound[argument] = *index;
        auto results = walk(callee, std::move(calleeBound), inLoop);
        if (failed(results))
          return failure();
        for (auto [result, index] :
             llvm::zip_equal(call.getResults(), *results))
          if (index) {
            bound[result] = *index;
            // Allocated, as far as the caller is concerned, by the call.
            depthOf[*index] = depth;
          }
      }
    } else if (auto ret = dyn_cast<func::ReturnOp>(op);
               ret && ret->getParentOp() == func) {
      for (Value operand : ret.getOperands())
        returned.push_back(bufferOf(bound, operand));
    }
    const bool loop = inLoop || isa<LoopLikeOpInterface>(op);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &inner : block)
          if (failed(walkOp(&inner, func, bound, returned, loop)))
            return failure();
    for (unsigned index : frames.back())
      buffers[index].lastUse = std::max(buffers[index].lastUse, position);
    frames.pop_back();
    return success();
  }

  BufferPlan::Buffers &buffers;
  /// The function planned: what its return passes on escapes the plan.
  func::FuncOp top;
  std::optional<SymbolTable> symbols;
  unsigned position = 0;
  /// The buffers used inside each op being walked, by the depth of the op
  /// that allocated them.
  SmallVector<SmallVector<unsigned>> frames;
  /// Per buffer, the depth of the op that allocated it.
  SmallVector<unsigned> depthOf;
};
} // namespace

/// The most bytes of the buffers `counted` selects live at once, each from
/// its alloc to its dealloc; `peakOp` (if given) is the alloc that reaches
/// it.
static int64_t
peakOfBuffers(llvm::ArrayRef<PlannedBuffer> buffers,
              llvm::function_ref<bool(const PlannedBuffer &)> counted,
              Operation **peakOp) {
  // Sweep: +bytes at the alloc, -bytes just after the dealloc. At one
  // position frees come before allocations (a dealloc and an alloc never
  // share a position; the order only matters for ties after it).
  struct Event {
    unsigned position;
    int64_t delta;
    Operation *op;
  };
  llvm::SmallVector<Event> events;
  for (const PlannedBuffer &buffer : buffers) {
    if (!counted(buffer))
      continue;
    events.push_back({buffer.start, buffer.bytes, buffer.alloc});
    events.push_back({buffer.end + 1, -buffer.bytes, nullptr});
  }
  llvm::sort(events, [](const Event &a, const Event &b) {
    if (a.position != b.position)
      return a.position < b.position;
    return a.delta < b.delta;
  });
  int64_t live = 0, peak = 0;
  for (const Event &event : events) {
    live += event.delta;
    if (event.delta > 0 && live > peak) {
      peak = live;
      if (peakOp)
        *peakOp = event.op;
    }
  }
  return peak;
}

FailureOr<BufferPlan> BufferPlan::compute(func::FuncOp func) {
  BufferPlan plan;
  for (Type type : func.getArgumentTypes())
    if (auto memref = dyn_cast<MemRefType>(type))
      plan.argumentBytes += getStaticMemRefBytes(memref).value_or(0);

  // Program order: a pre-order walk numbers an op before the ops nested in
  // it, so a loop's body lies between the loop and what follows it.
  PlanWalker walker(plan.buffers, func);
  bool ok = succeeded(
      walker.walk(func, llvm::DenseMap<Value, unsigned>(), /*inLoop=*/false));
  unsigned position = walker.getPosition();
  if (!ok)
    return failure();
  llvm::DenseMap<Operation *, unsigned> instances;
  for (PlannedBuffer &buffer : plan.buffers)
    ++instances[buffer.alloc];
  for (PlannedBuffer &buffer : plan.buffers) {
    if (!buffer.freed)
      buffer.end = position;
    if (buffer.escapes)
      buffer.lastUse = position;
    if (instances[buffer.alloc] > 1)
      buffer.repeated = true;
  }

  plan.peakStepBytes = peakOfBuffers(
      plan.buffers, [](const PlannedBuffer &) { return true; }, &plan.peakOp);
  return plan;
}

void BufferPlan::placeInArena(
    llvm::function_ref<int(const PlannedBuffer &)> regionOf,
    unsigned numRegions, int64_t alignment) {
  arenas.assign(numRegions, PlannedArena());
  std::vector<std::vector<ArenaInterval>> intervals(numRegions);
  std::vector<std::vector<unsigned>> members(numRegions);
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    buffer.region = -1;
    buffer.offset = -1;
    int region = regionOf(buffer);
    if (region < 0 || region >= static_cast<int>(numRegions))
      continue;
    assert(isPlaceable(buffer) && "placing a buffer with unknown uses");
    buffer.region = region;
    intervals[region].push_back({buffer.bytes, buffer.start, buffer.lastUse});
    members[region].push_back(index);
  }
  for (unsigned region = 0; region < numRegions; ++region) {
    ArenaLayout layout = layoutArena(intervals[region], alignment);
    for (auto [member, offset] :
         llvm::zip_equal(members[region], layout.offsets))
      buffers[member].offset = offset;
    arenas[region] = {layout.bytes, layout.peakBytes,
                      static_cast<int64_t>(members[region].size())};
  }
}

void BufferPlan::record(ModuleOp module, func::FuncOp func,
                        bool runsFromArenas) const {
  Builder b(module.getContext());
  Location at = peakOp ? peakOp->getLoc() : func.getLoc();
  int64_t stepBytes = peakStepBytes;
  if (runsFromArenas) {
    stepBytes = peakOfBuffers(
        buffers, [](const PlannedBuffer &buffer) { return buffer.region < 0; },
        nullptr);
    for (const PlannedArena &arena : arenas)
      stepBytes += arena.bytes;
  }
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr(kPlanPeakBytes,
                     b.getI64IntegerAttr(argumentBytes + stepBytes)),
      b.getNamedAttr(kPlanSessionBytes, b.getI64IntegerAttr(argumentBytes)),
      b.getNamedAttr(kPlanStepBytes, b.getI64IntegerAttr(stepBytes)),
      b.getNamedAttr(kPlanBuffers,
                     b.getI64IntegerAttr(static_cast<int64_t>(buffers.size()))),
      b.getNamedAttr(kPlanAt, at)};
  if (!arenas.empty()) {
    fields.push_back(
        b.getNamedAttr(kPlanArenaBytes, b.getI64IntegerAttr(arenas[0].bytes)));
    fields.push_back(b.getNamedAttr(kPlanArenaPeakBytes,
                                    b.getI64IntegerAttr(arenas[0].peakBytes)));
    fields.push_back(b.getNamedAttr(kPlanArenaBuffers,
                                    b.getI64IntegerAttr(arenas[0].buffers)));
  }
  if (arenas.size() > 1) {
    fields.push_back(b.getNamedAttr(kPlanHostArenaBytes,
                                    b.getI64IntegerAttr(arenas[1].bytes)));
    fields.push_back(b.getNamedAttr(kPlanHostArenaBuffers,
                                    b.getI64IntegerAttr(arenas[1].buffers)));
  }
  module->setAttr(kBufferPlanAttr, b.getDictionaryAttr(fields));
}
