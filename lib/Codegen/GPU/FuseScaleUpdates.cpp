//===- FuseScaleUpdates.cpp - a cast's scaling bookkeeping as one op ------===//
//
// msamp-fp8-gemms writes the scaling of each FP8 cast as separate ops; on
// the GPU each was a runtime call (msamp_rt_amax, _all_reduce,
// _update_amax_history, _compute_scale twice) or a single-thread kernel
// (the warm-up select and `1 / scale`, which read a scale a call had just
// written). This pass folds each such chain into one msamp.scale_update,
// which convert-msamp-to-runtime lowers to one msamp_rt_scale_update call:
// an amax kernel and a one-thread kernel on the device, plus the NCCL
// all-reduce of the amax when the group has more than one rank.
//
// Delayed scaling (the activations and gradients at O2):
//
//   %a  = msamp.amax %x                          (one use)
//   %r  = msamp.all_reduce max %a                (optional; one use)
//   %h1 = msamp.update_amax_history %h, %r
//   %j  = msamp.compute_scale K most_recent %h1, %p for F    (one use: %s)
//   %s  = select %warm, %j, %p                   (arith.select or its 0-d
//                                                 linalg.generic)
//   ...   1.0 / %s                               (any number, after %s)
//   %n  = msamp.compute_scale K A %h1, %s for F
//
// becomes, at %s, `msamp.scale_update K A %x, %h, %p use_jit %warm for F
// [reduce_amax]` whose results replace %h1, %s, the inverses and %n. Without
// warm-up (no %j and %s: the cast uses %p) the op takes %n's place and its
// scale result is unused. A just-in-time cast whose amax is all-reduced
// first (the FP8 weight gradients: amax -> all_reduce max ->
// tensor.expand_shape -> compute_scale most_recent) becomes, at its
// compute_scale, a `just_in_time` scale_update with a one-entry history
// (a tensor.empty: rolling one entry reads none of it; the rolled history,
// [amax], is what the expand_shape was, and its next scale is not read). The
// quantize that reads the scale stays a call of its own.
//
// Every value is computed by the same rules in the same order
// (numerics::scaleUpdate), so the step's bits do not change:
// test/Codegen/GPU/host-emulation.test runs the fused step against the CPU
// target, which keeps the separate calls.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/MSAMPToRuntime.h"
#include "MSAMP/Dialect/MSAMPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFUSESCALEUPDATES
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The amax a chain starts from: `msamp.amax %x`, optionally MAX all-reduced
/// (no inverse scale), read by `consumer` (the history update or the
/// one-entry history). The raw amax has no other reader when it is reduced;
/// the amax the chain uses may have readers after the fused op (the
/// gradient statistics read the weight gradients' amaxes), which then read
/// it from the rolled history's newest entry.
struct AmaxSource {
  AmaxOp amax;
  AllReduceOp reduce; ///< null: not all-reduced
  Value value;        ///< the amax the chain uses
};

std::optional<AmaxSource> matchAmax(Value value) {
  AmaxSource source;
  source.value = value;
  if (auto reduce = value.getDefiningOp<AllReduceOp>()) {
    if (reduce.getKind() != ReduceKind::Max || reduce.getScaleInv())
      return std::nullopt;
    source.reduce = reduce;
    value = reduce.getInput();
    if (!value.hasOneUse())
      return std::nullopt;
  }
  source.amax = value.getDefiningOp<AmaxOp>();
  if (!source.amax)
    return std::nullopt;
  return source;
}

/// `select %cond, %onTrue, %onFalse` on 0-d tensors: an arith.select, or
/// the 0-d linalg.generic convert-elementwise-to-linalg made of it. Returns
/// the condition and fills the two values.
Value matchSelect(Operation *op, Value &onTrue, Value &onFalse) {
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    onTrue = select.getTrueValue();
    onFalse = select.getFalseValue();
    return select.getCondition();
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 3 ||
      generic.getNumResults() != 1 || generic.getNumLoops() != 0)
    return nullptr;
  Block &body = generic.getRegion().front();
  auto select = dyn_cast<arith::SelectOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!select || yield->getPrevNode() != select.getOperation() ||
      yield.getOperand(0) != select.getResult())
    return nullptr;
  auto input = [&](Value arg) -> Value {
    auto block = dyn_cast<BlockArgument>(arg);
    if (!block || block.getOwner() != &body ||
        block.getArgNumber() >= generic.getNumDpsInputs())
      return nullptr;
    return generic.getDpsInputOperand(block.getArgNumber())->get();
  };
  onTrue = input(select.getTrueValue());
  onFalse = input(select.getFalseValue());
  Value cond = input(select.getCondition());
  return onTrue && onFalse ? cond : nullptr;
}

