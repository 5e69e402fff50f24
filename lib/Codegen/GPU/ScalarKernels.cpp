//===- ScalarKernels.cpp - the host's 0-d arithmetic as kernels
//------------===//
//
// Part of the msamp project.
//
// What has no parallel dimension stays host code between the kernels: the
// step counter, scales and their inverses, the loss and the gradient norm,
// as memref.load / arith / memref.store on 0-d buffers. The host must wait
// for the stream before each such run (it reads what a kernel or runtime
// call wrote): GPT-2 small waited about 2,700 times per step. Here each run
// becomes a kernel of one block of one thread (a nested 1 x 1 scf.parallel,
// which gpu-map-parallel-loops maps to blocks and threads), ordered on the
// stream like every other kernel: the host no longer touches device memory
// between them, so msamp-gpu-async-launches places no wait there.
//
// A run is a maximal sequence of ops that can execute in the kernel (loads,
// stores, scalar arith/math, scf.if of those), interleaved with ops that
// neither touch memory nor use the run's values (allocations, views,
// constants, pure ops on host values), which stay before the kernel. Any
// other op (a call, a kernel, a deallocation, a loop) ends the run, so no
// memory access moves across another. A run whose values host code uses
// after it is left on the host (a wait remains before it) and reported.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSCALARKERNELS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The value a 0-d constant global holds, or null (not a constant global).
TypedAttr constantOfGlobal(memref::GetGlobalOp get,
                           SymbolTableCollection &symbols) {
  auto global =
      symbols.lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
  if (!global || !global.getConstant())
    return {};
  auto init = dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
  if (!init || !init.isSplat())
    return {};
  return init.getSplatValue<TypedAttr>();
}

/// 0-d memref.copy (msamp-gpu-copies-to-linalg leaves them) -> a load (or
/// the constant of a constant global, whose host image no kernel can read)
/// and a store: the same bits, in ops a kernel can run.
void rewriteScalarCopies(func::FuncOp func) {
  SymbolTableCollection symbols;
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getRank() != 0 || target.getRank() != 0 ||
        source.getElementType() != target.getElementType())
      continue;
    OpBuilder b(copy);
    Value value;
    if (auto get = copy.getSource().getDefiningOp<memref::GetGlobalOp>()) {
      TypedAttr constant = constantOfGlobal(get, symbols);
      if (!constant)
        continue; // a mutable global: host memory, read by the host
      value = arith::ConstantOp::create(b, copy.getLoc(), constant);
    } else {
      value = memref::LoadOp::create(b, copy.getLoc(), copy.getSource());
    }
    memref::StoreOp::create(b, copy.getLoc(), value, copy.getTarget());
    copy.erase();
  }
}

/// Whether `op` (or an op nested in it) may touch `buffer`, an allocation.
bool mayTouch(Operation *op, Value buffer) {
  if (isa<memref::AllocOp>(op) || isMemoryEffectFree(op))
    return false;
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          rootBuffer(operand) == buffer)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// A load of a step buffer whose value is used only later (the amax a
/// runtime call wrote, gathered after many more calls at O3) moves down to
/// its first user when nothing in between may write that buffer: it then
/// joins the user's run instead of leaving a host load (and a wait) behind.
void sinkLoads(Block &block) {
  // The ops' order, numbered once: each move would otherwise make the next
  // isBeforeInBlock renumber the whole block (issue 19: quadratic in the
  // step). A load moved before `first` takes first's number and a sequence
  // number below first's own, so loads moved before the same op keep the
  // order in which they were moved, all before it.
  constexpr unsigned kInPlace = ~0u;
  llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>> position;
  SmallVector<memref::LoadOp> loads;
  unsigned numOps = 0;
  for (Operation &op : block) {
    position[&op] = {numOps++, kInPlace};
    if (auto load = dyn_cast<memref::LoadOp>(op))
      loads.push_back(load);
  }
  unsigned numMoved = 0;
  for (memref::LoadOp load : loads) {
    Value buffer = rootBuffer(load.getMemRef());
    if (!buffer.getDefiningOp<memref::AllocOp>() || load->use_empty())
      continue; // an argument may alias another: left in place
    Operation *first = nullptr;
    for (Operation *user : load->getUsers()) {
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (ancestor && (!first || position[ancestor] < position[first]))
        first = ancestor;
    }
    if (!first)
      continue;
    bool safe = true;
    for (Operation *op = load->getNextNode(); op && op != first && safe;
         op = op->getNextNode())
      safe = !mayTouch(op, buffer);
    if (safe) {
      load->moveBefore(first);
      position[load] = {position[first].first, numMoved++};
    }
  }
}

bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

/// Whether `op` can run inside a single-thread kernel.
bool isKernelOp(Operation *op) {
  // Globals are in the host image, allocas on the host's stack (the table
  // of a multi-tensor Adam call, AdamGroupToRuntime.cpp): host memory.
  auto onTheHost = [](Value memref) {
    return memref.getDefiningOp<memref::GetGlobalOp>() ||
           memref.getDefiningOp<memref::AllocaOp>();
  };
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return !onTheHost(load.getMemRef());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return !onTheHost(store.getMemRef());
  if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
    return !atomic.getMemref().getDefiningOp<memref::GetGlobalOp>();
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    WalkResult inner = branch->walk([&](Operation *nested) {
      if (nested == op || isa<scf::YieldOp>(nested) ||
          nested->hasTrait<OpTrait::ConstantLike>() || isKernelOp(nested))
        return WalkResult::advance();
      return WalkResult::interrupt();
    });
    return !inner.wasInterrupted() &&
           llvm::all_of(branch.getResultTypes(), isScalar);
  }
  if (op->hasTrait<OpTrait::ConstantLike>() || op->getNumRegions() != 0)
    return false;
  Dialect *dialect = op->getDialect();
  return dialect && isa<arith::ArithDialect, math::MathDialect>(dialect) &&
         isMemoryEffectFree(op) &&
         llvm::all_of(op->getOperandTypes(), isScalar) &&
         llvm::all_of(op->getResultTypes(), isScalar);
}

