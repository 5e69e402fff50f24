//===- RowReductions.cpp - a warp or a block per reduced row --------------===//
//
// Part of the msamp project.
//
// On the loop path a row reduction (LayerNorm's mean and variance,
// softmax's max and sum, cross-entropy over the vocabulary) is one thread
// per row walking the row alone: neighbouring threads read addresses a row
// apart (no coalescing) and a vocabulary row of 50,257 is 50,257 dependent
// steps of one thread. Here the row is shared by a warp (or a block, for
// long rows), whose lanes read consecutive elements:
//
//   linalg.generic {iterator_types = [parallel..., reduction...]}
//       ins(%x : memref<RxNxf32>) outs(%o : memref<Rxf32>)
//     ^bb0(%a, %acc):  %g = f(%a)  %s = combine %g, %acc  yield %s
// ->
//   gpu.launch blocks(ceil(R / W)) threads(32 W)      (a warp per row)
//     row = block * W + thread / 32;  lane = thread % 32
//     if row < R:
//       p = identity;  for e = lane to N step 32:  p = combine(p, f(x[row, e]))
//       p = combine(p, shuffle xor p, 16) ... (8, 4, 2, 1)
//       if lane == 0:  o[row] = combine(o[row], p)
//
// A block per row (N >= block-threshold) does the same with a stride of
// block-size, then lane 0 of each warp writes its warp's value to
// workgroup memory, and after a barrier the first warp combines those.
//
// Why gpu.shuffle rather than gpu.subgroup_reduce or gpu.all_reduce: the
// butterfly of xor shuffles is what the hardware does (shfl.sync.bfly),
// its order is fixed here (the result does not depend on how a lowering
// chooses to reduce), and convert-gpu-to-nvvm lowers gpu.shuffle directly;
// all_reduce's rewrite needs uniform control flow around the whole op.
//
// Exactness: the lanes start from the combiner's identity (-0.0 for addf:
// x + -0.0 == x for every x, -0.0 included; NaN for maxnumf, which returns
// the other operand; -inf for maximumf), so empty lanes change nothing. A
// masked combine, select(c, combine(acc, x), acc), is combine(acc, c ? x :
// identity). max is associative and commutative: the result is the
// sequential one (NaN as the body's op says). The sum is reassociated into
// a fixed tree: the same bits every run, not the CPU's sequential bits.
//
// An output that a fill of a constant c set just before the op (issue 23's
// accumulator copies, ReductionInits.h) is stored as combine(c, p) without
// loading it, and the fill is erased: the same value, one kernel fewer.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/ReductionInits.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUROWREDUCTIONS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// One output of the op: out = combine(out, x) over the row, where
/// `combiner` is the body's addf/maxnumf/maximumf of the accumulator and x;
/// with a mask, select(mask, combine(acc, x), acc) (or its mirror, which
/// combines when the mask is false).
struct RowReduction {
  OpOperand *init = nullptr;
  Operation *combiner = nullptr;
  unsigned accOperand = 0; // which operand of `combiner` is the accumulator
  arith::SelectOp select;  // null when unmasked
  bool combineWhenTrue = true;
  /// The fill of a constant that set the output just before the op, whose
  /// constant the row's last step starts from instead of loading the
  /// output (ReductionInits.h); null to load it.
  linalg::FillOp start;
};

/// The combiner's identity: combine(acc, identity) == acc bit for bit.
FloatAttr identityOf(Operation *combiner) {
  auto f32 = Float32Type::get(combiner->getContext());
  const llvm::fltSemantics &sem = f32.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(f32, llvm::APFloat::getZero(sem, /*Negative=*/true));
  if (isa<arith::MaxNumFOp>(combiner))
    return FloatAttr::get(f32, llvm::APFloat::getQNaN(sem));
  return FloatAttr::get(f32, llvm::APFloat::getInf(sem, /*Negative=*/true));
}