/// The ops one msamp.scale_update replaces.
struct Chain {
  AmaxSource source;
  UpdateAmaxHistoryOp history;    ///< null for a just-in-time cast
  tensor::ExpandShapeOp oneEntry; ///< the just-in-time cast's [amax]
  ComputeScaleOp jit;             ///< most_recent (null: no warm-up)
  Operation *select = nullptr;    ///< the warm-up select (or null)
  Value cond;                     ///< its condition
  ComputeScaleOp next;            ///< the next scale (delayed only)
  Value prevScale;
  Operation *root = nullptr; ///< where the fused op goes
  Value scale;               ///< the scale the cast uses
};

bool sameRule(ComputeScaleOp a, ComputeScaleOp b) {
  return a.getKind() == b.getKind() && a.getFormat() == b.getFormat() &&
         a.getMargin() == b.getMargin();
}

/// Whether every user of `value` except `skip` comes after `root` (same
/// block).
bool usedOnlyAfter(Value value, Operation *root, ArrayRef<Operation *> skip) {
  for (Operation *user : value.getUsers()) {
    if (llvm::is_contained(skip, user))
      continue;
    Operation *ancestor = root->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || !root->isBeforeInBlock(ancestor))
      return false;
  }
  return true;
}

/// A delayed-scaling chain around `history`.
std::optional<Chain> matchDelayed(UpdateAmaxHistoryOp history) {
  Chain chain;
  chain.history = history;
  std::optional<AmaxSource> source = matchAmax(history.getAmax());
  if (!source)
    return std::nullopt;
  chain.source = *source;
  Value rolled = history.getResult();
  // The warm-up pair (jit, select), or none; then the next scale.
  for (Operation *user : rolled.getUsers()) {
    auto cs = dyn_cast<ComputeScaleOp>(user);
    if (!cs || cs.getAlgo() != AmaxAlgo::MostRecent ||
        cs.getResult().use_empty())
      continue;
    // Its only reader is the select (a linalg.generic may also name it as
    // its unread init).
    Operation *select = *cs.getResult().user_begin();
    if (!llvm::all_of(cs.getResult().getUsers(),
                      [&](Operation *user) { return user == select; }))
      continue;
    Value onTrue, onFalse;
    Value cond = matchSelect(select, onTrue, onFalse);
    if (!cond || onTrue != cs.getResult() || onFalse != cs.getPrevScale())
      continue;
    chain.jit = cs;
    chain.select = select;
    chain.cond = cond;
    chain.prevScale = cs.getPrevScale();
    chain.scale = chain.select->getResult(0);
    break;
  }
  for (Operation *user : rolled.getUsers()) {
    auto cs = dyn_cast<ComputeScaleOp>(user);
    if (!cs || cs == chain.jit)
      continue;
    // With warm-up the next scale's previous scale is the one used.
    if (chain.jit &&
        (cs.getPrevScale() != chain.scale || !sameRule(cs, chain.jit)))
      continue;
    if (chain.next)
      return std::nullopt; // two candidates: not the recipe's shape
    chain.next = cs;
  }
  if (!chain.next)
    return std::nullopt;
  if (!chain.jit) {
    chain.prevScale = chain.next.getPrevScale();
    chain.scale = chain.prevScale;
  }
  chain.root = chain.select ? chain.select : chain.next.getOperation();
  Block *block = history->getBlock();
  for (Operation *op :
       {chain.source.amax.getOperation(), history.getOperation(),
        chain.next.getOperation(), chain.root})
    if (op->getBlock() != block)
      return std::nullopt;
  if (chain.source.reduce && chain.source.reduce->getBlock() != block)
    return std::nullopt;
  // The rolled history's other readers (the state it becomes) come after
  // the fused op.
  SmallVector<Operation *> chainOps = {chain.next};
  if (chain.jit)
    chainOps.push_back(chain.jit);
  if (!usedOnlyAfter(rolled, chain.root, chainOps) ||
      !usedOnlyAfter(chain.source.value, chain.root, {history}))
    return std::nullopt;
  return chain;
}

/// A just-in-time cast whose amax is all-reduced: `scale`'s chain.
std::optional<Chain> matchReducedJit(ComputeScaleOp scale) {
  if (scale.getAlgo() != AmaxAlgo::MostRecent)
    return std::nullopt;
  auto oneEntry = scale.getAmaxHistory().getDefiningOp<tensor::ExpandShapeOp>();
  if (!oneEntry || !oneEntry.getResult().hasOneUse())
    return std::nullopt;
  std::optional<AmaxSource> source = matchAmax(oneEntry.getSrc());
  if (!source || !source->reduce)
    return std::nullopt;
  Block *block = scale->getBlock();
  if (source->amax->getBlock() != block ||
      source->reduce->getBlock() != block || oneEntry->getBlock() != block)
    return std::nullopt;
  if (!usedOnlyAfter(source->value, scale, {oneEntry}))
    return std::nullopt;
  Chain chain;
  chain.source = *source;
  chain.oneEntry = oneEntry;
  chain.jit = scale;
  chain.prevScale = scale.getPrevScale();
  chain.root = scale;
  chain.scale = scale.getResult();
  return chain;
}

