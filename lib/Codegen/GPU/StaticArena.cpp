//===- StaticArena.cpp - --msamp-gpu-static-arena -------------------------===//
//
// Part of the msamp project. What and why: the pass's description in
// include/MSAMP/Codegen/GPU/Passes.td and docs/GPU.md "Static device arena".
//
// Placement is the buffer plan's (BufferPlan::placeInArena): this pass
// decides which arena a buffer belongs in and rewrites the IR.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferPlan.h"
#include "MSAMP/Codegen/BufferPlanAttr.h"
#include "MSAMP/Codegen/GPU/CallSites.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/StreamOrderedCalls.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSTATICARENA
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

enum Arena : int { kDeviceArena = 0, kHostArena = 1, kNumArenas = 2 };

/// The runtime functions that hand out each arena's base
/// (msamp_gpu_host.h).
constexpr StringLiteral kArenaFunctions[kNumArenas] = {
    "msamp_rt_gpu_arena", "msamp_rt_gpu_host_arena"};

/// The argument attribute of a callee's frame: "device" or "host", the
/// arena its buffers belong in.
constexpr StringLiteral kFrameAttr = "msamp.frame";

/// Whether only the device touches `value` and its views: kernels (uses
/// inside an scf.parallel, which becomes a gpu.launch, or inside a
/// gpu.launch already made, msamp-gpu-row-reductions), the runtime calls
/// that run on the stream (the CUDA backend uses their device pointers in
/// place, RuntimeABI.md 10.2; StreamOrderedCalls.h) and deallocs. Any other
/// use is host code, a runtime call that is not stream-ordered too: it runs
/// on the host after a wait and reads its operands there, so its buffer
/// must be host-visible. (msamp_rt_check_computed_index is stream-ordered:
/// its indices are checked on the device.)
bool onlyDeviceUses(Value value, SymbolTable &symbols) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user) ||
        user->getParentOfType<scf::ParallelOp>() ||
        user->getParentOfType<gpu::LaunchOp>())
      continue;
    // An address taken for a runtime call's table of buffers
    // (msamp_rt_adam_update_multi, AdamGroupToRuntime.cpp): the backend
    // uses it on the device like a call operand.
    if (isa<memref::ExtractAlignedPointerAsIndexOp>(user))
      continue;
    if (auto call = dyn_cast<func::CallOp>(user)) {
      if (isStreamOrderedCall(call.getCallee()))
        continue;
      // A function of the module (a layer outlined before bufferization):
      // what its body does with the argument.
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() &&
          onlyDeviceUses(callee.getArgument(use.getOperandNumber()), symbols))
        continue;
      return false;
    }
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
      if (!onlyDeviceUses(meta.getBaseBuffer(), symbols))
        return false;
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    auto cast = dyn_cast<UnrealizedConversionCastOp>(user);
    if ((view && view.getViewSource() == use.get()) ||
        (cast && cast.getNumOperands() == 1)) {
      for (Value result : user->getResults())
        if (!onlyDeviceUses(result, symbols))
          return false;
      continue;
    }
    return false;
  }
  return true;
}

/// Whether `value` or a view of it reaches a memref.dealloc, in its own
/// function or in a function of the module it is passed to: a placed buffer
/// loses its deallocs, which are only the planned function's to remove.
/// (Ownership-based deallocation frees no argument of a private function,
/// so a layer outlined before bufferization never frees what it is given.)
bool freedByCallee(Value value, SymbolTable &symbols, bool ownDeallocs) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user)) {
      if (ownDeallocs)
        continue;
      return true;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() &&
          freedByCallee(callee.getArgument(use.getOperandNumber()), symbols,
                        /*ownDeallocs=*/false))
        return true;
      continue;
    }
    for (Value result : user->getResults())
      if (isa<BaseMemRefType>(result.getType()) &&
          getViewRoot(result) == getViewRoot(value) &&
          freedByCallee(result, symbols, ownDeallocs))
        return true;
  }
  return false;
}

/// Whether the plan's offsets can stand for `alloc`: a plain buffer of the
/// planned function itself (a view of an i8 arena has the identity layout
/// and the default memory space) that no callee of the module frees.
bool isPlaceableAlloc(const PlannedBuffer &buffer, func::FuncOp func,
                      SymbolTable &symbols) {
  memref::AllocOp alloc = buffer.alloc;
  MemRefType type = alloc.getType();
  return BufferPlan::isPlaceable(buffer) &&
         alloc->getParentOfType<func::FuncOp>() == func &&
         type.getLayout().isIdentity() && !type.getMemorySpace() &&
         !freedByCallee(alloc.getResult(), symbols, /*ownDeallocs=*/true);
}

