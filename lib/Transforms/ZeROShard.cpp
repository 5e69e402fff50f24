//===- ZeROShard.cpp - O3: FP8 weights, sharded masters and states -*- C++
//-*-===//
//
// MS-AMP's O3 (docs/Numerics.md 6.1: DeepSpeed FP8 ZeRO 1/2, FP8-LM Alg. 1) as
// a rewrite of an O2 train step into the step of one rank of an N-rank group.
//
// Why one program per rank (the world size and the rank are compile-time
// options) rather than one program for all ranks with the rank as an input:
// every rank then holds exactly the state it owns, as separate static
// tensors with their own names (no padded shard buffers at rank-dependent
// offsets, no dynamic slicing, no per-rank branches), so the runtime's
// allocations are the per-rank memory report by construction, and the
// optimizer kernels run unchanged on whole tensors, each with its per-tensor
// scale. The price is N compilations; msamp-run compiles each rank's
// specialization at start-up, in the compile cache like any other
// (docs/Design.md "O3").
//
// Partition (MS-AMP fp8_stage_1_and_2.py / FP8-LM Alg. 1): params sorted by
// (-numel, index mod N), each assigned whole to the first rank with the
// fewest elements so far. Every rank computes the same partition from the
// same O2 step.
//
// Per param P owned by rank o, on rank r (docs/TrainStep.md "O3"):
//
//   every rank   grad all-reduce      -> msamp.reduce ... root o
//   GEMM weight  P: f16 -> f8E4M3FN (replicated), P.scale its E4M3 scale;
//                the FP8 GEMMs read P's bytes and P.scale directly (the
//                just-in-time re-quantization of the O2 step is gone).
//                Only if FP8 GEMMs are all that read P: a weight whose
//                value is read elsewhere too (a tied embedding, gathered
//                and cast for the head) stays FP16 + scale on every rank,
//                updated by its owner and broadcast like an f32 param
//   r == o       P.master (f16) + P.master.scale, the O2 moments: the update
//                reads and writes them; then the new master is cast to E4M3
//                just in time (the O2 step's GEMM cast, one step earlier)
//   r != o       no master, no moments, no update
//   every rank   at the end of the step, in param order:
//                msamp.broadcast of P's new bytes and scale (or the new f32
//                value of a non-GEMM param) from rank o
//
// Since the owner's FP8 weight is the cast the O2 step applies to its FP16
// weight before each GEMM, and msamp.reduce combines in the same rank order
// as msamp.all_reduce, an O3 step computes the same losses as the O2 step
// of the same group, bit for bit (test/Tools/msamp-run/DataParallel).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <algorithm>
#include <numeric>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPZEROSHARD
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {
/// One param of the O2 step and what the rewrite needs to know about it.
struct ShardedParam {
  unsigned arg;           // the param's argument
  Operation *update;      // its adam_update / sgd_update
  AllReduceOp gradReduce; // the all-reduce producing the update's gradient
  int64_t numel;
  int64_t owner = 0;
  /// Stored as E4M3 on every rank (an FP16 weight read only by FP8 GEMMs);
  /// otherwise replicated in its O2 precision.
  bool storedFP8 = false;
};

struct MSAMPZeROShardPass
    : ::mlir::msamp::impl::MSAMPZeROShardBase<MSAMPZeROShardPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// The optimizer-state operands of an update (moments, momentum buffer and
/// their scales): what only the owner keeps.
static SmallVector<Value> optimizerState(Operation *op) {
  SmallVector<Value> state;
  if (auto adam = dyn_cast<AdamUpdateOp>(op)) {
    state = {adam.getExpAvg(), adam.getExpAvgScale(), adam.getExpAvgSq(),
             adam.getExpAvgSqScale()};
  } else {
    auto sgd = cast<SGDUpdateOp>(op);
    state = {sgd.getMomentumBuffer()};
  }
  llvm::erase_if(state, [](Value v) { return !v; });
  return state;
}

/// Erases the update `op` of a param this rank does not own. Each step
/// result it produced is first pointed back at the state it updates (a
/// placeholder, replaced by a broadcast or erased with the state).
static void eraseUpdate(func::FuncOp func, Operation *op) {
  Operation *ret = func.getBody().front().getTerminator();
  for (OpOperand &use : ret->getOpOperands()) {
    if (use.get().getDefiningOp() != op)
      continue;
    auto updates = func.getResultAttrOfType<IntegerAttr>(use.getOperandNumber(),
                                                         kUpdatesAttr);
    assert(updates && "an update result that is not a state result");
    use.set(func.getArgument(updates.getInt()));
  }
  op->erase();
}

/// Greedy whole-tensor partition (FP8-LM Alg. 1): sorted by (-numel,
/// index mod N), each to the first rank holding the fewest elements.
static void assignOwners(MutableArrayRef<ShardedParam> params, int64_t world) {
  SmallVector<unsigned> order(params.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    if (params[a].numel != params[b].numel)
      return params[a].numel > params[b].numel;
    return static_cast<int64_t>(a) % world < static_cast<int64_t>(b) % world;
  });
  SmallVector<int64_t> load(world, 0);
  for (unsigned i : order) {
    int64_t rank = std::min_element(load.begin(), load.end()) - load.begin();
    params[i].owner = rank;
    load[rank] += params[i].numel;
  }
}