/// Replaces `chain` by one msamp.scale_update.
void fuse(Chain chain, IRRewriter &rewriter) {
  ComputeScaleOp rule = chain.jit ? chain.jit : chain.next;
  Location loc = chain.root->getLoc();
  rewriter.setInsertionPoint(chain.root);
  Value input = chain.source.amax.getInput();
  Value history;
  if (chain.history) {
    history = chain.history.getAmaxHistory();
  } else {
    // The just-in-time cast has no history: a one-entry one, whose roll
    // [amax] is the expand_shape it replaces. Rolling one entry reads none
    // of it, so it is left uninitialized (a constant would be a global the
    // GPU step copies into a buffer every step).
    history = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{1},
                                      rewriter.getF32Type());
  }
  AmaxAlgo algo = chain.next ? chain.next.getAlgo() : AmaxAlgo::MostRecent;
  Type scalar = chain.prevScale.getType();
  auto fused = ScaleUpdateOp::create(
      rewriter, loc, history.getType(), scalar, scalar, scalar, rule.getKind(),
      algo, input, history, chain.prevScale, chain.cond, rule.getFormat(),
      rule.getMargin(),
      /*reduce_amax=*/static_cast<bool>(chain.source.reduce),
      /*just_in_time=*/!chain.history);

  // Later readers of the amax read the newest history entry, the same f32.
  SmallVector<Operation *> chainUsers;
  if (chain.history)
    chainUsers.push_back(chain.history);
  if (chain.oneEntry)
    chainUsers.push_back(chain.oneEntry);
  if (llvm::any_of(chain.source.value.getUsers(), [&](Operation *user) {
        return !llvm::is_contained(chainUsers, user);
      })) {
    Value newest = fused.getNewHistory();
    auto type = cast<RankedTensorType>(newest.getType());
    if (type.getDimSize(0) != 1)
      newest = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({1}, type.getElementType()),
          newest, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    Value amax = tensor::CollapseShapeOp::create(
        rewriter, loc, chain.source.value.getType(), newest,
        ArrayRef<ReassociationIndices>{});
    rewriter.replaceUsesWithIf(chain.source.value, amax, [&](OpOperand &use) {
      return !llvm::is_contained(chainUsers, use.getOwner());
    });
  }

  // Every `1 / scale` reads the fused op's scale_inv instead (they all
  // follow the select or compute_scale it replaces). Without warm-up the
  // cast uses the state itself, whose inverse precedes the op: kept.
  SmallVector<Operation *> inverses;
  if (chain.scale != chain.prevScale)
    for (Operation *user : chain.scale.getUsers())
      if (isScaleInverse(user, chain.scale))
        inverses.push_back(user);
  for (Operation *inverse : inverses) {
    rewriter.replaceAllUsesWith(inverse->getResult(0), fused.getScaleInv());
    rewriter.eraseOp(inverse);
  }
  if (chain.next)
    rewriter.replaceOp(chain.next, fused.getNextScale());
  if (chain.select)
    rewriter.replaceOp(chain.select, fused.getScale());
  if (!chain.history)
    rewriter.replaceOp(chain.jit, fused.getScale());
  else if (chain.jit)
    rewriter.eraseOp(chain.jit);
  if (chain.history)
    rewriter.replaceOp(chain.history, fused.getNewHistory());
  if (chain.oneEntry)
    rewriter.eraseOp(chain.oneEntry);
  if (chain.source.reduce)
    rewriter.eraseOp(chain.source.reduce);
  rewriter.eraseOp(chain.source.amax);
}

struct FuseScaleUpdatesPass
    : ::mlir::msamp::impl::MSAMPGPUFuseScaleUpdatesBase<FuseScaleUpdatesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Chain> chains;
    // One chain per amax: a second reader of it (not what msamp-fp8-gemms
    // writes) keeps its separate ops and reads the first chain's amax.
    llvm::SmallPtrSet<Operation *, 32> claimed;
    getOperation().walk([&](Operation *op) {
      std::optional<Chain> chain;
      if (auto history = dyn_cast<UpdateAmaxHistoryOp>(op))
        chain = matchDelayed(history);
      else if (auto scale = dyn_cast<ComputeScaleOp>(op))
        chain = matchReducedJit(scale);
      if (chain && claimed.insert(chain->source.amax).second)
        chains.push_back(*chain);
    });
    IRRewriter rewriter(&getContext());
    for (Chain &chain : chains) {
      fuse(chain, rewriter);
      ++(chain.history ? numDelayed : numJustInTime);
    }
  }
};

} // namespace
