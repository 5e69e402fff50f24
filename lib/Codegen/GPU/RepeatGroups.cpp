//===- RepeatGroups.cpp - which layer copy a kernel belongs to ------------===//
//
// Part of the msamp project.
//
// See RepeatGroups.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/RepeatGroups.h"

#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;

msamp::BlockSegments msamp::repeatGroups(Block &block) {
  // A run of equal ops (copies of fewer than 4 ops: the calls of one layer
  // function in a row, equal runtime calls) is no block of layers. Found as
  // copies of a period that depends on its length (the layers' first phase:
  // two copies of half of it from 32 layers on), it cut the stretch around
  // it and kept kernels before and after it from merging (issue 19: 47 to
  // 50 distinct kernels at 32 to 48 layers of the benchmark LM, 45 below).
  return BlockSegments(
      &block,
      [](Operation &op) {
        return op.getNumRegions() > 0 || isa<CallOpInterface>(op);
      },
      ShortRepeats::Ignore);
}
