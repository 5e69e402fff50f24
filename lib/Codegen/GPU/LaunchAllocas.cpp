//===- LaunchAllocas.cpp - static stack slots for launch arguments --------===//
//
// Part of the msamp project. See LaunchAllocas.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/LaunchAllocas.h"

#include "llvm/Analysis/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

using namespace llvm;

unsigned mlir::msamp::hoistLaunchAllocas(Module &module) {
  unsigned moved = 0;
  for (Function &fn : module) {
    if (fn.isDeclaration() || !fn.hasFnAttribute(Attribute::OptimizeNone))
      continue;
    // In a loop an alloca runs once per iteration: moving it would share
    // one slot between them. msamp-optnone-entry-points marks only
    // functions without a cycle; checked again here.
    SmallVector<std::pair<const BasicBlock *, const BasicBlock *>> backedges;
    FindFunctionBackedges(fn, backedges);
    if (!backedges.empty())
      continue;
    BasicBlock &entry = fn.getEntryBlock();
    // After the allocas that already lead the entry block, in their order.
    BasicBlock::iterator insertAt = entry.begin();
    while (insertAt != entry.end() && isa<AllocaInst>(*insertAt))
      ++insertAt;
    for (BasicBlock &block : fn) {
      if (&block == &entry)
        continue;
      for (Instruction &inst : make_early_inc_range(block)) {
        auto *alloca = dyn_cast<AllocaInst>(&inst);
        if (!alloca || !isa<ConstantInt>(alloca->getArraySize()))
          continue;
        alloca->moveBefore(entry, insertAt);
        ++moved;
      }
    }
  }
  return moved;
}