/// Points the state result that updates argument `from` at argument `to`
/// (its msamp.updates index, role and name).
static void retargetStateResult(func::FuncOp func, unsigned from, unsigned to) {
  std::optional<unsigned> result = findUpdatingResult(func, from);
  assert(result && "argument has no updating result");
  Builder b(func.getContext());
  func.setResultAttr(*result, kUpdatesAttr, b.getI64IntegerAttr(to));
  func.setResultAttr(*result, kRoleAttr, b.getStringAttr(getArgRole(func, to)));
  func.setResultAttr(*result, kNameAttr, b.getStringAttr(getArgName(func, to)));
}

/// Removes arguments `args` (which must be unused) and the results that
/// update them, renumbering every remaining msamp.updates.
static void eraseStateArguments(func::FuncOp func,
                                const llvm::BitVector &args) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::BitVector results(func.getNumResults());
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
      if (args.test(u.getInt()))
        results.set(r);
  SmallVector<unsigned> newIndex(func.getNumArguments());
  for (unsigned i = 0, n = 0, e = func.getNumArguments(); i < e; ++i)
    newIndex[i] = args.test(i) ? ~0u : n++;
  for (int r = static_cast<int>(func.getNumResults()) - 1; r >= 0; --r)
    if (results.test(r))
      ret->eraseOperand(r);
  (void)func.eraseResults(results);
  (void)func.eraseArguments(args);
  Builder b(func.getContext());
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
      func.setResultAttr(r, kUpdatesAttr,
                         b.getI64IntegerAttr(newIndex[u.getInt()]));
  updateFunctionType(func);
}

/// The just-in-time E4M3 cast the FP8 GEMM pass put on the dequantized
/// weight `weight`: quantize(weight, compute_scale(expand(amax(weight)))).
/// Null when the weight reaches no FP8 GEMM.
static ComputeScaleOp findWeightCast(Value weight, QuantizeOp &cast) {
  for (Operation *user : weight.getUsers()) {
    auto q = dyn_cast<QuantizeOp>(user);
    if (!q || q.getInput() != weight ||
        !isa<Float8E4M3FNType>(q.getType().getElementType()))
      continue;
    auto scale = q.getScale().getDefiningOp<ComputeScaleOp>();
    if (!scale || scale.getAlgo() != AmaxAlgo::MostRecent)
      continue;
    Value history = scale.getAmaxHistory();
    while (auto expand = history.getDefiningOp<tensor::ExpandShapeOp>())
      history = expand.getSrc();
    auto amax = history.getDefiningOp<AmaxOp>();
    if (!amax || amax.getInput() != weight)
      continue;
    cast = q;
    return scale;
  }
  return nullptr;
}

/// Whether every use of the FP16 weight `weight` other than its optimizer
/// `update` is a just-in-time E4M3 cast for an FP8 GEMM (the dequantize,
/// the amax and scale that feed the cast, and the cast itself). Only then
/// may O3 replace the stored FP16 value by the E4M3 weight: a weight whose
/// dequantized value is read elsewhere (GPT-2's tied wte, gathered by the
/// embedding and cast for the lm_head GEMM) would read E4M3 values where
/// the O2 step reads FP16 ones, and the losses would differ from step 1.
/// Whether `op` computes nothing the step uses: side-effect free, and every
/// user of its results likewise (earlier rewrites leave such ops behind,
/// e.g. the transpose the FP8 GEMM pass no longer reads, until canonicalize
/// erases them).
static bool isDead(Operation *op) {
  // A terminator passes values on (a linalg.yield in the region of a
  // gather that reads the weight).
  if (op->hasTrait<OpTrait::IsTerminator>() || !isMemoryEffectFree(op))
    return false;
  for (Value v : op->getResults())
    for (Operation *user : v.getUsers())
      if (!isDead(user))
        return false;
  return true;
}

