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
// A chain (option `chains`) runs later reductions of the same rows and
// one elementwise op that reads their results in the same kernel: with a
// warp per row the results stay in registers (every lane holds the
// butterfly's total); with a block per row (cross-entropy over the
// vocabulary) lane 0 of the first warp writes each to workgroup memory and
// every thread reads it back after a barrier.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/BufferAccesses.h"
#include "MSAMP/Codegen/GPU/CostModel.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/GPU/ReductionInits.h"
#include "MSAMP/Codegen/GPU/RowForm.h"
#include "MSAMP/Codegen/GPU/SingleThreadKernels.h"
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

/// One op of a row kernel: a row reduction (`reductions` non-empty) or,
/// at the end of a chain, an elementwise op over the same rows.
struct RowOp {
  // Mutable: an op handle's accessors are not const.
  mutable linalg::GenericOp op;
  SmallVector<RowReduction> reductions;
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
  /// A kernel for `ops`: one row reduction, or a chain whose ops share
  /// the first one's rows.
  RowKernelBuilder(ArrayRef<RowOp> ops, unsigned numParallel, Location loc)
      : ops(ops), loc(loc) {
    SmallVector<int64_t> ranges = ops.front().op.getStaticLoopRanges();
    parallelRanges.assign(ranges.begin(), ranges.begin() + numParallel);
    reductionRanges.assign(ranges.begin() + numParallel, ranges.end());
    for (int64_t r : parallelRanges)
      rows *= r;
    for (int64_t r : reductionRanges)
      rowLength *= r;
  }

  int64_t rows = 1, rowLength = 1;

  /// A warp per row, `warps` rows per block; the ops one after another.
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
    for (const RowOp &rowOp : ops) {
      if (rowOp.reductions.empty()) {
        elementwiseStrided(b, rowOp.op, parallelIvs, lane, kWarpSize);
        continue;
      }
      SmallVector<Value> partial =
          accumulateStrided(b, rowOp, parallelIvs, lane, kWarpSize);
      partial = butterfly(b, rowOp, partial, kWarpSize);
      storeFromLaneZero(b, rowOp, lane, parallelIvs, partial);
    }
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

  /// A block of `threads` (a power of two, 64..1024) per row; the ops one
  /// after another. Each reduction is the standalone block form: strided
  /// accumulation, a butterfly per warp, each warp's value to workgroup
  /// memory, a barrier, and the first warp's butterfly over the warps'
  /// values. In a chain, a result that starts from a constant is also
  /// written by lane 0 of the first warp to a broadcast slot, which every
  /// thread reads back after a second barrier (the later ops' register).
  void buildBlockPerRow(OpBuilder &b, int64_t threads) {
    const int64_t warps = threads / kWarpSize;
    // Workgroup memory: per reduction op, one slot per warp and output,
    // then (in a chain, when a later op may read them) one broadcast slot
    // per output. Every op has its own slots, so no slot is written twice
    // and no barrier is needed for reuse.
    SmallVector<int64_t> slotsAt, broadcastAt;
    int64_t size = 0;
    for (auto [i, rowOp] : llvm::enumerate(ops)) {
      slotsAt.push_back(size);
      size += static_cast<int64_t>(rowOp.reductions.size()) * warps;
      broadcastAt.push_back(broadcasts(i) ? size : -1);
      if (broadcasts(i))
        size += static_cast<int64_t>(rowOp.reductions.size());
    }
    auto workgroup = MemRefType::get(
        {size}, Float32Type::get(b.getContext()), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup));
    gpu::LaunchOp launch = createLaunch(b, rows, threads, {workgroup});
    b.setInsertionPointToStart(&launch.getBody().front());
    Value thread = launch.getThreadIds().x, row = launch.getBlockIds().x;
    Value shared = launch.getWorkgroupAttributions()[0];
    Value warpSize = index(b, kWarpSize);
    Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
    SmallVector<Value> parallelIvs = delinearize(b, loc, row, parallelRanges);
    for (auto [i, rowOp] : llvm::enumerate(ops)) {
      if (rowOp.reductions.empty()) {
        elementwiseStrided(b, rowOp.op, parallelIvs, thread, threads);
        continue;
      }
      reduceBlock(b, rowOp, shared, slotsAt[i], broadcastAt[i], thread, lane,
                  warp, warps, threads, parallelIvs);
    }
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

private:
  ArrayRef<RowOp> ops;
  Location loc;
  SmallVector<int64_t> parallelRanges, reductionRanges;
  /// A chain's per-row results so far, as every lane of the warp (or
  /// every thread of the block, after the broadcast) holds them: the
  /// output buffer (read through `map` by a later op of the chain) -> its
  /// value for the row.
  struct PerRowValue {
    AffineMap map;
    Value value;
  };
  DenseMap<Value, PerRowValue> perRow;