/// The functions of the module that `func` calls, directly or not, each
/// after every function it calls, then `func`.
void appendCalleesFirst(func::FuncOp func, SymbolTable &symbols,
                        llvm::SetVector<func::FuncOp> &order) {
  if (order.contains(func))
    return;
  func.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && !callee.isExternal())
      appendCalleesFirst(callee, symbols, order);
  });
  order.insert(func);
}

/// memref<bytes x i8> at the pointer `ptr` (!llvm.ptr): the descriptor
/// finalize-memref-to-llvm would build, cast to the memref.
Value viewOfPointer(OpBuilder &b, Location loc, Value ptr, int64_t bytes) {
  MLIRContext *context = b.getContext();
  Type i64 = b.getI64Type();
  auto array = LLVM::LLVMArrayType::get(i64, 1);
  auto descriptor = LLVM::LLVMStructType::getLiteral(
      context, {ptr.getType(), ptr.getType(), i64, array, array});
  Value value = LLVM::PoisonOp::create(b, loc, descriptor);
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  value = LLVM::InsertValueOp::create(b, loc, value, ptr, ArrayRef<int64_t>{0});
  value = LLVM::InsertValueOp::create(b, loc, value, ptr, ArrayRef<int64_t>{1});
  value = LLVM::InsertValueOp::create(b, loc, value, constant(0),
                                      ArrayRef<int64_t>{2});
  value = LLVM::InsertValueOp::create(b, loc, value, constant(bytes),
                                      ArrayRef<int64_t>{3, 0});
  value = LLVM::InsertValueOp::create(b, loc, value, constant(1),
                                      ArrayRef<int64_t>{4, 0});
  auto type = MemRefType::get({bytes}, b.getI8Type());
  return UnrealizedConversionCastOp::create(b, loc, type, value).getResult(0);
}

