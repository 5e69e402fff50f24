//===- MergeGenerics.cpp - two linalg.generics as one ---------------------===//
//
// Part of the msamp project.
//
// See MergeGenerics.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/MergeGenerics.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

linalg::GenericOp msamp::mergeGenerics(RewriterBase &rewriter,
                                       linalg::GenericOp a,
                                       linalg::GenericOp b) {
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> inputMaps, initMaps;
  // b's inputs that a reads already (same value, same map) are a's.
  SmallVector<int> bInputToA;
  for (OpOperand *in : a.getDpsInputOperands()) {
    inputs.push_back(in->get());
    inputMaps.push_back(a.getMatchingIndexingMap(in));
  }
  for (OpOperand *in : b.getDpsInputOperands()) {
    AffineMap map = b.getMatchingIndexingMap(in);
    int same = -1;
    for (unsigned i = 0; i < a.getNumDpsInputs(); ++i)
      if (inputs[i] == in->get() && inputMaps[i] == map)
        same = static_cast<int>(i);
    bInputToA.push_back(same);
    if (same < 0) {
      inputs.push_back(in->get());
      inputMaps.push_back(map);
    }
  }
  for (linalg::GenericOp op : {a, b})
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      initMaps.push_back(op.getMatchingIndexingMap(&init));
    }
  SmallVector<AffineMap> maps(inputMaps);
  maps.append(initMaps);

  // On buffers a generic has no results.
  SmallVector<Type> resultTypes;
  if (a.hasPureTensorSemantics())
    llvm::append_range(resultTypes, ValueRange(inits).getTypes());
  auto merged =
      linalg::GenericOp::create(rewriter, a.getLoc(), resultTypes, inputs,
                                inits, maps, a.getIteratorTypesArray());
  OpBuilder::InsertionGuard guard(rewriter);
  Block *body = rewriter.createBlock(&merged.getRegion());
  // A scalar input (a generic may read an f32 value, as the loss scale
  // of the AMP levels) is its own block argument's type.
  for (Value v : llvm::concat<Value>(inputs, inits))
    body->addArgument(getElementTypeOrSelf(v.getType()), a.getLoc());
  const unsigned numInputs = inputs.size();
  IRMapping mapA, mapB;
  for (unsigned i = 0; i < a.getNumDpsInputs(); ++i)
    mapA.map(a.getBody()->getArgument(i), body->getArgument(i));
  unsigned next = a.getNumDpsInputs();
  for (unsigned i = 0; i < b.getNumDpsInputs(); ++i)
    mapB.map(b.getBody()->getArgument(i),
             body->getArgument(bInputToA[i] >= 0 ? bInputToA[i] : next++));
  for (unsigned i = 0; i < a.getNumDpsInits(); ++i)
    mapA.map(a.getBody()->getArgument(a.getNumDpsInputs() + i),
             body->getArgument(numInputs + i));
  for (unsigned i = 0; i < b.getNumDpsInits(); ++i)
    mapB.map(b.getBody()->getArgument(b.getNumDpsInputs() + i),
             body->getArgument(numInputs + a.getNumDpsInits() + i));
  SmallVector<Value> yields;
  rewriter.setInsertionPointToEnd(body);
  for (auto [op, mapping] : {std::pair{a, &mapA}, std::pair{b, &mapB}}) {
    for (Operation &inner : op.getBody()->without_terminator())
      rewriter.clone(inner, *mapping);
    for (Value v : op.getBody()->getTerminator()->getOperands())
      yields.push_back(mapping->lookupOrDefault(v));
  }
  linalg::YieldOp::create(rewriter, a.getLoc(), yields);
  rewriter.replaceOp(a, merged->getResults().take_front(a.getNumResults()));
  rewriter.replaceOp(b, merged->getResults().drop_front(a.getNumResults()));
  return merged;
}