/// The reduction feeding one output, or failure when it is not of a form
/// this pass handles.
FailureOr<RowReduction> matchOutput(linalg::GenericOp op, OpOperand *init) {
  RowReduction red;
  red.init = init;
  BlockArgument acc = op.getMatchingBlockArgument(init);
  if (!acc.getType().isF32())
    return failure();
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Value yielded =
      yield.getOperand(init->getOperandNumber() - op.getNumDpsInputs());
  Operation *def = yielded.getDefiningOp();
  if (!def || !yielded.hasOneUse())
    return failure();
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    red.select = select;
    if (select.getFalseValue() == acc) {
      red.combineWhenTrue = true;
      def = select.getTrueValue().getDefiningOp();
    } else if (select.getTrueValue() == acc) {
      red.combineWhenTrue = false;
      def = select.getFalseValue().getDefiningOp();
    } else {
      return failure();
    }
    if (!def || !def->getResult(0).hasOneUse() ||
        !select.getCondition().getType().isInteger(1))
      return failure();
  }
  if (!isa_and_nonnull<arith::AddFOp, arith::MaxNumFOp, arith::MaximumFOp>(def))
    return failure();
  red.combiner = def;
  if (def->getOperand(0) == acc && def->getOperand(1) != acc)
    red.accOperand = 0;
  else if (def->getOperand(1) == acc && def->getOperand(0) != acc)
    red.accOperand = 1;
  else
    return failure();
  // The accumulator feeds nothing but its combine (and the mask's select):
  // everything else in the body is then independent of it.
  for (OpOperand &use : acc.getUses())
    if (use.getOwner() != def && use.getOwner() != red.select.getOperation())
      return failure();
  return red;
}

/// The op's rows: every reduction dimension comes after every parallel one
/// and, in each input that uses reduction dimensions, they are its
/// innermost ones, in order, with unit stride innermost; at least one input
/// reads whole rows.
bool hasContiguousRows(linalg::GenericOp op, unsigned numParallel) {
  unsigned numLoops = op.getNumLoops();
  if (!msamp::hasParallelThenReductionLoops(op, numParallel))
    return false;
  bool anyFullRow = false;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type)
      continue;
    // The results that are reduction dimensions: a suffix, increasing.
    FailureOr<SmallVector<unsigned>> rowDims = msamp::innermostReductionDims(
        op.getMatchingIndexingMap(in), numParallel);
    if (failed(rowDims))
      return false;
    SmallVector<unsigned> &reductionDims = *rowDims;
    if (reductionDims.empty())
      continue; // the same value for the whole row (a mean, a label)
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      return false;
    if (reductionDims.size() == numLoops - numParallel)
      anyFullRow = true;
  }
  return anyFullRow;
}

/// Row-major delinearization of `linear` into indices of `ranges`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> ranges) {
  SmallVector<Value> ivs(ranges.size());
  Value rest = linear;
  for (size_t d = ranges.size(); d-- > 0;) {
    if (d == 0) {
      ivs[d] = rest;
      break;
    }
    Value size = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    ivs[d] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return ivs;
}

