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
// ZeRO stage 3 (zero-stage=3) shards the params themselves: each param
// argument is the rank's flat piece, the end-of-step broadcast/all-gather
// goes away, and the step all-gathers each flat group just before its first
// reader in forward and again in backward (ZeROGather.h), into temporaries
// that die after their phase's last reader.
//
// Since the owner's FP8 weight is the cast the O2 step applies to its FP16
// weight before each GEMM, and msamp.reduce combines in the same rank order
// as msamp.all_reduce, an O3 step computes the same losses as the O2 step
// of the same group, bit for bit (test/Tools/msamp-run/DataParallel).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/FlatShards.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "ZeROGather.h"
#include "ZeROShardIR.h"

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
using namespace mlir::msamp::zero_shard;

namespace {
/// One param of the O2 step and what the rewrite needs to know about it.
struct ShardedParam {
  unsigned arg;           // the param's argument
  Operation *update;      // its adam_update / sgd_update
  AllReduceOp gradReduce; // the all-reduce producing the update's gradient
  int64_t numel;
  /// Stored as E4M3 on every rank (an FP16 weight read only by FP8 GEMMs);
  /// otherwise replicated in its O2 precision.
  bool storedFP8 = false;
  /// Its flat group and offset there.
  unsigned group = 0;
  int64_t offset = 0;
  /// This rank's piece [lo, hi) of the flattened param (lo >= hi: none).
  int64_t lo = 0, hi = 0;
  /// The gradient piece the update reads, with its inverse scale.
  Value grad, gradScaleInv;
  bool held() const { return lo < hi; }
  int64_t length() const { return hi - lo; }
};

/// A flat group: params of one gradient and one stored element type.
struct FlatGroup {
  Type gradType, storedType;
  SmallVector<unsigned> members; // indices into the params
  FlatShardLayout layout;
};

/// A new low-precision tensor of the update, quantized with the scale of
/// its whole-tensor amax (MAX-combined over the ranks).
struct ScaledOutput {
  Value value;       // this rank's f32 piece, null if it holds none
  unsigned scaleArg; // the replicated scale it updates
  Type format;
  Value newScale;
};

struct MSAMPZeROShardPass
    : ::mlir::msamp::impl::MSAMPZeROShardBase<MSAMPZeROShardPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void MSAMPZeROShardPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (worldSize < 1 || rank < 0 || rank >= worldSize) {
    module.emitError() << "--" << getArgument() << ": rank "
                       << static_cast<int64_t>(rank)
                       << " is not a rank of world-size "
                       << static_cast<int64_t>(worldSize);
    return signalPassFailure();
  }
  if (zeroStage < 1 || zeroStage > 3) {
    module.emitError() << "--" << getArgument() << ": zero-stage "
                       << static_cast<int64_t>(zeroStage)
                       << " is not a ZeRO stage; expected 1 (optimizer states "
                          "and masters sharded), 2 (gradients too) or 3 "
                          "(weights too)";
    return signalPassFailure();
  }
  if (!(bucketMb > 0)) {
    module.emitError() << "--" << getArgument() << ": bucket-mb "
                       << static_cast<double>(bucketMb)
                       << " is not a positive number of MiB";
    return signalPassFailure();
  }
  func::FuncOp func = getTrainStepOrError(module, getArgument());
  if (!func)
    return signalPassFailure();
  if (func->hasAttr(kZeroAttr))
    return; // already one rank's step
  MLIRContext *ctx = &getContext();
  Block &entry = func.getBody().front();
  const int64_t world = worldSize, me = rank;

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
    if (!reduce || reduce.getKind() != ReduceKind::Mean ||
        !reduce.getResult().hasOneUse() ||
        (reduce.getResultScaleInv() &&
         !reduce.getResultScaleInv().hasOneUse())) {
      update->emitError("--")
          << getArgument() << ": the gradient of param '" << getArgName(func, i)
          << "' is not a msamp.all_reduce mean read by its update alone; O3 "
             "reduce-scatters it";
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
    for (Value state : optimizerState(update)) {
      auto stateArg = dyn_cast<BlockArgument>(state);
      if (!stateArg || stateArg.getOwner() != &entry ||
          !findUpdatingResult(func, stateArg.getArgNumber())) {
        update->emitError("--")
            << getArgument() << ": the optimizer state of param '"
            << getArgName(func, i)
            << "' is not a state argument with an updating result";
        return signalPassFailure();
      }
    }
    auto type = cast<RankedTensorType>(arg.getType());
    params.push_back({i, update, reduce, type.getNumElements()});
    params.back().storedFP8 =
        type.getElementType().isF16() && onlyFeedsFP8Gemms(arg, update);
    if (type.getElementType().isF16() && !params.back().storedFP8)
      remark::passed(arg.getLoc(),
                     remarkOptions("zero-shard", "zero-fp16-weight"))
          << remark::add("'{0}' stays FP16 on every rank: its value is read "
                         "by more than FP8 GEMMs (a tied weight)",
                         getArgName(func, i));
    if (type.getElementType().isF16() &&
        !findArgument(func, getArgName(func, i).str() + ".scale",
                      kRoleScalingState)) {
      emitError(arg.getLoc())
          << "--" << getArgument() << ": FP16 weight '" << getArgName(func, i)
          << "' has no scale argument '" << getArgName(func, i) << ".scale'";
      return signalPassFailure();
    }
  }