  /// Whether the block form writes op `i`'s results that start from a
  /// constant to workgroup memory for the later ops (a chain, not its
  /// last op).
  bool broadcasts(size_t i) const {
    return ops.size() > 1 && i + 1 < ops.size() &&
           llvm::any_of(ops[i].reductions,
                        [](const RowReduction &red) { return red.start; });
  }

  /// One reduction op of the block form, slots from `slotsAt`; its
  /// broadcast results (at `broadcastAt` when not -1) become `perRow`,
  /// read by every thread after a barrier. Leaves the insertion point
  /// after the op's code.
  void reduceBlock(OpBuilder &b, const RowOp &rowOp, Value shared,
                   int64_t slotsAt, int64_t broadcastAt, Value thread,
                   Value lane, Value warp, int64_t warps, int64_t threads,
                   ValueRange parallelIvs) {
    SmallVector<Value> partial =
        accumulateStrided(b, rowOp, parallelIvs, thread, threads);
    partial = butterfly(b, rowOp, partial, kWarpSize);
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
                                plus(b, warp, slotsAt + k * warps));
    }
    gpu::BarrierOp::create(b, loc);
    // The first warp combines the warps' values: lane l reads warp
    // l % warps, so a butterfly over `warps` lanes leaves the total in
    // lane 0 (the other lanes hold copies and are not read).
    {
      Value firstWarp =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warp, zero);
      auto ifOp = scf::IfOp::create(b, loc, firstWarp, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value source = arith::RemUIOp::create(b, loc, lane, index(b, warps));
      SmallVector<Value> perWarp;
      for (size_t k = 0; k < rowOp.reductions.size(); ++k)
        perWarp.push_back(memref::LoadOp::create(
            b, loc, shared, plus(b, source, slotsAt + k * warps)));
      perWarp = butterfly(b, rowOp, perWarp, warps);
      storeFromLaneZero(b, rowOp, lane, parallelIvs, perWarp,
                        broadcastAt < 0 ? Value() : shared, broadcastAt);
    }
    if (broadcastAt < 0)
      return;
    // Lane 0 of the first warp wrote the results; every thread reads them
    // once they are there.
    gpu::BarrierOp::create(b, loc);
    for (auto [k, red] : llvm::enumerate(rowOp.reductions))
      if (red.start)
        perRow[red.init->get()] = {
            rowOp.op.getMatchingIndexingMap(red.init),
            memref::LoadOp::create(b, loc, shared, index(b, broadcastAt + k))
                .getResult()};
  }

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
    // The location carries the kernel's cost (KernelCosts.cpp).
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

  SmallVector<Value> indicesOf(AffineMap map, ValueRange ivs) {
    SmallVector<Value> indices;
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      indices.push_back(ivs[map.getDimPosition(r)]);
    return indices;
  }

  /// Maps `op`'s input block arguments to their values at `ivs`: an
  /// earlier op's per-row result from its register, anything else loaded.
  void mapInputs(OpBuilder &b, linalg::GenericOp op, ArrayRef<Value> ivs,
                 IRMapping &mapping) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      Value value = in->get();
      if (isa<MemRefType>(value.getType())) {
        AffineMap map = op.getMatchingIndexingMap(in);
        auto it = perRow.find(value);
        value = it != perRow.end() && it->second.map == map
                    ? it->second.value
                    : memref::LoadOp::create(b, loc, value, indicesOf(map, ivs))
                          .getResult();
      }
      mapping.map(op.getMatchingBlockArgument(in), value);
    }
  }

  /// The row element `linear` of `parallelIvs`' row: all loop indices.
  SmallVector<Value> elementIvs(OpBuilder &b, ValueRange parallelIvs,
                                Value linear) {
    SmallVector<Value> ivs(parallelIvs.begin(), parallelIvs.end());
    llvm::append_range(ivs, delinearize(b, loc, linear, reductionRanges));
    return ivs;
  }

  /// Clones `op`'s body except `skip`, linalg.index as `ivs`.
  void cloneBody(OpBuilder &b, linalg::GenericOp op, ArrayRef<Value> ivs,
                 IRMapping &mapping,
                 const llvm::SmallPtrSetImpl<Operation *> &skip) {
    for (Operation &inner : op.getBody()->without_terminator()) {
      if (skip.contains(&inner))
        continue;
      if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(indexOp.getResult(), ivs[indexOp.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
  }

  /// Thread `first`, `first + stride`, ... of the row: the body's
  /// contributions combined into one register per output, from the
  /// identity.
  SmallVector<Value> accumulateStrided(OpBuilder &b, const RowOp &rowOp,
                                       ValueRange parallelIvs, Value first,
                                       int64_t stride) {
    SmallVector<Value> identities;
    for (const RowReduction &red : rowOp.reductions)
      identities.push_back(
          arith::ConstantOp::create(b, loc, identityOf(red.combiner)));
    auto loop = scf::ForOp::create(b, loc, first, index(b, rowLength),
                                   index(b, stride), identities);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs = elementIvs(b, parallelIvs, loop.getInductionVar());
    IRMapping mapping;
    mapInputs(b, rowOp.op, ivs, mapping);
    llvm::SmallPtrSet<Operation *, 8> reductionOps;
    for (const RowReduction &red : rowOp.reductions) {
      reductionOps.insert(red.combiner);
      if (red.select)
        reductionOps.insert(red.select);
    }
    cloneBody(b, rowOp.op, ivs, mapping, reductionOps);
    SmallVector<Value> next;
    for (auto [k, red] : llvm::enumerate(rowOp.reductions)) {
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

  /// Lane `first`, `first + stride`, ... of the row: `op`'s body at each
  /// element, its results stored.
  void elementwiseStrided(OpBuilder &b, linalg::GenericOp op,
                          ValueRange parallelIvs, Value first, int64_t stride) {
    auto loop = scf::ForOp::create(b, loc, first, index(b, rowLength),
                                   index(b, stride));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    SmallVector<Value> ivs = elementIvs(b, parallelIvs, loop.getInductionVar());
    IRMapping mapping;
    mapInputs(b, op, ivs, mapping);
    for (OpOperand &out : op.getDpsInitsMutable()) {
      BlockArgument arg = op.getMatchingBlockArgument(&out);
      if (!arg.use_empty())
        mapping.map(arg, memref::LoadOp::create(
                             b, loc, out.get(),
                             indicesOf(op.getMatchingIndexingMap(&out), ivs)));
    }
    llvm::SmallPtrSet<Operation *, 1> none;
    cloneBody(b, op, ivs, mapping, none);
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    for (OpOperand &out : op.getDpsInitsMutable())
      memref::StoreOp::create(
          b, loc,
          mapping.lookupOrDefault(
              yield.getOperand(out.getOperandNumber() - op.getNumDpsInputs())),
          out.get(), indicesOf(op.getMatchingIndexingMap(&out), ivs));
  }

  /// Butterfly over the first `lanes` (a power of two) lanes of each warp:
  /// afterwards each of them holds the combination of all of them.
  SmallVector<Value> butterfly(OpBuilder &b, const RowOp &rowOp,
                               ArrayRef<Value> values, int64_t lanes) {
    SmallVector<Value> result(values);
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
      for (auto [k, red] : llvm::enumerate(rowOp.reductions)) {
        auto shuffle = gpu::ShuffleOp::create(b, loc, result[k], offset,
                                              kWarpSize, gpu::ShuffleMode::XOR);
        result[k] = combine(b, red, result[k], shuffle.getShuffleResult());
      }
    return result;
  }

  /// Lane 0: out = combine(out, total), the op's own order for the last
  /// step (its initial value in the accumulator's position). An output
  /// that starts from a constant is combined in every lane (each holds
  /// the total after a warp's butterfly), which is what a later op of a
  /// chain reads (`perRow`). In the block form only lane 0 of the first
  /// warp holds the total: with `broadcast`, it also writes each output
  /// that starts from a constant to `broadcast[broadcastAt + k]`.
  void storeFromLaneZero(OpBuilder &b, const RowOp &rowOp, Value lane,
                         ValueRange parallelIvs, ArrayRef<Value> totals,
                         Value broadcast = {}, int64_t broadcastAt = 0) {
    SmallVector<Value> finals(totals.size());
    for (auto [k, red] : llvm::enumerate(rowOp.reductions)) {
      if (!red.start || ops.size() == 1 || broadcast)
        continue;
      Value init =
          arith::ConstantOp::create(b, loc, msamp::constantOf(red.start));
      finals[k] = combine(b, red, init, totals[k]);
      perRow[red.init->get()] = {rowOp.op.getMatchingIndexingMap(red.init),
                                 finals[k]};
    }
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        index(b, 0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (auto [k, red] : llvm::enumerate(rowOp.reductions)) {
      SmallVector<Value> indices =
          indicesOf(rowOp.op.getMatchingIndexingMap(red.init), parallelIvs);
      Value buffer = red.init->get();
      Value final = finals[k];
      if (!final) {
        Value init =
            red.start
                ? arith::ConstantOp::create(b, loc,
                                            msamp::constantOf(red.start))
                      .getResult()
                : memref::LoadOp::create(b, loc, buffer, indices).getResult();
        final = combine(b, red, init, totals[k]);
      }
      memref::StoreOp::create(b, loc, final, buffer, indices);
      if (broadcast && red.start)
        memref::StoreOp::create(b, loc, final, broadcast,
                                index(b, broadcastAt + k));
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

/// Whether `op` can end a chain over rows of `ranges` (its first
/// `numParallel` loops the row, the rest the row's elements): every loop
/// parallel with these ranges, a plain body, memref operands read as whole
/// rows or per row, and every output written once per element (its map a
/// permutation with the element loops innermost, in order).
bool isRowElementwise(linalg::GenericOp op, ArrayRef<int64_t> ranges,
                      unsigned numParallel) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      op.getNumReductionLoops() != 0 ||
      op.getStaticLoopRanges() != SmallVector<int64_t>(ranges))
    return false;
  for (Operation &inner : op.getBody()->without_terminator())
    if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType())) {
      if (op.isDpsInit(&operand))
        return false;
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(&operand);
    FailureOr<SmallVector<unsigned>> elementDims =
        msamp::innermostReductionDims(map, numParallel);
    if (failed(elementDims))
      return false;
    if (op.isDpsInit(&operand) &&
        (!map.isPermutation() ||
         elementDims->size() != ranges.size() - numParallel))
      return false;
  }
  return true;
}

/// The memref operands of `op` with whether `op` writes them.
SmallVector<std::pair<OpOperand *, bool>> memrefOperands(linalg::GenericOp op) {
  SmallVector<std::pair<OpOperand *, bool>> operands;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<MemRefType>(operand.get().getType()))
      operands.push_back({&operand, op.isDpsInit(&operand)});
  return operands;
}

/// Whether `next` may run after `earlier`, an op of the same chain, inside
/// one warp's (or block's) row: wherever one writes memory the other
/// touches, it is (a) a per-row result of `earlier` that starts from a
/// constant, which `next` reads through the same value and map (from the
/// register), or (b) a row `earlier` reads and `next`, the chain's
/// elementwise end, overwrites through the same value and map: each lane
/// writes only the elements it read itself (the same stride), after the
/// shuffles.
bool mayFollow(const RowOp &next, const RowOp &earlier) {
  for (auto [nextOperand, nextWrites] : memrefOperands(next.op)) {
    Value nextRoot = msamp::rootBuffer(nextOperand->get());
    for (auto [earlierOperandRef, earlierWrites] : memrefOperands(earlier.op)) {
      OpOperand *earlierOperand = earlierOperandRef; // captured below
      if ((!nextWrites && !earlierWrites) ||
          !msamp::mayAlias(nextRoot, msamp::rootBuffer(earlierOperand->get())))
        continue;
      bool sameView = nextOperand->get() == earlierOperand->get() &&
                      next.op.getMatchingIndexingMap(nextOperand) ==
                          earlier.op.getMatchingIndexingMap(earlierOperand);
      if (!sameView || (nextWrites && earlierWrites))
        return false;
      if (earlierWrites) {
        const RowReduction *red =
            llvm::find_if(earlier.reductions, [&](const RowReduction &r) {
              return r.init == earlierOperand;
            });
        if (red == earlier.reductions.end() || !red->start)
          return false;
      } else if (!next.reductions.empty()) {
        return false; // only the chain's end writes rows
      }
    }
  }
  return true;
}

/// The chain's kernel cost: its ops' FLOPs, each buffer once, the per-row
/// results read from registers (rowChainKernelCost).
FailureOr<msamp::gpucost::OpCost> chainCost(ArrayRef<RowOp> chain) {
  SmallVector<linalg::LinalgOp> ops;
  llvm::DenseSet<Value> fromRegisters;
  for (const RowOp &rowOp : chain) {
    ops.push_back(rowOp.op);
    for (const RowReduction &red : rowOp.reductions)
      if (red.start)
        fromRegisters.insert(red.init->get());
  }
  return msamp::gpucost::rowChainKernelCost(ops, fromRegisters);
}

/// How far past a chain's last op the search for its next op goes: bounds
/// the pass's work on deep steps.
constexpr unsigned kMaxChainLookahead = 16;

/// A row kernel's ops, and the ops between them that move after its
/// kernel.
struct Chain {
  SmallVector<RowOp> ops;
  /// Ops between the first and the last op of the chain that read or
  /// write a buffer of it, or depend on such an op: they run after the
  /// kernel, in their order (cross-entropy's loss sum, which reads the
  /// row max and sum before the gradient is computed).
  SmallVector<Operation *> after;
};

/// Whether `op` or an op nested in it uses a result of one of `ops`.
bool usesResultOf(Operation *op,
                  const llvm::SmallPtrSetImpl<Operation *> &ops) {
  if (ops.empty())
    return false;
  WalkResult walk = op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && ops.contains(def))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Whether `a` and `b` may not be reordered (BufferAccesses.h).
bool conflict(const msamp::BufferAccesses &a, const msamp::BufferAccesses &b) {
  return msamp::dependsOn(a, b) || msamp::dependsOn(b, a);
}

/// The row reduction `first` and the ops after it in its block that run in
/// its kernel (the file comment): further row reductions of the same rows
/// whose outputs start from constants, and at most one elementwise op over
/// those rows, last. Ops between them that touch no buffer of the chain
/// stay in place (the chain moves down past them, to the last op's place);
/// an op that does touch one, and every later op that touches a buffer it
/// touches or uses its results, moves after the kernel instead (`after`),
/// and no such op joins. Moving an op down past a later member is sound
/// when the two touch no common buffer that either writes, which holds for
/// every member that joins after it. `first` alone when nothing joins.
Chain growChain(RowOp first, unsigned numParallel) {
  Chain chain;
  chain.ops.push_back(std::move(first));
  SmallVector<int64_t> ranges = chain.ops.front().op.getStaticLoopRanges();
  SmallVector<msamp::BufferAccesses> accesses{
      msamp::collectBufferAccesses(chain.ops.front().op)};
  SmallVector<Operation *> deferred;
  SmallVector<msamp::BufferAccesses> deferredAccesses;
  llvm::SmallPtrSet<Operation *, 8> deferredSet;
  size_t deferredBeforeLast = 0;
  unsigned passed = 0;
  for (Operation *op = chain.ops.front().op->getNextNode();
       op && !op->hasTrait<OpTrait::IsTerminator>() &&
       passed < kMaxChainLookahead;
       op = op->getNextNode()) {
    msamp::BufferAccesses here = msamp::collectBufferAccesses(op);
    // After a deferred op it touches (or whose results it uses), `op` must
    // stay after it: it moves too.
    bool afterDeferred =
        usesResultOf(op, deferredSet) ||
        llvm::any_of(deferredAccesses, [&](const msamp::BufferAccesses &d) {
          return conflict(here, d);
        });
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && !afterDeferred) {
      std::optional<RowOp> next;
      unsigned nextParallel = 0;
      if (generic.getNumReductionLoops() == 0) {
        if (isRowElementwise(generic, ranges, numParallel))
          next = RowOp{generic, {}};
      } else if (std::optional<SmallVector<RowReduction>> reductions =
                     matchRowReduction(generic, nextParallel);
                 reductions && nextParallel == numParallel &&
                 generic.getStaticLoopRanges() == ranges) {
        for (RowReduction &red : *reductions)
          red.start = msamp::constantInitFill(generic, red.init);
        next = RowOp{generic, std::move(*reductions)};
      }
      if (next && llvm::all_of(chain.ops, [&](const RowOp &earlier) {
            return mayFollow(*next, earlier);
          })) {
        bool end = next->reductions.empty();
        chain.ops.push_back(std::move(*next));
        deferredBeforeLast = deferred.size();
        if (end)
          break;
        accesses.push_back(std::move(here));
        passed = 0;
        continue;
      }
    }
    // An op the chain moves past must not touch the chain's buffers; one
    // that does moves after the kernel.
    if (afterDeferred ||
        llvm::any_of(accesses, [&](const msamp::BufferAccesses &member) {
          return conflict(here, member);
        })) {
      deferred.push_back(op);
      deferredSet.insert(op);
      deferredAccesses.push_back(std::move(here));
    }
    ++passed;
  }
  chain.after.assign(deferred.begin(), deferred.begin() + deferredBeforeLast);
  return chain;
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
    // Candidates that an earlier chain took (and erased): never touched.
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (linalg::LinalgOp candidate : candidates) {
      if (erased.contains(candidate.getOperation()))
        continue;
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
      RowOp first{generic, std::move(*reductions)};
      Chain chain;
      if (fuseChains)
        chain = growChain(std::move(first), numParallel);
      else
        chain.ops.push_back(std::move(first));
      Location loc = generic.getLoc();
      if (chain.ops.size() > 1) {
        FailureOr<msamp::gpucost::OpCost> cost = chainCost(chain.ops);
        if (failed(cost))
          return signalPassFailure();
        SmallVector<Location> locs;
        for (const RowOp &rowOp : chain.ops)
          locs.push_back(rowOp.op.getLoc());
        loc = msamp::gpucost::withKernelCost(
            locs,
            msamp::gpucost::kernelCostAttr(&getContext(), "row_chain", *cost));
      }
      RowKernelBuilder kernel(chain.ops, numParallel, loc);
      // At the last op's place: every operand of the chain is defined there.
      Operation *last = chain.ops.back().op;
      OpBuilder b(last);
      if (kernel.rowLength >= blockThreshold)
        kernel.buildBlockPerRow(b, blockSize);
      else
        kernel.buildWarpPerRow(b, warpsPerBlock);
      // The ops that touch the chain's buffers in between: after the
      // kernel, in their order.
      for (Operation *op : chain.after)
        op->moveBefore(last);
      for (RowOp &rowOp : chain.ops) {
        for (RowReduction &red : rowOp.reductions)
          if (red.start)
            rewriter.eraseOp(red.start);
        erased.insert(rowOp.op);
        rewriter.eraseOp(rowOp.op);
      }
    }
  }
};

} // namespace