class RowKernelBuilder {
public:
  RowKernelBuilder(linalg::GenericOp op, ArrayRef<RowReduction> reductions,
                   unsigned numParallel)
      : op(op), reductions(reductions), loc(op.getLoc()) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    parallelRanges.assign(ranges.begin(), ranges.begin() + numParallel);
    reductionRanges.assign(ranges.begin() + numParallel, ranges.end());
    for (int64_t r : parallelRanges)
      rows *= r;
    for (int64_t r : reductionRanges)
      rowLength *= r;
  }

  int64_t rows = 1, rowLength = 1;

  /// A warp per row, `warps` rows per block.
  void buildWarpPerRow(OpBuilder &b, int64_t warps) {
    warps = std::max<int64_t>(1, std::min(warps, rows));
    gpu::LaunchOp launch = createLaunch(b, (rows + warps - 1) / warps,
                                        warps * kWarpSize, /*workgroup=*/{});
    b.setInsertionPointToStart(&launch.getBody().front());
    Value thread = launch.getThreadIds().x, block = launch.getBlockIds().x;
    Value warpSize = index(b, kWarpSize);
    Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
    Value row = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, index(b, warps)),
        arith::DivUIOp::create(b, loc, thread, warpSize));
    // Whole warps past the last row skip everything (the condition is
    // uniform in a warp, so every shuffle has its 32 lanes).
    if (rows % warps != 0) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            row, index(b, rows));
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    SmallVector<Value> parallelIvs = delinearize(b, loc, row, parallelRanges);
    SmallVector<Value> partial =
        accumulateStrided(b, parallelIvs, lane, kWarpSize);
    partial = butterfly(b, partial, kWarpSize);
    storeFromLaneZero(b, lane, parallelIvs, partial);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

  /// A block of `threads` (a power of two, 64..1024) per row.
  void buildBlockPerRow(OpBuilder &b, int64_t threads) {
    const int64_t warps = threads / kWarpSize;
    auto workgroup = MemRefType::get(
        {static_cast<int64_t>(reductions.size()) * warps},
        Float32Type::get(op.getContext()), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(op.getContext(),
                                   gpu::AddressSpace::Workgroup));
    gpu::LaunchOp launch = createLaunch(b, rows, threads, {workgroup});
    b.setInsertionPointToStart(&launch.getBody().front());
    Value thread = launch.getThreadIds().x, row = launch.getBlockIds().x;
    Value shared = launch.getWorkgroupAttributions()[0];
    Value warpSize = index(b, kWarpSize);
    Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
    SmallVector<Value> parallelIvs = delinearize(b, loc, row, parallelRanges);
    SmallVector<Value> partial =
        accumulateStrided(b, parallelIvs, thread, threads);
    partial = butterfly(b, partial, kWarpSize);
    Value zero = index(b, 0);
    // Each warp's value to workgroup memory, slot k * warps + warp.
    {
      Value first =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
      auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (auto [k, value] : llvm::enumerate(partial))
        memref::StoreOp::create(b, loc, value, shared,
                                plus(b, warp, k * warps));
    }
    gpu::BarrierOp::create(b, loc);
    // The first warp combines the warps' values: lane l reads warp
    // l % warps, so a butterfly over `warps` lanes leaves the total in
    // lane 0 (the other lanes hold copies and are not read).
    Value firstWarp =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, zero);
    auto ifOp = scf::IfOp::create(b, loc, firstWarp, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value source = arith::RemUIOp::create(b, loc, lane, index(b, warps));
    SmallVector<Value> perWarp;
    for (size_t k = 0; k < reductions.size(); ++k)
      perWarp.push_back(
          memref::LoadOp::create(b, loc, shared, plus(b, source, k * warps)));
    perWarp = butterfly(b, perWarp, warps);
    storeFromLaneZero(b, lane, parallelIvs, perWarp);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

private:
  linalg::GenericOp op;
  ArrayRef<RowReduction> reductions;
  Location loc;
  SmallVector<int64_t> parallelRanges, reductionRanges;

  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  Value plus(OpBuilder &b, Value v, int64_t offset) {
    return offset == 0
               ? v
               : arith::AddIOp::create(b, loc, v, index(b, offset)).getResult();
  }

  gpu::LaunchOp createLaunch(OpBuilder &b, int64_t blocks, int64_t threads,
                             TypeRange workgroup) {
    Value one = index(b, 1);
    // The op's location: it carries the kernel's cost (KernelCosts.cpp).
    return gpu::LaunchOp::create(b, loc, index(b, blocks), one, one,
                                 index(b, threads), one, one,
                                 /*dynamicSharedMemorySize=*/nullptr,
                                 /*asyncTokenType=*/nullptr,
                                 /*asyncDependencies=*/{}, workgroup);
  }

  /// combine(acc, x) with the body's op and attributes, acc in the
  /// accumulator's position.
  Value combine(OpBuilder &b, const RowReduction &red, Value acc, Value x) {
    Operation *clone = b.clone(*red.combiner);
    clone->setOperand(red.accOperand, acc);
    clone->setOperand(1 - red.accOperand, x);
    return clone->getResult(0);
  }

  /// Thread `first`, `first + stride`, ... of the row: the body's
  /// contributions combined into one register per output, from the
  /// identity.
  SmallVector<Value> accumulateStrided(OpBuilder &b, ValueRange parallelIvs,
                                       Value first, int64_t stride) {
    SmallVector<Value> identities;
    for (const RowReduction &red : reductions)
      identities.push_back(
          arith::ConstantOp::create(b, loc, identityOf(red.combiner)));
    auto loop = scf::ForOp::create(b, loc, first, index(b, rowLength),
                                   index(b, stride), identities);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs(parallelIvs.begin(), parallelIvs.end());
    llvm::append_range(
        ivs, delinearize(b, loc, loop.getInductionVar(), reductionRanges));
    IRMapping mapping;
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value value = in->get();
      if (isa<MemRefType>(value.getType())) {
        AffineMap map = op.getMatchingIndexingMap(in);
        SmallVector<Value> indices;
        for (unsigned r = 0; r < map.getNumResults(); ++r)
          indices.push_back(ivs[map.getDimPosition(r)]);
        value = memref::LoadOp::create(b, loc, value, indices);
      }
      mapping.map(op.getMatchingBlockArgument(in), value);
    }
    llvm::SmallPtrSet<Operation *, 8> reductionOps;
    for (const RowReduction &red : reductions) {
      reductionOps.insert(red.combiner);
      if (red.select)
        reductionOps.insert(red.select);
    }
    for (Operation &inner : op.getBody()->without_terminator()) {
      if (reductionOps.contains(&inner))
        continue;
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), ivs[indexOp.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    SmallVector<Value> next;
    for (auto [k, red] : llvm::enumerate(reductions)) {
      arith::SelectOp select = red.select;
      Value x =
          mapping.lookupOrDefault(red.combiner->getOperand(1 - red.accOperand));
      if (select) {
        Value mask = mapping.lookupOrDefault(select.getCondition());
        Value identity = identities[k];
        x = red.combineWhenTrue
                ? arith::SelectOp::create(b, loc, mask, x, identity)
                : arith::SelectOp::create(b, loc, mask, identity, x);
      }
      next.push_back(combine(b, red, loop.getRegionIterArgs()[k], x));
    }
    scf::YieldOp::create(b, loc, next);
    return SmallVector<Value>(loop.getResults());
  }

  /// Butterfly over the first `lanes` (a power of two) lanes of each warp:
  /// afterwards each of them holds the combination of all of them.
  SmallVector<Value> butterfly(OpBuilder &b, ArrayRef<Value> values,
                               int64_t lanes) {
    SmallVector<Value> result(values);
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
      for (auto [k, red] : llvm::enumerate(reductions)) {
        auto shuffle = gpu::ShuffleOp::create(b, loc, result[k], offset,
                                              kWarpSize, gpu::ShuffleMode::XOR);
        result[k] = combine(b, red, result[k], shuffle.getShuffleResult());
      }
    return result;
  }

  /// Lane 0: out = combine(out, total), the op's own order for the last
  /// step (its initial value in the accumulator's position).
  void storeFromLaneZero(OpBuilder &b, Value lane, ValueRange parallelIvs,
                         ArrayRef<Value> totals) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        index(b, 0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (auto [k, red] : llvm::enumerate(reductions)) {
      AffineMap map = op.getMatchingIndexingMap(red.init);
      SmallVector<Value> indices;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        indices.push_back(parallelIvs[map.getDimPosition(r)]);
      Value buffer = red.init->get();
      Value init =
          red.start
              ? arith::ConstantOp::create(b, loc, msamp::constantOf(red.start))
                    .getResult()
              : memref::LoadOp::create(b, loc, buffer, indices).getResult();
      memref::StoreOp::create(b, loc, combine(b, red, init, totals[k]), buffer,
                              indices);
    }
  }
};

