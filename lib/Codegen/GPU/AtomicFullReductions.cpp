//===- AtomicFullReductions.cpp - full sums as GPU partial sums ---*- C++
//-*-===//
//
//   linalg.generic {iterator_types = ["reduction", ...]}
//       ins(%x : memref<AxBxf32>) outs(%acc : memref<f32>) {
//     ^bb0(%a: f32, %o: f32):  %g = f(%a)  %s = arith.addf %g, %o  yield %s }
// ->  (N = A*B > small-sum; U = unroll, T = min(ceil(N / U), threads))
//   %flat = memref.collapse_shape %x [[0, 1]]   (contiguous, read in order)
//   scf.parallel (%t) = (0) to (T) step (1) {
//     %a0..%aU-1 = scf.for %i = %t to M step U*T iter_args(0.0, ...) {
//       %x0 = memref.load %flat[%i] ... %xU-1 = memref.load %flat[%i+(U-1)T]
//       yield f(%x0) + %a0, ..., f(%xU-1) + %aU-1 }
//     (one more step for the elements M.. N, M = N - N mod U*T: element
//      M + t + kT masked where some thread has none)
//     memref.atomic_rmw addf ((%a0 + %a1) + (%a2 + %a3)) + ..., %acc[] }
//
// Why: a thread that issues one load at a time, each after an index
// delinearization (div/rem), keeps too few bytes in flight to read at
// memory bandwidth (issue 23: 77 GB/s on an H100); U independent loads per
// step, a linear index and a grid of several waves of the machine do. A
// sum of at most small-sum elements keeps one loop of stride T = min(N,
// threads) (for N <= T: one element per thread, which host emulation,
// running the threads in order, adds in the CPU's order). An input that is
// not contiguous or not read in loop order (a transposed operand) is
// loaded at the delinearized indices.
//
// The addition is reassociated (partial sums, atomics in any order); the
// accumulator's initial value is kept (it is in %acc before the kernel).
// `linalg.index` in the body (a gather's column) becomes the delinearized
// loop index, so a full sum over a lookup runs on the device too.
// On a GPU, msamp-gpu-block-atomic-sums then adds a block's partial sums
// in workgroup memory before one atomic add per block.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUATOMICFULLREDUCTIONS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The shape of op this pass rewrites; null otherwise.
bool isAtomicSum(linalg::GenericOp op, SmallVector<int64_t> &ranges) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() == 0 || op.getNumReductionLoops() != op.getNumLoops())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType || initType.getRank() != 0 ||
      !isa<Float32Type, Float64Type>(initType.getElementType()))
    return false;
  Block *body = op.getBody();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || !acc.hasOneUse() || (add.getLhs() != acc && add.getRhs() != acc))
    return false;
  ranges = op.getStaticLoopRanges();
  for (int64_t r : ranges)
    if (ShapedType::isDynamic(r))
      return false;
  for (OpOperand *in : op.getDpsInputOperands())
    if (isa<ShapedType>(in->get().getType()) &&
        !isa<MemRefType>(in->get().getType()))
      return false;
  return true;
}

/// Where the elements are read: a contiguous input in loop order through a
/// 1-d view (one index, no delinearization), anything else through the
/// loop indices delinearized from the element's linear index.
struct ElementReader {
  linalg::GenericOp op;
  ArrayRef<int64_t> ranges;
  /// Per input: its 1-d view when it is read in loop order and contiguous.
  SmallVector<Value> flat;

  ElementReader(OpBuilder &b, linalg::GenericOp op, ArrayRef<int64_t> ranges)
      : op(op), ranges(ranges) {
    for (OpOperand *in : op.getDpsInputOperands())
      flat.push_back(flatView(b, op, in));
  }

