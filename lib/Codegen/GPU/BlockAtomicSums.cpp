//===- BlockAtomicSums.cpp - --msamp-gpu-block-atomic-sums ----------------===//
//
// Part of the msamp project.
//
// msamp-gpu-atomic-full-reductions (and msamp-gpu-merge-atomic-sums) leave
// each full sum as T threads, each adding its partial sum to a 0-d
// accumulator with an atomic add: T atomic adds on one address, which the
// memory system performs one after another (the gradient norm of
// GPT-2-small: millions per step). Here such a kernel becomes a gpu.launch
// in which a block first adds its threads' partial sums in workgroup
// memory, and one thread per block makes one atomic add per accumulator:
//
//   scf.parallel (%t) = (0) to (T) step (1) {       gpu.launch
//   blocks(ceil(T/B)) threads(B)
//     p1 = ...; atomic_add acc, p1                    t = block * B + thread
//     if t < T2: p2 = ...; atomic_add acc, p2   ->    p = t < T ? p1 + (t < T2
//     ? p2 : -0.0) : -0.0
//   }                                                 s[thread] = p; barrier
//                                                     for h = B/2 .. 1: if
//                                                     thread < h:
//                                                       s[thread] += s[thread +
//                                                       h]; barrier
//                                                     thread 0: atomic_add acc,
//                                                     s[0]
//
// Parts guarded by `t < T_k` (merged kernels; nested guards when a merged
// kernel was merged again) contribute -0.0 where the guard is false (x + -0.0
// == x for every x), so that every thread of the block reaches every barrier.
// The partial sums of the threads are those of the loop form, and they are
// combined in a fixed tree per block, then the blocks' sums by atomic adds in
// any order: a reassociation of the same sum (as the atomic form's order
// already was). Several accumulators: one workgroup buffer each, reduced side
// by side.
//
// GPU only: host emulation runs the loop form (its threads one after
// another cannot meet at a barrier); the per-thread partial sums are the
// same in both.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUBLOCKATOMICSUMS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Accumulators per kernel at most (one workgroup buffer each).
constexpr size_t kMaxAccumulators = 8;

/// An atomic-sum kernel: an scf.parallel of `threads` threads whose body
/// writes nothing but atomic adds into 0-d accumulators, each in the body
/// or under scf.if guards (no results, no else) only.
struct AtomicSumKernel {
  scf::ParallelOp op;
  int64_t threads = 0;
  /// The accumulators in the order of their first atomic add.
  SmallVector<Value> accumulators;
};

bool isAtomicAdd(Operation *op) {
  auto atomic = dyn_cast<memref::AtomicRMWOp>(op);
  return atomic && atomic.getKind() == arith::AtomicRMWKind::addf &&
         atomic.getMemRefType().getRank() == 0 &&
         isa<Float32Type, Float64Type>(atomic.getValue().getType());
}

FailureOr<AtomicSumKernel> matchKernel(scf::ParallelOp parallel) {
  if (parallel.getNumLoops() != 1 || parallel.getNumResults() != 0 ||
      !matchPattern(parallel.getLowerBound()[0], m_Zero()) ||
      !matchPattern(parallel.getStep()[0], m_One()))
    return failure();
  APInt threads;
  if (!matchPattern(parallel.getUpperBound()[0], m_ConstantInt(&threads)) ||
      threads.getSExtValue() < 1)
    return failure();
  AtomicSumKernel kernel{parallel, threads.getSExtValue(), {}};
  Block *body = parallel.getBody();
  bool ok = true;
  body->walk([&](Operation *op) {
    if (isAtomicAdd(op)) {
      // Under guards only (a merged kernel's, nested when a merged kernel
      // was merged again): no loop or other region in between.
      for (Operation *parent = op->getParentOp(); parent != parallel;
           parent = parent->getParentOp()) {
        auto guard = dyn_cast<scf::IfOp>(parent);
        if (!guard || guard.getNumResults() != 0 ||
            !guard.getElseRegion().empty())
          ok = false;
        if (!guard)
          break;
      }
      Value acc = cast<memref::AtomicRMWOp>(op).getMemref();
      if (!llvm::is_contained(kernel.accumulators, acc))
        kernel.accumulators.push_back(acc);
      return;
    }
    bool allowed = op->getNumRegions() != 0
                       ? isa<scf::ForOp, scf::IfOp>(op)
                       : isa<memref::LoadOp>(op) || isMemoryEffectFree(op);
    if (!allowed)
      ok = false;
  });
  if (!ok || kernel.accumulators.empty() ||
      kernel.accumulators.size() > kMaxAccumulators)
    return failure();
  // Nothing but the atomic adds names an accumulator (a load of one would
  // see other blocks' adds in the loop form too, but not this block's).
  bool named = false;
  body->walk([&](Operation *op) {
    if (isAtomicAdd(op))
      return;
    for (Value operand : op->getOperands())
      if (llvm::is_contained(kernel.accumulators, operand))
        named = true;
  });
  if (named)
    return failure();
  return kernel;
}

class BlockSumBuilder {
public:
  BlockSumBuilder(AtomicSumKernel &kernel, int64_t blockSize)
      : kernel(kernel), loc(kernel.op.getLoc()) {
    // A small kernel: a smaller block (a power of two, at least a warp).
    block = std::min<int64_t>(
        blockSize,
        std::max<int64_t>(
            32, llvm::PowerOf2Ceil(static_cast<uint64_t>(kernel.threads))));
    for (Value acc : kernel.accumulators)
      types.push_back(cast<MemRefType>(acc.getType()).getElementType());
  }

