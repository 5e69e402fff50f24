//===- RepeatGroups.cpp - which layer copy a kernel belongs to ------------===//
//
// Part of the msamp project.
//
// See RepeatGroups.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/RepeatGroups.h"
#include "MSAMP/Codegen/TandemRepeats.h"

#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;
using namespace mlir::msamp;

RepeatGroups::RepeatGroups(Block &block) {
  SmallVector<Operation *> work;
  for (Operation &op : block)
    if (op.getNumRegions() > 0 || isa<CallOpInterface>(op))
      work.push_back(&op);
  groups = repeatSegments(work, kMinRepeatPeriod);
}
