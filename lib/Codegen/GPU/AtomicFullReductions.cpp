//===- AtomicFullReductions.cpp - full sums as GPU partial sums ---*- C++
//-*-===//
//
//   linalg.generic {iterator_types = ["reduction", ...]}
//       ins(%x : memref<AxBxf32>) outs(%acc : memref<f32>) {
//     ^bb0(%a: f32, %o: f32):  %g = f(%a)  %s = arith.addf %g, %o  yield %s }
// ->
//   scf.parallel (%t) = (0) to (T) step (1) {
//     %part = scf.for %i = %t to A*B step T iter_args(%p = 0.0) {
//       (%r, %c) = delinearize %i;  %a = memref.load %x[%r, %c]
//       %g = f(%a);  %s = arith.addf %g, %p;  scf.yield %s }
//     memref.atomic_rmw addf %part, %acc[] }
//
// The addition is reassociated (partial sums, atomics in any order); the
// accumulator's initial value is kept (it is in %acc before the kernel).
// `linalg.index` in the body (a gather's column) becomes the delinearized
// loop index, so a full sum over a lookup runs on the device too.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/AsGeneric.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

void rewrite(linalg::GenericOp op, ArrayRef<int64_t> ranges, int64_t threads) {
  Location loc = op.getLoc();
  OpBuilder b(op);
  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  if (total == 0) {
    op.erase(); // no element: the accumulator keeps its value
    return;
  }
  const int64_t numThreads = std::min(total, threads);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
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
  auto loop =
      scf::ForOp::create(b, loc, thread, count, threadCount, ValueRange{zero});
  b.setInsertionPointToStart(loop.getBody());
  // Row-major delinearization of the element index into the loop indices.
  SmallVector<Value> ivs(ranges.size());
  Value rest = loop.getInductionVar();
  for (size_t d = ranges.size(); d-- > 0;) {
    Value size = index(ranges[d]);
    ivs[d] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  IRMapping mapping;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value value = in->get();
    if (isa<MemRefType>(value.getType())) {
      AffineMap map = op.getMatchingIndexingMap(in);
      SmallVector<Value> indices;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        indices.push_back(
            affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), ivs));
      value = memref::LoadOp::create(b, loc, value, indices);
    }
    mapping.map(op.getMatchingBlockArgument(in), value);
  }
  mapping.map(op.getMatchingBlockArgument(init), loop.getRegionIterArgs()[0]);
  Block *body = op.getBody();
  for (Operation &inner : body->without_terminator()) {
    // A loop index (an embedding's gathered column) is the element's
    // delinearized index in that dimension.
    if (auto loopIndex = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(loopIndex.getResult(), ivs[loopIndex.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  scf::YieldOp::create(b, loc,
                       mapping.lookup(body->getTerminator()->getOperand(0)));
  b.setInsertionPointAfter(loop);
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf,
                              loop.getResult(0), accBuffer, ValueRange{});
  op.erase();
}

struct AtomicFullReductionsPass
    : msamp::impl::MSAMPGPUAtomicFullReductionsBase<AtomicFullReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1) {
      getOperation().emitError("msamp-gpu-atomic-full-reductions: threads "
                               "must be positive");
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
        rewrite(generic, ranges, threads);
    }
  }
};

} // namespace