  // Flat groups by (gradient type, stored type), in param order, each
  // closed when the next param's gradient would take it past bucket-mb.
  auto e4m3 = Float8E4M3FNType::get(ctx);
  const double bucketBytes = bucketMb * 1024.0 * 1024.0;
  SmallVector<FlatGroup> groups;
  SmallVector<double> groupBytes;
  for (auto [index, p] : llvm::enumerate(params)) {
    Type gradType = cast<RankedTensorType>(p.gradReduce.getInput().getType())
                        .getElementType();
    Type storedType =
        p.storedFP8 ? Type(e4m3)
                    : cast<RankedTensorType>(func.getArgument(p.arg).getType())
                          .getElementType();
    const double bytes =
        static_cast<double>(p.numel) * (gradType.getIntOrFloatBitWidth() / 8);
    // The open bucket of this kind is the last one of it.
    auto open = llvm::find_if(llvm::reverse(groups), [&](const FlatGroup &g) {
      return g.gradType == gradType && g.storedType == storedType;
    });
    unsigned g =
        open == groups.rend() ? groups.size() : groups.rend() - open - 1;
    if (g == groups.size() || groupBytes[g] + bytes > bucketBytes) {
      g = groups.size();
      groups.push_back({gradType, storedType, {}, {}});
      groupBytes.push_back(0);
    }
    p.group = g;
    groups[g].members.push_back(index);
    groupBytes[g] += bytes;
  }
  for (FlatGroup &g : groups) {
    SmallVector<int64_t> sizes;
    for (unsigned m : g.members)
      sizes.push_back(params[m].numel);
    g.layout = computeFlatShardLayout(sizes, world);
    for (auto [k, m] : llvm::enumerate(g.members)) {
      ShardedParam &p = params[m];
      p.offset = g.layout.offsets[k];
      auto [a, e] = g.layout.piece(p.offset, p.numel, me);
      p.lo = std::max<int64_t>(a - p.offset, 0);
      p.hi = std::max<int64_t>(e - p.offset, p.lo);
    }
  }

