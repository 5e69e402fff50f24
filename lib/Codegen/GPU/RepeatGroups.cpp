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
  return BlockSegments(&block, [](Operation &op) {
    return op.getNumRegions() > 0 || isa<CallOpInterface>(op);
  });
}