struct ScalarKernelsPass
    : msamp::impl::MSAMPGPUScalarKernelsBase<ScalarKernelsPass> {
  void runOnOperation() override {
    rewriteScalarCopies(getOperation());
    for (Block &block : getOperation().getBody())
      if (failed(processBlock(block)))
        return signalPassFailure();
  }

  LogicalResult processBlock(Block &block) {
    sinkLoads(block);
    llvm::SetVector<Operation *> run;
    llvm::SmallPtrSet<Value, 16> runBuffers;
    int64_t runParamBytes = 0;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isKernelOp(&op)) {
        // A kernel's parameters are limited (4,352 bytes before PTX ISA
        // 8.1): a long run of 0-d copies (GPT-2's scale constants) is cut
        // into several kernels, between independent ops only.
        int64_t newBytes = 0;
        bool dependsOnRun = false;
        for (Value operand : op.getOperands()) {
          if (run.contains(operand.getDefiningOp()))
            dependsOnRun = true;
          if (isa<MemRefType>(operand.getType()) &&
              !runBuffers.contains(operand))
            newBytes += kKernelBufferParamBytes;
        }
        if (!dependsOnRun && !run.empty() &&
            runParamBytes + newBytes > kMaxSingleThreadParamBytes) {
          if (failed(flush(run, &op)))
            return failure();
          run.clear();
          runBuffers.clear();
          runParamBytes = 0;
          newBytes = 0;
          for (Value operand : op.getOperands())
            if (isa<MemRefType>(operand.getType()))
              newBytes += kKernelBufferParamBytes;
        }
        for (Value operand : op.getOperands())
          if (isa<MemRefType>(operand.getType()))
            runBuffers.insert(operand);
        runParamBytes += newBytes;
        run.insert(&op);
        continue;
      }
      if (staysBefore(op, run))
        continue;
      if (failed(flush(run, &op)))
        return failure();
      run.clear();
      runBuffers.clear();
      runParamBytes = 0;
      // Runs inside host loops and branches (kernels excepted: loops to be
      // mapped, and the gpu.launch ops msamp-gpu-row-reductions made).
      if (isa<scf::ParallelOp, gpu::LaunchOp>(op))
        continue;
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(processBlock(inner)))
            return failure();
    }
    return success();
  }

  /// Ops that may stay where they are while the run goes on past them:
  /// they touch no memory (an allocation only takes fresh memory) and do
  /// not use the run's values, so the kernel can follow them.
  static bool staysBefore(Operation &op,
                          const llvm::SetVector<Operation *> &run) {
    if (op.getNumRegions() != 0 || op.hasTrait<OpTrait::IsTerminator>() ||
        !(isa<memref::AllocOp>(op) || isMemoryEffectFree(&op)))
      return false;
    return llvm::none_of(op.getOperands(), [&](Value v) {
      return run.contains(v.getDefiningOp());
    });
  }

  /// Whether a result of `op` is used outside `run`.
  static bool escapes(Operation *op, const llvm::SetVector<Operation *> &run) {
    Block *block = op->getBlock();
    for (Operation *user : op->getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || !run.contains(ancestor))
        return true;
    }
    return false;
  }

  /// Moves `run` into a single-thread kernel before `end`.
  LogicalResult flush(llvm::SetVector<Operation *> &run, Operation *end) {
    // Pure ops whose results host code also uses (index arithmetic of the
    // next kernel's bounds, say) stay on the host, with the pure ops of the
    // run they are computed from: they touch no memory, and the kernel
    // takes their results as arguments. One computed from a load cannot.
    SmallVector<Operation *> worklist;
    for (Operation *op : run)
      if (escapes(op, run))
        worklist.push_back(op);
    llvm::SetVector<Operation *> onHost;
    bool pure = true;
    while (pure && !worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      pure = isMemoryEffectFree(op) && op->getNumRegions() == 0;
      if (!pure)
        break; // a load's value: the run stays on the host (below)
      if (!onHost.insert(op))
        continue;
      for (Value operand : op->getOperands())
        if (run.contains(operand.getDefiningOp()))
          worklist.push_back(operand.getDefiningOp());
    }
    if (pure)
      for (Operation *op : onHost)
        run.remove(op);
    bool touchesMemory = llvm::any_of(
        run, [](Operation *op) { return !isMemoryEffectFree(op); });
    if (run.empty() || !touchesMemory)
      return success();
    auto used =
        llvm::find_if(run, [&](Operation *op) { return escapes(op, run); });
    if (used != run.end()) {
      (*used)->emitRemark("msamp-gpu-scalar-kernels: host code uses this "
                          "value, so its run stays on the host (the host waits "
                          "for the stream before it)");
      ++numLeftOnHost;
      return success();
    }

    FailureOr<Location> kernelLoc =
        singleThreadKernelLoc(SmallVector<Operation *>(run.begin(), run.end()));
    if (failed(kernelLoc))
      return failure();
    Location loc = *kernelLoc;
    OpBuilder b(end);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto blocks = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    auto threads = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                           ValueRange{one}, ValueRange{one});
    Operation *terminator = threads.getBody()->getTerminator();
    for (Operation *op : run)
      op->moveBefore(terminator);
    ++numKernels;
    return success();
  }
};

} // namespace