  static Value flatView(OpBuilder &b, linalg::GenericOp op, OpOperand *in) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || type.getRank() == 0 ||
        !op.getMatchingIndexingMap(in).isIdentity() ||
        !memref::isStaticShapeAndContiguousRowMajor(type))
      return {};
    if (type.getRank() == 1)
      return in->get();
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    return memref::CollapseShapeOp::create(b, op.getLoc(), in->get(),
                                           ArrayRef<ReassociationIndices>{all});
  }

  /// The body's block arguments (inputs) and loop indices (`linalg.index`)
  /// for the element at `linear`.
  void load(OpBuilder &b, Value linear, IRMapping &mapping) {
    Location loc = op.getLoc();
    SmallVector<Value> ivs;
    // A loop index (an embedding's gathered column) is the element's
    // delinearized index in that dimension.
    for (auto loopIndex : op.getBody()->getOps<linalg::IndexOp>()) {
      if (ivs.empty())
        ivs = delinearize(b, loc, linear);
      mapping.map(loopIndex.getResult(), ivs[loopIndex.getDim()]);
    }
    for (auto [k, in] : llvm::enumerate(op.getDpsInputOperands())) {
      Value value = in->get();
      if (flat[k]) {
        value = memref::LoadOp::create(b, loc, flat[k], ValueRange{linear});
      } else if (isa<MemRefType>(value.getType())) {
        AffineMap map = op.getMatchingIndexingMap(in);
        if (map.getNumResults() != 0 && ivs.empty())
          ivs = delinearize(b, loc, linear);
        SmallVector<Value> indices;
        for (unsigned r = 0; r < map.getNumResults(); ++r)
          indices.push_back(
              affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), ivs));
        value = memref::LoadOp::create(b, loc, value, indices);
      }
      mapping.map(op.getMatchingBlockArgument(in), value);
    }
  }

  /// Row-major delinearization of the element index into the loop indices.
  SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear) {
    SmallVector<Value> ivs(ranges.size());
    Value rest = linear;
    for (size_t d = ranges.size(); d-- > 0;) {
      Value size = arith::ConstantIndexOp::create(b, loc, ranges[d]);
      ivs[d] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
    return ivs;
  }
};

/// One step of the body: its loads for each of `elements` first (so that
/// they are all in flight together), then `acc[u] = acc[u] + g(x_u)`.
/// A null mask is true; where a mask is false, acc[u] stays as it is.
SmallVector<Value> accumulate(OpBuilder &b, linalg::GenericOp op,
                              ElementReader &reader, ValueRange elements,
                              ValueRange accs, ArrayRef<Value> masks = {}) {
  SmallVector<IRMapping> mappings(elements.size());
  for (auto [u, element] : llvm::enumerate(elements))
    reader.load(b, element, mappings[u]);
  Block *body = op.getBody();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  SmallVector<Value> next;
  for (auto [u, mapping] : llvm::enumerate(mappings)) {
    mapping.map(acc, accs[u]);
    for (Operation &inner : body->without_terminator())
      if (!isa<linalg::IndexOp>(inner)) // mapped by the reader
        b.clone(inner, mapping);
    Value sum = mapping.lookup(body->getTerminator()->getOperand(0));
    if (!masks.empty() && masks[u])
      sum = arith::SelectOp::create(b, op.getLoc(), masks[u], sum, accs[u]);
    next.push_back(sum);
  }
  return next;
}

