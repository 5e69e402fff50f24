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
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/StreamOrderedCalls.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

/// Whether only the device touches `value` and its views: kernels (uses
/// inside an scf.parallel, which becomes a gpu.launch, or inside a
/// gpu.launch already made, msamp-gpu-row-reductions), the runtime calls
/// that run on the stream (the CUDA backend uses their device pointers in
/// place, RuntimeABI.md 10.2; StreamOrderedCalls.h) and deallocs. Any other
/// use is host code, a runtime call that is not stream-ordered too: it runs
/// on the host after a wait and reads its operands there, so its buffer
/// must be host-visible. (msamp_rt_check_computed_index is stream-ordered:
/// its indices are checked on the device.)
bool onlyDeviceUses(Value value) {
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
      return false;
    }
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
      if (!onlyDeviceUses(meta.getBaseBuffer()))
        return false;
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    auto cast = dyn_cast<UnrealizedConversionCastOp>(user);
    if ((view && view.getViewSource() == use.get()) ||
        (cast && cast.getNumOperands() == 1)) {
      for (Value result : user->getResults())
        if (!onlyDeviceUses(result))
          return false;
      continue;
    }
    return false;
  }
  return true;
}

/// Whether `value` or a view of it is an operand of a call of a function
/// the module defines (which might free it: its deallocs are not the
/// step's to remove).
bool reachesDefinedCallee(Value value, SymbolTable &symbols) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal())
        return true;
      continue;
    }
    for (Value result : user->getResults())
      if (isa<BaseMemRefType>(result.getType()) &&
          getViewRoot(result) == getViewRoot(value) &&
          reachesDefinedCallee(result, symbols))
        return true;
  }
  return false;
}

/// Whether the plan's offsets can stand for `alloc`: a plain buffer of the
/// step itself (a view of an i8 arena has the identity layout and the
/// default memory space) that no callee of the module receives.
bool isPlaceableAlloc(const PlannedBuffer &buffer, func::FuncOp step,
                      SymbolTable &symbols) {
  memref::AllocOp alloc = buffer.alloc;
  MemRefType type = alloc.getType();
  return BufferPlan::isPlaceable(buffer) &&
         alloc->getParentOfType<func::FuncOp>() == step &&
         type.getLayout().isIdentity() && !type.getMemorySpace() &&
         !reachesDefinedCallee(alloc.getResult(), symbols);
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
    // A buffer only ever stored to (a fill nothing reads) is dead: the
    // canonicalizer erases such an alloc with its stores, which it cannot
    // once the buffer is a view of an arena. Erase them first.
    RewritePatternSet patterns(&getContext());
    memref::AllocOp::getCanonicalizationPatterns(patterns, &getContext());
    // Only those patterns: no folding, and no region simplification, which
    // walked every region of the step on every iteration (0.4 s of this
    // pass's 0.55 at 48 layers, issue 19) for allocs that have none.
    if (failed(applyPatternsGreedily(
            step, std::move(patterns),
            GreedyRewriteConfig()
                .enableFolding(false)
                .setRegionSimplificationLevel(
                    GreedySimplifyRegionLevel::Disabled))))
      return signalPassFailure();

    FailureOr<BufferPlan> plan = BufferPlan::compute(step);
    if (failed(plan))
      return signalPassFailure();
    SymbolTable symbols(module);
    plan->placeInArena(
        [&](const PlannedBuffer &buffer) -> int {
          if (!isPlaceableAlloc(buffer, step, symbols))
            return -1;
          memref::AllocOp alloc = buffer.alloc;
          return onlyDeviceUses(alloc.getResult()) ? kDeviceArena : kHostArena;
        },
        kNumArenas, kArenaAlignment);
    plan->record(module, step, /*runsFromArenas=*/true);

    // The bases, once, at the step's entry.
    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(&step.getBody().front());
    Location loc = step.getLoc();
    Value bases[kNumArenas];
    for (int arena = 0; arena < kNumArenas; ++arena) {
      int64_t bytes = plan->getArenas()[arena].bytes;
      if (plan->getArenas()[arena].buffers == 0)
        continue;
      if (hostMemory) {
        auto type = MemRefType::get({bytes}, b.getI8Type());
        bases[arena] = memref::AllocOp::create(
            b, loc, type, b.getI64IntegerAttr(kArenaAlignment));
        continue;
      }
      func::FuncOp callee = getArenaFunction(module, kArenaFunctions[arena]);
      Value size =
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
      Value ptr =
          func::CallOp::create(b, loc, callee, ValueRange{size}).getResult(0);
      bases[arena] = viewOfPointer(b, loc, ptr, bytes);
    }

    // Deallocs of placed buffers (or of views of them) go; then each alloc
    // becomes a view of its arena.
    llvm::DenseSet<Operation *> placed;
    for (const PlannedBuffer &buffer : plan->getBuffers())
      if (buffer.region >= 0)
        placed.insert(buffer.alloc);
    SmallVector<memref::DeallocOp> deallocs;
    step.walk([&](memref::DeallocOp dealloc) {
      if (placed.contains(getViewRoot(dealloc.getMemref()).getDefiningOp()))
        deallocs.push_back(dealloc);
    });
    for (memref::DeallocOp dealloc : deallocs)
      dealloc.erase();
    for (const PlannedBuffer &buffer : plan->getBuffers()) {
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
    if (hostMemory)
      step.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        for (Value base : bases)
          if (base)
            memref::DeallocOp::create(b, ret.getLoc(), base);
      });
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