static bool onlyFeedsFP8Gemms(BlockArgument weight, Operation *update) {
  for (Operation *user : weight.getUsers()) {
    if (user == update)
      continue;
    auto dequantize = dyn_cast<DequantizeOp>(user);
    if (!dequantize || dequantize.getInput() != weight)
      return false;
    Value real = dequantize.getResult();
    // The casts that read `real` and the amax + expand_shape chains that
    // feed their scales (the scales themselves become the stored weight's
    // scale, so their other users are fine).
    llvm::SmallPtrSet<Operation *, 8> castParts;
    for (Operation *use : real.getUsers()) {
      auto q = dyn_cast<QuantizeOp>(use);
      if (!q || q.getInput() != real ||
          !isa<Float8E4M3FNType>(q.getType().getElementType()))
        continue;
      auto scale = q.getScale().getDefiningOp<ComputeScaleOp>();
      if (!scale || scale.getAlgo() != AmaxAlgo::MostRecent)
        continue;
      SmallVector<Operation *> chain;
      Value history = scale.getAmaxHistory();
      while (auto expand = history.getDefiningOp<tensor::ExpandShapeOp>()) {
        chain.push_back(expand);
        history = expand.getSrc();
      }
      auto amax = history.getDefiningOp<AmaxOp>();
      if (!amax || amax.getInput() != real)
        continue;
      chain.push_back(amax);
      castParts.insert(q);
      castParts.insert(scale);
      castParts.insert(chain.begin(), chain.end());
    }
    for (Operation *use : real.getUsers())
      if (!castParts.contains(use) && !isDead(use))
        return false;
    for (Operation *part : castParts)
      if (isa<AmaxOp, tensor::ExpandShapeOp>(part))
        for (Operation *next : part->getResult(0).getUsers())
          if (!castParts.contains(next) && !isDead(next))
            return false;
  }
  return true;
}

void MSAMPZeROShardPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (worldSize < 1 || rank < 0 || rank >= worldSize) {
    module.emitError() << "--" << getArgument() << ": rank "
                       << static_cast<int64_t>(rank)
                       << " is not a rank of world-size "
                       << static_cast<int64_t>(worldSize);
    return signalPassFailure();
  }
  func::FuncOp func = getTrainStepOrError(module, getArgument());
  if (!func)
    return signalPassFailure();
  if (func->hasAttr(kZeroAttr))
    return; // already one rank's step
  MLIRContext *ctx = &getContext();
  Block &entry = func.getBody().front();

  // Every param with its update and the all-reduce of its gradient, found
  // and checked before anything changes.
  SmallVector<ShardedParam> params;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (getArgRole(func, i) != kRoleParam)
      continue;
    BlockArgument arg = func.getArgument(i);
    Operation *update = nullptr;
    for (Operation *user : arg.getUsers())
      if (auto u = asOptimizerUpdate(user); u && u->param == arg)
        update = user;
    if (!update) {
      emitError(arg.getLoc())
          << "--" << getArgument() << ": param '" << getArgName(func, i)
          << "' has no optimizer update; O3 shards updates";
      return signalPassFailure();
    }
    auto reduce = asOptimizerUpdate(update)->grad.getDefiningOp<AllReduceOp>();
    if (!reduce || reduce.getKind() != ReduceKind::Mean) {
      update->emitError("--")
          << getArgument() << ": the gradient of param '" << getArgName(func, i)
          << "' is not a msamp.all_reduce mean; O3 reduces it to its owner";
      return signalPassFailure();
    }
    std::optional<unsigned> result = findUpdatingResult(func, i);
    if (!result ||
        entry.getTerminator()->getOperand(*result) != update->getResult(0)) {
      update->emitError("--")
          << getArgument() << ": the result updating '" << getArgName(func, i)
          << "' must be the new param of its update";
      return signalPassFailure();
    }
    auto type = cast<RankedTensorType>(arg.getType());
    params.push_back({i, update, reduce, type.getNumElements()});
    params.back().storedFP8 =
        type.getElementType().isF16() && onlyFeedsFP8Gemms(arg, update);
  }
  assignOwners(params, static_cast<int64_t>(worldSize));

  OpBuilder b(ctx);
  Value one = getOrCreateScalarOne(func);
  auto e4m3 = Float8E4M3FNType::get(ctx);
  auto unit = UnitAttr::get(ctx);
  llvm::BitVector erase(func.getNumArguments());
  // (value, root) pairs broadcast at the end, in param order.
  SmallVector<std::tuple<unsigned, Value, int64_t>> broadcasts;
  auto finalInsertion = [&] { b.setInsertionPoint(entry.getTerminator()); };

  for (ShardedParam &p : params) {
    BlockArgument arg = func.getArgument(p.arg);
    std::string name = getArgName(func, p.arg).str();
    const bool owned = p.owner == rank;

    // 1. The gradient goes to its owner only.
    b.setInsertionPoint(p.gradReduce);
    auto reduce = ReduceOp::create(
        b, p.gradReduce.getLoc(), p.gradReduce.getResult().getType(),
        typeOrNull(p.gradReduce.getResultScaleInv()), ReduceKind::Mean,
        p.gradReduce.getInput(), p.gradReduce.getScaleInv(), p.owner);
    p.gradReduce.getResult().replaceAllUsesWith(reduce.getResult());
    if (Value s = p.gradReduce.getResultScaleInv())
      s.replaceAllUsesWith(reduce.getResultScaleInv());
    p.gradReduce.erase();

    // 2. Optimizer state lives on the owner only.
    for (Value state : optimizerState(p.update)) {
      auto stateArg = dyn_cast<BlockArgument>(state);
      if (!stateArg || stateArg.getOwner() != &entry)
        continue;
      if (owned)
        func.setArgAttr(stateArg.getArgNumber(), kShardedAttr, unit);
      else
        erase.set(stateArg.getArgNumber());
    }

    auto type = cast<RankedTensorType>(arg.getType());
    const bool fp16Weight = type.getElementType().isF16();
    std::optional<unsigned> scaleIdx =
        fp16Weight ? findArgument(func, name + ".scale", kRoleScalingState)
                   : std::nullopt;
    if (fp16Weight && !scaleIdx) {
      emitError(arg.getLoc())
          << "--" << getArgument() << ": FP16 weight '" << name
          << "' has no scale argument '" << name << ".scale'";
      return signalPassFailure();
    }

    if (!p.storedFP8) {
      // An f32 param, or an FP16 weight read by more than FP8 GEMMs:
      // replicated in its O2 precision (with its scale), updated by its
      // owner, broadcast.
      Value value = arg;
      Value scale = fp16Weight ? func.getArgument(*scaleIdx) : Value();
      if (owned) {
        value = p.update->getResult(0);
        if (fp16Weight)
          scale = entry.getTerminator()->getOperand(
              *findUpdatingResult(func, *scaleIdx));
      } else {
        eraseUpdate(func, p.update);
      }
      broadcasts.emplace_back(p.arg, value, p.owner);
      if (fp16Weight) {
        broadcasts.emplace_back(*scaleIdx, scale, p.owner);
        remark::passed(arg.getLoc(),
                       remarkOptions("zero-shard", "zero-fp16-weight"))
            << remark::add("'{0}' stays FP16 on every rank: its value is "
                           "read by more than FP8 GEMMs (a tied weight)",
                           name);
      }
      continue;
    }

    // 3. A GEMM weight: stored E4M3 + scale on every rank. The FP8 GEMMs
    //    read its bytes and scale instead of re-quantizing the FP16 value.
    BlockArgument scaleArg = func.getArgument(*scaleIdx);
    ScaleKind kind = ScaleKind::Pow2;
    uint64_t margin = 0;
    if (auto recipe = func->getAttrOfType<DictionaryAttr>(kRecipeAttr)) {
      if (auto k = recipe.getAs<StringAttr>("scale_kind"))
        kind = k.getValue() == "exact" ? ScaleKind::Exact : ScaleKind::Pow2;
      if (auto m = recipe.getAs<IntegerAttr>("margin"))
        margin = m.getInt();
    }
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      auto dequantize = dyn_cast<DequantizeOp>(user);
      if (!dequantize)
        continue;
      QuantizeOp cast;
      while (ComputeScaleOp jit =
                 findWeightCast(dequantize.getResult(), cast)) {
        kind = jit.getKind();
        margin = jit.getMargin();
        cast.getResult().replaceAllUsesWith(arg);
        jit.getResult().replaceAllUsesWith(scaleArg);
        cast.erase();
      }
    }
    Builder attrs(ctx);
    func.setArgAttr(p.arg, kInitAttr, attrs.getStringAttr(kInitNormal));
    setStateType(func, p.arg, type.clone(e4m3));

    if (!owned) {
      eraseUpdate(func, p.update);
      broadcasts.emplace_back(p.arg, arg, p.owner);
      broadcasts.emplace_back(*scaleIdx, scaleArg, p.owner);
      continue;
    }

    // 4. The owner's FP16 master with its scale takes the update.
    BlockArgument master = addStateArgument(func, type, kRoleMasterParam,
                                            name + ".master", kInitFromParam);
    BlockArgument masterScale =
        addStateArgument(func, getScalarF32Type(ctx), kRoleScalingState,
                         name + ".master.scale", kInitFromParam);
    func.setArgAttr(master.getArgNumber(), kShardedAttr, unit);
    func.setArgAttr(masterScale.getArgNumber(), kShardedAttr, unit);
    erase.resize(func.getNumArguments());
    Value newMaster, newMasterScale;
    if (auto adam = dyn_cast<AdamUpdateOp>(p.update)) {
      adam.getParamMutable().assign(master);
      adam.getParamScaleMutable().assign(masterScale);
      newMaster = adam.getNewParam();
      newMasterScale = adam.getNewParamScale();
    } else {
      auto sgd = cast<SGDUpdateOp>(p.update);
      sgd.getParamMutable().assign(master);
      sgd.getParamScaleMutable().assign(masterScale);
      newMaster = sgd.getNewParam();
      newMasterScale = sgd.getNewParamScale();
    }
    retargetStateResult(func, p.arg, master.getArgNumber());
    retargetStateResult(func, *scaleIdx, masterScale.getArgNumber());
    // Placeholders until the broadcasts are built.
    addStateResult(func, arg, p.arg);
    addStateResult(func, scaleArg, *scaleIdx);

    //    The new FP8 weight: the O2 step's just-in-time cast of the new
    //    master, one step earlier.
    finalInsertion();
    Location loc = p.update->getLoc();
    Value inv = arith::DivFOp::create(b, loc, one, newMasterScale);
    Value real = DequantizeOp::create(b, loc, type.clone(b.getF32Type()),
                                      newMaster, inv);
    Value amax = AmaxOp::create(b, loc, real);
    auto x1 = RankedTensorType::get({1}, b.getF32Type());
    Value history = tensor::ExpandShapeOp::create(
        b, loc, x1, amax, ArrayRef<ReassociationIndices>{});
    Value scale = ComputeScaleOp::create(b, loc, kind, AmaxAlgo::MostRecent,
                                         history, one, e4m3, margin);
    Value fp8 = QuantizeOp::create(b, loc, type.clone(e4m3), real, scale);
    broadcasts.emplace_back(p.arg, fp8, p.owner);
    broadcasts.emplace_back(*scaleIdx, scale, p.owner);
  }

  // 5. Every rank receives every param from its owner, in param order.
  finalInsertion();
  for (auto [argIndex, value, root] : broadcasts) {
    Value received =
        BroadcastOp::create(b, value.getLoc(), value, root).getResult();
    setStateResult(func, argIndex, received);
  }
  erase.resize(func.getNumArguments());
  eraseStateArguments(func, erase);

  Builder attrs(ctx);
  func->setAttr(
      kZeroAttr,
      attrs.getDictionaryAttr(
          {attrs.getNamedAttr("world_size", attrs.getI64IntegerAttr(worldSize)),
           attrs.getNamedAttr("rank", attrs.getI64IntegerAttr(rank))}));
  func->setAttr(kLevelAttr, attrs.getStringAttr("O3"));

  int64_t ownedParams = 0, ownedElements = 0, total = 0;
  for (const ShardedParam &p : params) {
    total += p.numel;
    if (p.owner == rank) {
      ++ownedParams;
      ownedElements += p.numel;
    }
  }
  remark::passed(func.getLoc(), remarkOptions("zero-shard", "zero-partition"))
      << remark::add("rank {0} of {1} owns {2} of {3} params ({4} of {5} "
                     "elements): their FP16 masters and optimizer states",
                     static_cast<int64_t>(rank),
                     static_cast<int64_t>(worldSize), ownedParams,
                     params.size(), ownedElements, total);
}