void rewrite(linalg::GenericOp op, ArrayRef<int64_t> ranges, int64_t threads,
             int64_t unroll, int64_t smallSum) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  if (total == 0) {
    op.erase(); // no element: the accumulator keeps its value
    return;
  }
  // A small sum keeps one element per thread: in thread order (host
  // emulation) its terms are added in the CPU's order.
  const int64_t u = total > smallSum ? unroll : 1;
  const int64_t numThreads =
      std::min<int64_t>(llvm::divideCeil(total, u), threads);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  ElementReader reader(b, op, ranges);
  Value zeroIdx = index(0), oneIdx = index(1), threadCount = index(numThreads),
        count = index(total);
  OpOperand *init = op.getDpsInitOperand(0);
  Value accBuffer = init->get();
  Type elementType = cast<MemRefType>(accBuffer.getType()).getElementType();

  auto parallel = scf::ParallelOp::create(
      b, loc, ValueRange{zeroIdx}, ValueRange{threadCount}, ValueRange{oneIdx});
  b.setInsertionPointToStart(parallel.getBody());
  Value thread = parallel.getInductionVars()[0];
  Value zero =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 0.0));
  Value partial;
  if (u == 1) {
    auto loop = scf::ForOp::create(b, loc, thread, count, threadCount,
                                   ValueRange{zero});
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(b, loc,
                         accumulate(b, op, reader, loop.getInductionVar(),
                                    loop.getRegionIterArgs()));
    b.setInsertionPointAfter(loop);
    partial = loop.getResult(0);
  } else {
    // Elements i + k T (k < u) per step: u loads in flight, u accumulators.
    const int64_t chunk = u * numThreads, mainEnd = total / chunk * chunk;
    SmallVector<Value> accs(u, zero);
    if (mainEnd > 0) {
      auto loop = scf::ForOp::create(b, loc, thread, index(mainEnd),
                                     index(chunk), accs);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> elements;
      for (int64_t k = 0; k < u; ++k)
        elements.push_back(
            k == 0 ? loop.getInductionVar()
                   : arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                           index(k * numThreads))
                         .getResult());
      scf::YieldOp::create(
          b, loc,
          accumulate(b, op, reader, elements, loop.getRegionIterArgs()));
      b.setInsertionPointAfter(loop);
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (mainEnd < total) {
      // The rest, fewer than u T elements: one more step, each element
      // that some thread lacks masked (its index clamped, its term not
      // added).
      Value first = mainEnd == 0
                        ? thread
                        : arith::AddIOp::create(b, loc, thread, index(mainEnd))
                              .getResult();
      SmallVector<Value> elements, masks;
      for (int64_t k = 0; k < u && mainEnd + k * numThreads < total; ++k) {
        Value element =
            k == 0 ? first
                   : arith::AddIOp::create(b, loc, first, index(k * numThreads))
                         .getResult();
        Value mask;
        if (mainEnd + (k + 1) * numThreads > total) {
          mask = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       element, count);
          element = arith::MinUIOp::create(b, loc, element, index(total - 1));
        }
        elements.push_back(element);
        masks.push_back(mask);
      }
      SmallVector<Value> next =
          accumulate(b, op, reader, elements,
                     ArrayRef<Value>(accs).take_front(elements.size()), masks);
      llvm::copy(next, accs.begin());
    }
    // The accumulators pairwise: ((a0 + a1) + (a2 + a3)) + ...
    while (accs.size() > 1) {
      SmallVector<Value> halved;
      for (size_t k = 0; k + 1 < accs.size(); k += 2)
        halved.push_back(arith::AddFOp::create(b, loc, accs[k], accs[k + 1]));
      if (accs.size() % 2)
        halved.push_back(accs.back());
      accs = std::move(halved);
    }
    partial = accs[0];
  }
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, partial,
                              accBuffer, ValueRange{});
  op.erase();
}

struct AtomicFullReductionsPass
    : msamp::impl::MSAMPGPUAtomicFullReductionsBase<AtomicFullReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1 || unroll < 1 || smallSum < 0) {
      getOperation().emitError("msamp-gpu-atomic-full-reductions: threads "
                               "and unroll must be positive, small-sum "
                               "non-negative");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() > 0 && op.getNumReductionLoops() == op.getNumLoops())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp candidate : candidates) {
      FailureOr<linalg::GenericOp> asGenericOp =
          msamp::asGeneric(rewriter, candidate);
      if (failed(asGenericOp))
        continue;
      linalg::GenericOp generic = *asGenericOp;
      SmallVector<int64_t> ranges;
      if (isAtomicSum(generic, ranges))
        rewrite(generic, ranges, threads, unroll, smallSum);
    }
  }
};

} // namespace