struct StaticArenaPass : msamp::impl::MSAMPGPUStaticArenaBase<StaticArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = findFunctionOfKind(module, kTrainStep);
    if (!step)
      return markAllAnalysesPreserved();
    SymbolTable symbols(module);
    // The step's callees (layers outlined before bufferization) are planned
    // first, each into frames its callers allocate around every call; the
    // step plans those frames with its own buffers.
    llvm::SetVector<func::FuncOp> order;
    appendCalleesFirst(step, symbols, order);
    CallSites callsOf = collectCallSites(module, symbols);
    for (func::FuncOp func : order)
      if (failed(placeBuffers(func, func == step, symbols, callsOf)))
        return signalPassFailure();
  }

  /// Places `func`'s buffers: the step's in the arenas, whose bases it takes
  /// at its entry; a callee's in frames, one argument per arena it uses,
  /// which every caller allocates right before the call and frees right
  /// after it (a buffer of the caller's own plan, live for the call).
  LogicalResult placeBuffers(func::FuncOp func, bool isStep,
                             SymbolTable &symbols, const CallSites &callsOf) {
    // A buffer only ever stored to (a fill nothing reads) is dead: the
    // canonicalizer erases such an alloc with its stores, which it cannot
    // once the buffer is a view of an arena. Erase them first.
    RewritePatternSet patterns(&getContext());
    memref::AllocOp::getCanonicalizationPatterns(patterns, &getContext());
    // Only those patterns: no folding, and no region simplification, which
    // walked every region of the step on every iteration (0.4 s of this
    // pass's 0.55 at 48 layers, issue 19) for allocs that have none.
    if (failed(applyPatternsGreedily(
            func, std::move(patterns),
            GreedyRewriteConfig()
                .enableFolding(false)
                .setRegionSimplificationLevel(
                    GreedySimplifyRegionLevel::Disabled))))
      return failure();

    FailureOr<BufferPlan> plan = BufferPlan::compute(func);
    if (failed(plan))
      return failure();
    plan->placeInArena(
        [&](const PlannedBuffer &buffer) -> int {
          if (!isPlaceableAlloc(buffer, func, symbols))
            return -1;
          memref::AllocOp alloc = buffer.alloc;
          return onlyDeviceUses(alloc.getResult(), symbols) ? kDeviceArena
                                                            : kHostArena;
        },
        kNumArenas, kArenaAlignment);
    if (isStep)
      plan->record(func->getParentOfType<ModuleOp>(), func,
                   /*runsFromArenas=*/true);

    Value bases[kNumArenas];
    // The step's bases, once, at its entry, in arena order.
    OpBuilder entry(&func.getBody().front(), func.getBody().front().begin());
    for (int arena = 0; arena < kNumArenas; ++arena) {
      if (plan->getArenas()[arena].buffers == 0)
        continue;
      int64_t bytes = plan->getArenas()[arena].bytes;
      bases[arena] = isStep ? takeArenaBase(entry, func, arena, bytes)
                            : addFrame(func, arena, bytes, callsOf);
      if (!bases[arena])
        return failure();
    }

    // Deallocs of placed buffers (or of views of them) go; then each alloc
    // becomes a view of its arena.
    llvm::DenseSet<Operation *> placed;
    for (const PlannedBuffer &buffer : plan->getBuffers())
      if (buffer.region >= 0)
        placed.insert(buffer.alloc);
    SmallVector<memref::DeallocOp> deallocs;
    func.walk([&](memref::DeallocOp dealloc) {
      if (placed.contains(getViewRoot(dealloc.getMemref()).getDefiningOp()))
        deallocs.push_back(dealloc);
    });
    for (memref::DeallocOp dealloc : deallocs)
      dealloc.erase();
    OpBuilder b(&getContext());
    for (const PlannedBuffer &buffer : plan->getBuffers()) {
      if (buffer.alloc->getParentOfType<func::FuncOp>() != func)
        continue; // a callee's, counted where it is planned
      if (buffer.region < 0) {
        ++numKept;
        continue;
      }
      (buffer.region == kDeviceArena ? numDevice : numHost)++;
      memref::AllocOp alloc = buffer.alloc;
      b.setInsertionPoint(alloc);
      Value offset =
          arith::ConstantIndexOp::create(b, alloc.getLoc(), buffer.offset);
      Value view =
          memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                 bases[buffer.region], offset, ValueRange{});
      alloc.getResult().replaceAllUsesWith(view);
      alloc.erase();
    }

    // Host memory of the emulation is the step's to free, at every return.
    if (hostMemory && isStep)
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        for (Value base : bases)
          if (base)
            memref::DeallocOp::create(b, ret.getLoc(), base);
      });
    return success();
  }

  /// The step's base of `arena`, taken once at its entry: from the runtime,
  /// or (host emulation) a buffer of the step.
  Value takeArenaBase(OpBuilder &b, func::FuncOp step, int arena,
                      int64_t bytes) {
    ModuleOp module = step->getParentOfType<ModuleOp>();
    Location loc = step.getLoc();
    if (hostMemory) {
      auto type = MemRefType::get({bytes}, b.getI8Type());
      return memref::AllocOp::create(b, loc, type,
                                     b.getI64IntegerAttr(kArenaAlignment));
    }
    func::FuncOp callee = getArenaFunction(module, kArenaFunctions[arena]);
    Value size = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
    Value ptr =
        func::CallOp::create(b, loc, callee, ValueRange{size}).getResult(0);
    return viewOfPointer(b, loc, ptr, bytes);
  }

  /// A new last argument of `callee`, `memref<bytes x i8>`, marked with its
  /// arena (kFrameAttr); each call passes a buffer allocated right before it
  /// and freed right after it. The caller's own plan places that buffer in
  /// the arena its uses in the callee call for.
  Value addFrame(func::FuncOp callee, int arena, int64_t bytes,
                 const CallSites &callsOf) {
    OpBuilder b(callee.getContext());
    auto type = MemRefType::get({bytes}, b.getI8Type());
    unsigned index = callee.getNumArguments();
    auto attrs = b.getDictionaryAttr(b.getNamedAttr(
        kFrameAttr,
        b.getStringAttr(arena == kDeviceArena ? "device" : "host")));
    if (failed(callee.insertArgument(index, type, attrs, callee.getLoc()))) {
      callee.emitError("msamp-gpu-static-arena: cannot add the frame argument "
                       "of this function's buffers");
      return {};
    }
    auto calls = callsOf.find(callee);
    if (calls != callsOf.end())
      for (func::CallOp call : calls->second) {
        b.setInsertionPoint(call);
        Value frame = memref::AllocOp::create(
            b, call.getLoc(), type, b.getI64IntegerAttr(kArenaAlignment));
        call->insertOperands(call->getNumOperands(), frame);
        b.setInsertionPointAfter(call);
        memref::DeallocOp::create(b, call.getLoc(), frame);
      }
    return callee.getArgument(index);
  }

  /// `void *name(int64_t bytes)`, declared once.
  func::FuncOp getArenaFunction(ModuleOp module, StringRef name) {
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder b(module.getBodyRegion());
    auto type = b.getFunctionType({b.getI64Type()},
                                  {LLVM::LLVMPointerType::get(b.getContext())});
    auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
    fn.setPrivate();
    return fn;
  }
};

} // namespace
