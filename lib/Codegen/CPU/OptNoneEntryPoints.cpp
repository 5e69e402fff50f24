//===- OptNoneEntryPoints.cpp - --msamp-optnone-entry-points ----*- C++ -*-===//
//
// The step's public LLVM functions, once everything repeated is outlined,
// are straight lines of calls: they are marked optnone + noinline so that
// LLVM -O3 skips them and code generation selects them at -O0 (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPOPTNONEENTRYPOINTS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether the blocks of `region` reach a block that is still on the
/// depth-first path: a cycle in the control flow, i.e. a loop. Iterative
/// (the step has one block per branch of thousands of ops at most, but a
/// recursive walk would put the depth on the stack).
bool hasCycle(Region &region) {
  if (region.empty())
    return false;
  llvm::DenseSet<Block *> done, onPath;
  SmallVector<std::pair<Block *, unsigned>> stack;
  stack.push_back({&region.front(), 0});
  onPath.insert(&region.front());
  while (!stack.empty()) {
    auto &[block, next] = stack.back();
    if (next == block->getNumSuccessors()) {
      onPath.erase(block);
      done.insert(block);
      stack.pop_back();
      continue;
    }
    Block *succ = block->getSuccessor(next++);
    if (onPath.contains(succ))
      return true;
    if (done.contains(succ))
      continue;
    onPath.insert(succ);
    stack.push_back({succ, 0});
  }
  return false;
}

struct MSAMPOptNoneEntryPointsPass
    : ::mlir::msamp::impl::MSAMPOptNoneEntryPointsBase<
          MSAMPOptNoneEntryPointsPass> {
  void runOnOperation() override {
    bool changed = false;
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || fn.isPrivate() ||
          fn.getLinkage() != LLVM::Linkage::External || fn.getAlwaysInline() ||
          hasCycle(fn.getBody()))
        continue;
      OpBuilder b(fn);
      fn.setOptimizeNoneAttr(b.getUnitAttr());
      fn.setNoInlineAttr(b.getUnitAttr());
      ++numMarked;
      changed = true;
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