/// The reductions of `op` when it is a row reduction this pass rewrites.
std::optional<SmallVector<RowReduction>>
matchRowReduction(linalg::GenericOp op, unsigned &numParallel) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0)
    return std::nullopt;
  numParallel = op.getNumParallelLoops();
  if (numParallel == 0 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  for (int64_t r : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(r) || r == 0)
      return std::nullopt;
  if (!hasContiguousRows(op, numParallel))
    return std::nullopt;
  // The body: plain computation (no regions, no memory effects), which
  // the kernel repeats per element.
  for (Operation &inner : op.getBody()->without_terminator())
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return std::nullopt;
  SmallVector<RowReduction> reductions;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isa<MemRefType>(init.get().getType()) ||
        !op.getMatchingIndexingMap(&init).isProjectedPermutation())
      return std::nullopt;
    FailureOr<RowReduction> red = matchOutput(op, &init);
    if (failed(red))
      return std::nullopt;
    reductions.push_back(*red);
  }
  return reductions;
}

struct RowReductionsPass
    : msamp::impl::MSAMPGPURowReductionsBase<RowReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (warpsPerBlock < 1 || warpsPerBlock * kWarpSize > 1024) {
      getOperation().emitError("msamp-gpu-row-reductions: warps-per-block "
                               "must be in 1..32, got ")
          << static_cast<int64_t>(warpsPerBlock);
      return signalPassFailure();
    }
    if (blockSize < 64 || blockSize > 1024 || (blockSize & (blockSize - 1))) {
      getOperation().emitError("msamp-gpu-row-reductions: block-size must be "
                               "a power of two in 64..1024, got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() > 0 && op.getNumReductionLoops() > 0)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp candidate : candidates) {
      // A named reduction (linalg.reduce) as the generic it stands for,
      // which replaces it whether it matches or not (the loop path lowers
      // both alike).
      FailureOr<linalg::GenericOp> asGenericOp =
          msamp::asGeneric(rewriter, candidate);
      if (failed(asGenericOp))
        continue;
      linalg::GenericOp generic = *asGenericOp;
      unsigned numParallel = 0;
      std::optional<SmallVector<RowReduction>> reductions =
          matchRowReduction(generic, numParallel);
      if (!reductions)
        continue;
      for (RowReduction &red : *reductions)
        red.start = msamp::constantInitFill(generic, red.init);
      RowKernelBuilder kernel(generic, *reductions, numParallel);
      OpBuilder b(generic);
      if (kernel.rowLength >= blockThreshold)
        kernel.buildBlockPerRow(b, blockSize);
      else
        kernel.buildWarpPerRow(b, warpsPerBlock);
      rewriter.eraseOp(generic);
      for (RowReduction &red : *reductions)
        if (red.start)
          rewriter.eraseOp(red.start);
    }
  }
};

} // namespace
