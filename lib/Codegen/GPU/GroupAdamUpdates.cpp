//===- GroupAdamUpdates.cpp - --msamp-gpu-group-adam-updates --------------===//
//
// Part of the msamp project.
//
// The optimizer's updates end the step one after the other (one
// msamp.adam_update per parameter: 197 for GPT-2 small). On the GPU each
// was a runtime call with its own launches and synchronization. Here each
// maximal run of adjacent updates is sorted into classes of updates that
// can share a call (canShareAdamCall; O2 has two: the f32 parameters, and
// the f16 master weights of the GEMMs with their FP8 gradients, which
// alternate in parameter order), each class is made contiguous in the
// order of its first update, and a class of two or more gets a group id:
// convert-msamp-to-runtime lowers it to one msamp_rt_adam_update_multi call
// (AdamGroupToRuntime.cpp).
//
// Moving updates past each other is safe because they are Pure and none of
// a run reads another's result (checked; a run where one does is left in
// its order and only its adjacent compatible neighbours are grouped): the
// order of independent updates changes no value, and each keeps its own
// in-place decision, since no other op sits between them.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Codegen/TandemRepeats.h"
#include "MSAMP/Conversion/MSAMPToRuntime.h"
#include "MSAMP/Dialect/MSAMPOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUGROUPADAMUPDATES
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// Whether an update of `run` reads another's result.
bool hasInternalUse(ArrayRef<Operation *> run) {
  llvm::SmallPtrSet<Operation *, 32> members(run.begin(), run.end());
  return llvm::any_of(run, [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return members.contains(v.getDefiningOp());
    });
  });
}

struct GroupAdamUpdatesPass
    : msamp::impl::MSAMPGPUGroupAdamUpdatesBase<GroupAdamUpdatesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<SmallVector<Operation *>> runs;
    getOperation().walk([&](Block *block) {
      SmallVector<Operation *> run;
      for (Operation &op : *block) {
        if (isa<AdamUpdateOp>(op)) {
          run.push_back(&op);
          continue;
        }
        if (run.size() > 1)
          runs.push_back(run);
        run.clear();
      }
      if (run.size() > 1)
        runs.push_back(run);
    });
    for (ArrayRef<Operation *> run : runs) {
      if (!perCopy) {
        group(run);
        continue;
      }
      // Each copy of a repeat, and each stretch between repeats, on its
      // own.
      SmallVector<uint64_t> keys;
      for (Operation *op : run)
        keys.push_back(msamp::structuralKey(op));
      int64_t at = 0;
      auto groupUpTo = [&](int64_t end) {
        if (end - at > 1)
          group(run.slice(at, end - at));
        at = end;
      };
      // Copies made of copies of a shorter block hold a number of layers
      // that depends on the depth: grouped with the rest.
      for (msamp::TandemRepeat repeat :
           msamp::findLayerRepeats(keys, msamp::kMinRepeatPeriod)) {
        groupUpTo(repeat.start);
        for (int64_t c = 1; c <= repeat.copies; ++c)
          groupUpTo(repeat.start + c * repeat.period);
      }
      groupUpTo(run.size());
    }
  }

  /// Classes of `run` made contiguous (unless an update reads another's
  /// result: then only neighbours), ids for the classes of two or more.
  void group(ArrayRef<Operation *> run) {
    SmallVector<SmallVector<Operation *>> classes;
    if (hasInternalUse(run)) {
      for (Operation *op : run) {
        if (classes.empty() || !canShareAdamCall(classes.back().front(), op))
          classes.emplace_back();
        classes.back().push_back(op);
      }
    } else {
      for (Operation *op : run) {
        auto it = llvm::find_if(classes, [&](ArrayRef<Operation *> c) {
          return canShareAdamCall(c.front(), op);
        });
        if (it == classes.end())
          classes.push_back({op});
        else
          it->push_back(op);
      }
      // Contiguous, in class order, where the run ended.
      Operation *end = run.back()->getNextNode();
      for (ArrayRef<Operation *> c : classes)
        for (Operation *op : c)
          op->moveBefore(end);
    }
    auto i64 = IntegerType::get(&getContext(), 64);
    for (ArrayRef<Operation *> c : classes) {
      if (c.size() < 2)
        continue;
      auto id = IntegerAttr::get(i64, nextId++);
      for (Operation *op : c)
        op->setAttr(kAdamGroupAttr, id);
      ++numGroups;
      numGrouped += c.size();
    }
  }

  int64_t nextId = 0;
};
} // namespace