  OpBuilder b(ctx);
  Value one = getOrCreateScalarOne(func);
  auto unit = UnitAttr::get(ctx);
  Type f32 = b.getF32Type();
  auto scalar = getScalarF32Type(ctx);
  Location loc = func.getLoc();
  auto worldConstant = [&]() -> Value {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(scalar,
                               b.getF32FloatAttr(static_cast<float>(world))));
  };

  // 1. Gradients. Stages 2 and 3: each group's payloads, flattened into one
  //    buffer of `world` padded shards, reduce-scattered where the last of
  //    them was all-reduced; FP8 codes are summed and each tensor's inverse
  //    scale divided by the world size (what msamp.all_reduce mean does).
  //    Stage 1: the all-reduce stays, and the update reads its slice.
  for (FlatGroup &g : groups) {
    const FlatShardLayout &layout = g.layout;
    if (zeroStage == 1) {
      for (unsigned m : g.members) {
        ShardedParam &p = params[m];
        p.gradReduce->setAttr("msamp.zero_grad", unit);
        if (!p.held())
          continue;
        b.setInsertionPointAfter(p.gradReduce);
        p.grad =
            slice(b, p.gradReduce.getLoc(),
                  flatten(b, p.gradReduce.getLoc(), p.gradReduce.getResult()),
                  p.lo, p.length());
        p.gradScaleInv = p.gradReduce.getResultScaleInv();
      }
      continue;
    }
    Operation *last = params[g.members.front()].gradReduce;
    for (unsigned m : g.members)
      if (last->isBeforeInBlock(params[m].gradReduce))
        last = params[m].gradReduce;
    b.setInsertionPoint(last);
    Location at = last->getLoc();
    Value buffer = emptyFlat(b, at, layout.shard * world, g.gradType);
    for (unsigned m : g.members) {
      ShardedParam &p = params[m];
      Value flat = flatten(b, at, p.gradReduce.getInput());
      for (int64_t r = 0; r < world; ++r) {
        auto [a, e] = layout.piece(p.offset, p.numel, r);
        if (a >= e)
          continue;
        buffer = insert(b, at, slice(b, at, flat, a - p.offset, e - a), buffer,
                        r * layout.shard + a - layout.bounds[r]);
      }
    }
    const bool fp8 = !g.gradType.isF32();
    auto shardType = RankedTensorType::get({layout.shard}, g.gradType);
    Value mine = ReduceScatterOp::create(
        b, at, shardType, fp8 ? ReduceKind::Sum : ReduceKind::Mean, buffer,
        world);
    for (unsigned m : g.members) {
      ShardedParam &p = params[m];
      if (!p.held())
        continue;
      p.grad =
          slice(b, at, mine, p.offset + p.lo - layout.bounds[me], p.length());
      if (fp8)
        p.gradScaleInv = arith::DivFOp::create(
            b, at, p.gradReduce.getScaleInv(), worldConstant());
    }
  }

  // 2. The FP8 GEMM weights: stored E4M3 + scale on every rank; the GEMMs
  //    read them instead of re-quantizing the FP16 value just in time.
  struct WeightCast {
    ScaleKind kind = ScaleKind::Pow2;
    uint64_t margin = 0;
  };
  DenseMap<unsigned, WeightCast> casts;
  for (ShardedParam &p : params) {
    if (!p.storedFP8)
      continue;
    BlockArgument arg = func.getArgument(p.arg);
    std::string name = getArgName(func, p.arg).str();
    BlockArgument scaleArg = func.getArgument(
        *findArgument(func, name + ".scale", kRoleScalingState));
    WeightCast &wc = casts[p.arg];
    if (auto recipe = func->getAttrOfType<DictionaryAttr>(kRecipeAttr)) {
      if (auto k = recipe.getAs<StringAttr>("scale_kind"))
        wc.kind = k.getValue() == "exact" ? ScaleKind::Exact : ScaleKind::Pow2;
      if (auto m = recipe.getAs<IntegerAttr>("margin"))
        wc.margin = m.getInt();
    }
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      auto dequantize = dyn_cast<DequantizeOp>(user);
      if (!dequantize)
        continue;
      QuantizeOp cast;
      while (ComputeScaleOp jit =
                 findWeightCast(dequantize.getResult(), cast)) {
        wc.kind = jit.getKind();
        wc.margin = jit.getMargin();
        cast.getResult().replaceAllUsesWith(arg);
        jit.getResult().replaceAllUsesWith(scaleArg);
        cast.erase();
      }
    }
    Builder attrs(ctx);
    func.setArgAttr(p.arg, kInitAttr, attrs.getStringAttr(kInitNormal));
  }

  // Stage 3: the ops of the step that read a param (its forward and
  // backward readers; the updates are replaced below) read it all-gathered
  // (phase 8), and each param argument becomes this rank's 1-D piece of it.
  const bool shardWeights = zeroStage == 3;
  SmallPtrSet<Operation *, 32> readers;
  SmallVector<RankedTensorType> wholeTypes(params.size());
  if (shardWeights)
    for (ShardedParam &p : params)
      for (Operation *user : func.getArgument(p.arg).getUsers())
        if (user != p.update)
          readers.insert(entry.findAncestorOpInBlock(*user));

  // 3. Each rank updates its pieces in f32 (the optimizer's own arithmetic
  //    on decoded values), at the end of the step.
  b.setInsertionPoint(entry.getTerminator());
  llvm::BitVector erase(func.getNumArguments());
  SmallVector<ScaledOutput> scaled;
  // Per param: the new f32 piece of the param and the state pieces to store
  // (piece argument, index into `scaled` or -1 for an f32 piece, value).
  struct NewState {
    Value param;
    unsigned paramScaled = ~0u;
    SmallVector<std::tuple<unsigned, unsigned, Value>> pieces;
  };
  SmallVector<NewState> updated(params.size());
  for (auto [index, p] : llvm::enumerate(params)) {
    BlockArgument arg = func.getArgument(p.arg);
    std::string name = getArgName(func, p.arg).str();
    auto type = cast<RankedTensorType>(arg.getType());
    NewState &out = updated[index];
    const bool f16 = type.getElementType().isF16();
    std::optional<unsigned> scaleIdx =
        f16 ? findArgument(func, name + ".scale", kRoleScalingState)
            : std::nullopt;
    if (shardWeights) {
      wholeTypes[index] = p.storedFP8 ? type.clone(e4m3) : type;
      setStateType(func, p.arg,
                   RankedTensorType::get({p.length()},
                                         wholeTypes[index].getElementType()));
      Builder attrs(ctx);
      func.setArgAttr(p.arg, kShardedAttr, unit);
      func.setArgAttr(p.arg, kShardOffsetAttr,
                      attrs.getI64IntegerAttr(p.held() ? p.lo : 0));
      func.setArgAttr(p.arg, kParamShapeAttr,
                      attrs.getDenseI64ArrayAttr(type.getShape()));
    }

    // The param's f32 piece: from this rank's FP16 master piece (GEMM
    // weights; the master's scale is replicated) or from the replicated
    // value (tied FP16 weights, f32 params).
    Value w;
    unsigned paramScaleArg = 0;
    if (p.storedFP8) {
      BlockArgument masterScale =
          addStateArgument(func, scalar, kRoleScalingState,
                           name + ".master.scale", kInitFromParam);
      addStateResult(func, masterScale, masterScale.getArgNumber());
      paramScaleArg = masterScale.getArgNumber();
      if (p.held()) {
        BlockArgument master = addStateArgument(
            func, RankedTensorType::get({p.length()}, type.getElementType()),
            kRoleMasterParam, name + ".master", kInitFromParam);
        func.setArgAttr(master.getArgNumber(), kShardedAttr, unit);
        func.setArgAttr(master.getArgNumber(), kShardOffsetAttr,
                        b.getI64IntegerAttr(p.lo));
        addStateResult(func, master, master.getArgNumber());
        w = decode(b, loc, master, masterScale, one);
        out.pieces.push_back({master.getArgNumber(), 0, Value()});
      }
      if (!shardWeights)
        setStateType(func, p.arg, type.clone(e4m3));
    } else if (p.held()) {
      Value piece = shardWeights
                        ? Value(arg)
                        : slice(b, loc, flatten(b, loc, arg), p.lo, p.length());
      w = decode(b, loc, piece, f16 ? func.getArgument(*scaleIdx) : Value(),
                 one);
    }
    if (f16 && !p.storedFP8)
      paramScaleArg = *scaleIdx;

    // The optimizer states: pieces on this rank (sharded), none elsewhere;
    // their scales stay on every rank.
    SmallVector<std::pair<Value, Value>> states; // (state, its scale)
    if (auto adam = dyn_cast<AdamUpdateOp>(p.update))
      states = {{adam.getExpAvg(), adam.getExpAvgScale()},
                {adam.getExpAvgSq(), adam.getExpAvgSqScale()}};
    else if (Value buf = cast<SGDUpdateOp>(p.update).getMomentumBuffer())
      states = {{buf, Value()}};
    SmallVector<Value> decoded;
    SmallVector<std::pair<unsigned, Value>> statePieces; // (piece arg, scale)
    for (auto [state, scale] : states) {
      unsigned old = cast<BlockArgument>(state).getArgNumber();
      erase.resize(func.getNumArguments());
      erase.set(old);
      if (!p.held())
        continue;
      BlockArgument piece = addPiece(func, old, p.length(), p.lo);
      addStateResult(func, piece, piece.getArgNumber());
      statePieces.push_back({piece.getArgNumber(), scale});
      decoded.push_back(decode(b, loc, piece, scale, one));
    }

    // The update of the piece, all in f32.
    SmallVector<Value> results; // new param, then each state
    if (p.held()) {
      auto f32Piece = RankedTensorType::get({p.length()}, f32);
      Location at = p.update->getLoc();
      if (auto adam = dyn_cast<AdamUpdateOp>(p.update)) {
        auto op = AdamUpdateOp::create(
            b, at, f32Piece, Type(), f32Piece, Type(), f32Piece, Type(), w,
            Value(), p.grad, p.gradScaleInv, decoded[0], Value(), decoded[1],
            Value(), adam.getLr(), adam.getStep(), adam.getBeta1Attr(),
            adam.getBeta2Attr(), adam.getEpsAttr(), adam.getWeightDecayAttr(),
            adam.getDecoupledAttr(), adam.getAdamModeAttr());
        results = {op.getNewParam(), op.getNewExpAvg(), op.getNewExpAvgSq()};
      } else {
        auto sgd = cast<SGDUpdateOp>(p.update);
        const bool momentum = !decoded.empty();
        auto op = SGDUpdateOp::create(
            b, at, f32Piece, Type(), momentum ? Type(f32Piece) : Type(), w,
            Value(), p.grad, p.gradScaleInv, momentum ? decoded[0] : Value(),
            sgd.getLr(), sgd.getStep(), sgd.getMomentumAttr(),
            sgd.getWeightDecayAttr(), sgd.getNesterovAttr());
        results = {op.getNewParam()};
        if (momentum)
          results.push_back(op.getNewMomentumBuffer());
      }
    }
    out.param = p.held() ? results[0] : Value();
    if (p.storedFP8 || f16) {
      out.paramScaled = scaled.size();
      scaled.push_back(
          {out.param, paramScaleArg,
           p.storedFP8 ? Type(b.getF16Type()) : type.getElementType(),
           Value()});
      if (p.held() && p.storedFP8)
        std::get<1>(out.pieces.front()) = out.paramScaled;
    }
    for (auto [k, state] : llvm::enumerate(states)) {
      Value value = p.held() ? results[k + 1] : Value();
      unsigned which = ~0u;
      if (Value scale = state.second) {
        which = scaled.size();
        scaled.push_back(
            {value, cast<BlockArgument>(scale).getArgNumber(),
             cast<RankedTensorType>(state.first.getType()).getElementType(),
             Value()});
      }
      if (p.held())
        out.pieces.push_back({statePieces[k].first, which, value});
    }
  }

  // 4. One max all-reduce of every new tensor's piece amax (0 where a rank
  //    holds none of it); every rank computes every new scale, exactly the
  //    just-in-time power-of-two scale the O2 update computes from the
  //    whole tensor.
  auto combineAmaxes = [&](ArrayRef<Value> pieces) {
    SmallVector<Value> amaxes;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    for (Value v : pieces)
      amaxes.push_back(v ? tensor::ExtractOp::create(
                               b, loc, AmaxOp::create(b, loc, v), ValueRange{})
                               .getResult()
                         : zero);
    Value all = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({(int64_t)amaxes.size()}, f32), amaxes);
    all = AllReduceOp::create(b, loc, ReduceKind::Max, all).getResult();
    SmallVector<Value> histories;
    auto x1 = RankedTensorType::get({1}, f32);
    for (int64_t i = 0, e = amaxes.size(); i < e; ++i)
      histories.push_back(tensor::ExtractSliceOp::create(
          b, loc, x1, all, ValueRange{}, ValueRange{}, ValueRange{},
          b.getDenseI64ArrayAttr({i}), b.getDenseI64ArrayAttr({1}),
          b.getDenseI64ArrayAttr({1})));
    return histories;
  };
  if (!scaled.empty()) {
    SmallVector<Value> pieces;
    for (ScaledOutput &s : scaled)
      pieces.push_back(s.value);
    SmallVector<Value> histories = combineAmaxes(pieces);
    for (auto [s, history] : llvm::zip(scaled, histories)) {
      s.newScale = ComputeScaleOp::create(
          b, loc, ScaleKind::Pow2, AmaxAlgo::MostRecent, history,
          func.getArgument(s.scaleArg), s.format, 0);
      setStateResult(func, s.scaleArg, s.newScale);
    }
  }
  // The stored pieces, quantized with their group-wide scales.
  SmallVector<Value> storedParam(params.size());
  for (auto [index, p] : llvm::enumerate(params)) {
    NewState &out = updated[index];
    if (!p.held())
      continue;
    for (auto &[pieceArg, which, value] : out.pieces) {
      Value v = value ? value : out.param;
      Value q = v;
      if (which != ~0u) {
        auto type = cast<RankedTensorType>(v.getType());
        q = QuantizeOp::create(b, loc, type.clone(scaled[which].format), v,
                               scaled[which].newScale);
      }
      setStateResult(func, pieceArg, q);
      if (!value)
        storedParam[index] = q; // the new master piece
    }
    if (!p.storedFP8) {
      storedParam[index] = out.param;
      if (out.paramScaled != ~0u)
        storedParam[index] =
            QuantizeOp::create(b, loc,
                               cast<RankedTensorType>(out.param.getType())
                                   .clone(scaled[out.paramScaled].format),
                               out.param, scaled[out.paramScaled].newScale);
    }
  }

  // 5. The new FP8 weights: the O2 step's just-in-time E4M3 cast of the new
  //    master (one step earlier), its amax MAX-combined likewise.
  SmallVector<unsigned> fp8Params;
  SmallVector<Value> reals;
  for (auto [index, p] : llvm::enumerate(params)) {
    if (!p.storedFP8)
      continue;
    fp8Params.push_back(index);
    Value real;
    if (p.held())
      real = decode(b, loc, storedParam[index],
                    scaled[updated[index].paramScaled].newScale, one);
    reals.push_back(real);
  }
  if (!fp8Params.empty()) {
    SmallVector<Value> histories = combineAmaxes(reals);
    for (auto [k, index] : llvm::enumerate(fp8Params)) {
      ShardedParam &p = params[index];
      const WeightCast &wc = casts[p.arg];
      Value scale =
          ComputeScaleOp::create(b, loc, wc.kind, AmaxAlgo::MostRecent,
                                 histories[k], one, e4m3, wc.margin);
      std::string name = getArgName(func, p.arg).str();
      setStateResult(
          func, *findArgument(func, name + ".scale", kRoleScalingState), scale);
      if (p.held())
        storedParam[index] = QuantizeOp::create(
            b, loc, RankedTensorType::get({p.length()}, e4m3), reals[k], scale);
    }
  }

  // 6. Stages 1-2: every rank gathers every group's new stored values.
  //    Stage 3: each rank keeps its pieces (a rank holding none of a param
  //    keeps its empty piece).
  auto membersOf = [&](const FlatGroup &g, ArrayRef<Value> pieces) {
    SmallVector<GatherMember> members;
    for (unsigned m : g.members) {
      const ShardedParam &p = params[m];
      members.push_back(
          {p.offset, p.lo, p.held() ? pieces[m] : Value(),
           shardWeights
               ? wholeTypes[m]
               : cast<RankedTensorType>(func.getArgument(p.arg).getType())});
    }
    return members;
  };
  for (FlatGroup &g : groups) {
    if (shardWeights) {
      for (unsigned m : g.members)
        setStateResult(func, params[m].arg,
                       params[m].held() ? storedParam[m]
                                        : func.getArgument(params[m].arg));
      continue;
    }
    SmallVector<Value> whole = gatherGroup(b, loc, g.layout, g.storedType,
                                           membersOf(g, storedParam), me);
    for (auto [k, m] : llvm::enumerate(g.members))
      setStateResult(func, params[m].arg, whole[k]);
  }

  // 7. The O2 updates and gradient all-reduces are gone.
  for (ShardedParam &p : params) {
    eraseUpdate(func, p.update);
    if (zeroStage >= 2)
      p.gradReduce.erase();
  }

  // 8. Stage 3: each group's weights all-gathered before their first
  //    reader of each phase; the loss separates forward from backward.
  unsigned weightGathers = 0;
  if (shardWeights) {
    Operation *loss = nullptr;
    for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
      if (getResultRole(func, r) == kRoleLoss)
        if (Operation *def =
                entry.getTerminator()->getOperand(r).getDefiningOp())
          loss = entry.findAncestorOpInBlock(*def);
    SmallVector<Value> pieces;
    for (ShardedParam &p : params)
      pieces.push_back(func.getArgument(p.arg));
    for (FlatGroup &g : groups) {
      SmallVector<unsigned> args;
      for (unsigned m : g.members)
        args.push_back(params[m].arg);
      weightGathers += gatherBeforeUse(func, g.layout, g.storedType, args,
                                       membersOf(g, pieces), readers, loss, me);
    }
  }
  erase.resize(func.getNumArguments());
  eraseStateArguments(func, erase);

  Builder attrs(ctx);
  func->setAttr(
      kZeroAttr,
      attrs.getDictionaryAttr(
          {attrs.getNamedAttr("world_size", attrs.getI64IntegerAttr(worldSize)),
           attrs.getNamedAttr("rank", attrs.getI64IntegerAttr(rank)),
           attrs.getNamedAttr("stage", attrs.getI64IntegerAttr(zeroStage))}));
  func->setAttr(kLevelAttr,
                attrs.getStringAttr(stringifyEnum(TrainStepLevel::O3)));

  int64_t ownedElements = 0, total = 0;
  for (const ShardedParam &p : params) {
    total += p.numel;
    ownedElements += p.length();
  }
  remark::passed(func.getLoc(), remarkOptions("zero-shard", "zero-partition"))
      << remark::add("rank {0} of {1} owns {2} of {3} param elements in {4} "
                     "flat groups: its pieces of the FP16 masters and "
                     "optimizer states{6} (ZeRO stage {5})",
                     static_cast<int64_t>(rank),
                     static_cast<int64_t>(worldSize), ownedElements, total,
                     groups.size(), static_cast<int64_t>(zeroStage),
                     shardWeights ? ", and of the weights, all-gathered " +
                                        std::to_string(weightGathers) +
                                        " times per step before their use"
                                  : std::string());
}