  void build() {
    OpBuilder b(kernel.op);
    SmallVector<Type> workgroup;
    for (Type type : types)
      workgroup.push_back(
          MemRefType::get({block}, type, MemRefLayoutAttrInterface(),
                          gpu::AddressSpaceAttr::get(
                              b.getContext(), gpu::AddressSpace::Workgroup)));
    Value one = index(b, 1);
    // The kernel's location carries its cost (KernelCosts.cpp).
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, llvm::divideCeil(kernel.threads, block)), one, one,
        index(b, block), one, one, /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, workgroup);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value thread = launch.getThreadIds().x;
    Value t = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(b, block)),
        thread);
    SmallVector<Value> partials = threadPartials(b, t);
    // The block's tree in workgroup memory.
    ValueRange shared = launch.getWorkgroupAttributions();
    for (auto [k, partial] : llvm::enumerate(partials))
      memref::StoreOp::create(b, loc, partial, shared[k], thread);
    gpu::BarrierOp::create(b, loc);
    for (int64_t half = block / 2; half >= 1; half /= 2) {
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           thread, index(b, half));
      auto ifOp = scf::IfOp::create(b, loc, active, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value other = arith::AddIOp::create(b, loc, thread, index(b, half));
        for (Value buffer : shared) {
          Value mine = memref::LoadOp::create(b, loc, buffer, thread);
          Value theirs = memref::LoadOp::create(b, loc, buffer, other);
          memref::StoreOp::create(b, loc,
                                  arith::AddFOp::create(b, loc, mine, theirs),
                                  buffer, thread);
        }
      }
      // Thread 0 reads back only what it wrote itself after the last step.
      if (half > 1)
        gpu::BarrierOp::create(b, loc);
    }
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        thread, index(b, 0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (auto [k, acc] : llvm::enumerate(kernel.accumulators)) {
      Value total = memref::LoadOp::create(b, loc, shared[k], index(b, 0));
      memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, total,
                                  acc, ValueRange{});
    }
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
    kernel.op.erase();
  }

private:
  AtomicSumKernel &kernel;
  Location loc;
  int64_t block = 0;
  SmallVector<Type> types;

  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  Value negativeZero(OpBuilder &b, Type type) {
    const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
    return arith::ConstantOp::create(
        b, loc, FloatAttr::get(type, llvm::APFloat::getZero(sem, true)));
  }

  /// Thread t's partial sum per accumulator: the loop form's body, its
  /// atomic adds summed in their order instead; -0.0 for t >= T.
  SmallVector<Value> threadPartials(OpBuilder &b, Value t) {
    IRMapping mapping;
    mapping.map(kernel.op.getInductionVars()[0], t);
    if (kernel.threads % block == 0)
      return orZeros(b, cloneSums(b, *kernel.op.getBody(), mapping));
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t,
                                          index(b, kernel.threads));
    return guarded(b, inRange, *kernel.op.getBody(), mapping);
  }

  /// `block`'s ops cloned, each atomic add's value added to its
  /// accumulator's sum instead (null: no add).
  SmallVector<Value> cloneSums(OpBuilder &b, Block &from, IRMapping &mapping) {
    SmallVector<Value> sums(types.size());
    auto add = [&](size_t k, Value value) {
      sums[k] = sums[k]
                    ? arith::AddFOp::create(b, loc, sums[k], value).getResult()
                    : value;
    };
    for (Operation &op : from.without_terminator()) {
      if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
        add(llvm::find(kernel.accumulators, atomic.getMemref()) -
                kernel.accumulators.begin(),
            mapping.lookupOrDefault(atomic.getValue()));
        continue;
      }
      auto guard = dyn_cast<scf::IfOp>(op);
      bool holdsAtomics = guard && guard
                                       ->walk([](memref::AtomicRMWOp) {
                                         return WalkResult::interrupt();
                                       })
                                       .wasInterrupted();
      if (!holdsAtomics) {
        b.clone(op, mapping);
        continue;
      }
      // A guarded part: its sums, -0.0 where it is off.
      SmallVector<Value> inner =
          guarded(b, mapping.lookupOrDefault(guard.getCondition()),
                  *guard.thenBlock(), mapping);
      for (auto [k, value] : llvm::enumerate(inner))
        add(k, value);
    }
    return sums;
  }

  /// scf.if (cond) { `from`'s sums } else { -0.0 each }.
  SmallVector<Value> guarded(OpBuilder &b, Value cond, Block &from,
                             IRMapping &mapping) {
    auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, orZeros(b, cloneSums(b, from, mapping)));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, orZeros(b, SmallVector<Value>(types.size())));
    return SmallVector<Value>(ifOp.getResults());
  }

  /// The sums with -0.0 for the accumulators without one.
  SmallVector<Value> orZeros(OpBuilder &b, SmallVector<Value> sums) {
    for (size_t k = 0; k < sums.size(); ++k)
      if (!sums[k])
        sums[k] = negativeZero(b, types[k]);
    return sums;
  }
};

struct BlockAtomicSumsPass
    : msamp::impl::MSAMPGPUBlockAtomicSumsBase<BlockAtomicSumsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 32 || blockSize > 1024 || (blockSize & (blockSize - 1))) {
      getOperation().emitError("msamp-gpu-block-atomic-sums: block-size must "
                               "be a power of two in 32..1024, got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<AtomicSumKernel> kernels;
    getOperation().walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::LaunchOp>())
        return;
      if (FailureOr<AtomicSumKernel> kernel = matchKernel(op);
          succeeded(kernel))
        kernels.push_back(*kernel);
    });
    for (AtomicSumKernel &kernel : kernels) {
      BlockSumBuilder(kernel, blockSize).build();
      ++numKernels;
    }
  }
};

} // namespace
