//===- MSAMPToRuntime.cpp - msamp ops and GEMMs to runtime calls --*- C++
//-*-===//
//
// The bridge between the tensor-level train step and the runtime ABI
// (docs/RuntimeABI.md). Runs before one-shot bufferization:
//
//   %r = msamp.quantize %x, %s : tensor<AxB xf32> to tensor<AxB xf8E4M3FN>
// becomes
//   %xb = bufferization.to_buffer %x read_only      (then cast to unranked)
//   %rb = memref.alloc() : memref<AxBxf8E4M3FN>
//   func.call @msamp_rt_quantize__0(%xb', %sb', %rb', %c0, %c3)
//   %r = bufferization.to_tensor %rb restrict writable
//
// so that one-shot bufferization sees ordinary buffers and the runtime sees
// one uniform calling convention (pointers to unranked descriptors; the
// typed declarations become the canonical memref<*xi8> ones after buffer
// deallocation, msamp-finalize-runtime-calls). This pass must run right
// before one-shot bufferization: to_buffer is Pure, and CSE would merge a
// later read into an earlier to_buffer of the same tensor. GEMMs in
// high precision go to the runtime too: every GEMM at every level, O0
// included, uses the same optimized path.
//
// The state contract changes here from "results marked msamp.updates" to
// "arguments updated in place": each updated state argument receives its new
// value with bufferization.materialize_in_destination (an optimizer or
// broadcast op that is the last reader of its state writes it directly and
// the materialize is then a self-copy; msamp-check-in-place-states checks
// after bufferization that it stayed so), the loss and then every "metric"
// result (--msamp-grad-stats: grad_norm, nonfinite), in result order, are
// written into trailing 0-d output arguments (roles "loss_output" and
// "metric_output"), and the function returns nothing.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GemmMatcher.h"
#include "MSAMP/TrainStep/GradStats.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_CONVERTMSAMPTORUNTIME
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

class RuntimeCallBuilder {
public:
  RuntimeCallBuilder(ModuleOp module, func::FuncOp step)
      : module(module), step(step) {}

  /// A tensor handed to the runtime for reading.
  Value input(OpBuilder &b, Location loc, Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                     /*read_only=*/true);
    return erase(b, loc, buffer);
  }

  /// A fresh output buffer; `finish` wraps it back into a tensor after the
  /// call.
  Value output(OpBuilder &b, Location loc, Type tensorType, Value &buffer) {
    auto type = cast<RankedTensorType>(tensorType);
    buffer = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
    return erase(b, loc, buffer);
  }

  /// An output written into the buffer of state argument `arg`.
  Value inPlaceOutput(OpBuilder &b, Location loc, BlockArgument arg,
                      Value &buffer) {
    auto type = cast<RankedTensorType>(arg.getType());
    buffer = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), arg,
        /*read_only=*/false);
    return erase(b, loc, buffer);
  }

  Value finish(OpBuilder &b, Location loc, Value buffer, Type tensorType) {
    return bufferization::ToTensorOp::create(
        b, loc, tensorType, buffer, /*restrict=*/true, /*writable=*/true);
  }

  /// The placeholder for an absent scale: a 0-d 1.0 the runtime ignores.
  Value dummy(OpBuilder &b, Location loc) {
    auto type = getScalarF32Type(b.getContext());
    Value one = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(1.0f)));
    return input(b, loc, one);
  }

  Value i32(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value f64(OpBuilder &b, Location loc, double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(), APFloat(v));
  }

  void call(OpBuilder &b, Location loc, RuntimeFn fn, ValueRange args) {
    func::FuncOp decl =
        getOrInsertTypedRuntimeDecl(module, fn, args.getTypes());
    lastCall = func::CallOp::create(b, loc, decl, args);
  }

  /// The call `call` created last.
  func::CallOp lastCall;

private:
  /// Ranked buffer -> unranked buffer of the same element type. The calls
  /// keep typed memrefs until buffer deallocation has run (it must see every
  /// use of a buffer); msamp-finalize-runtime-calls then retypes them to the
  /// declared memref<*xi8>.
  Value erase(OpBuilder &b, Location loc, Value buffer) {
    auto memrefType = cast<MemRefType>(buffer.getType());
    return memref::CastOp::create(
        b, loc,
        UnrankedMemRefType::get(memrefType.getElementType(),
                                memrefType.getMemorySpace()),
        buffer);
  }

  ModuleOp module;
  func::FuncOp step;
};

static int32_t dtype(Value v) {
  return getRuntimeDTypeCode(getElementTypeOrSelf(v.getType()));
}

/// msamp_rt_adam_update's flags (docs/RuntimeABI.md 3.8).
static int32_t adamFlags(AdamUpdateOp op) {
  return (op.getDecoupled() ? MSAMP_RT_ADAM_DECOUPLED : 0) |
         (op.getAdamMode().value_or(0) == 1 ? MSAMP_RT_ADAM_MODE1 : 0);
}

// The dialect's reduction kinds are passed to the runtime as their values.
static_assert(static_cast<int>(ReduceKind::Sum) == MSAMP_RT_REDUCE_SUM &&
                  static_cast<int>(ReduceKind::Max) == MSAMP_RT_REDUCE_MAX &&
                  static_cast<int>(ReduceKind::Mean) == MSAMP_RT_REDUCE_MEAN,
              "msamp ReduceKind must match msamp_runtime.h");

struct ConvertMSAMPToRuntimePass
    : ::mlir::msamp::impl::ConvertMSAMPToRuntimeBase<
          ConvertMSAMPToRuntimePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The state argument `result` will be written back to, if `operand` is
  /// that argument and the op is its last reader (so writing it in place is
  /// invisible to the rest of the step).
  BlockArgument inPlaceTarget(Operation *op, Value operand, Value result);

  /// Moves the current op's in-place output buffers right before `call`,
  /// after every buffer it reads (one of which may be the same argument's
  /// old value: a read after the to_buffer that writes would be a conflict
  /// for one-shot bufferization), and records on the call which operand
  /// must be which argument (kInPlaceArgsAttr, see msamp-check-in-place-
  /// states).
  void placeInPlaceOutputs(func::CallOp call);

  func::FuncOp step;
  llvm::DenseMap<Value, unsigned> stateResultArg; // returned value -> arg
  /// Buffers of state arguments that a runtime call writes in place (the
  /// to_buffer of the argument) with their argument, and the tensors
  /// wrapping them after the call with their buffer.
  llvm::DenseMap<Value, BlockArgument> inPlaceBuffers;
  llvm::DenseMap<Value, Value> inPlaceResults;
  /// The current op's in-place outputs: the call operand and its argument.
  SmallVector<std::pair<Value, BlockArgument>> opInPlaceHandles;
};

/// True when every use of `value` (through view-like ops) is before `op`.
/// `visited` holds the values already checked: the walk follows every
/// tensor result downstream, and in a graph with many paths between two
/// values (residual connections) an unmemoized walk is exponential.
static bool allUsesBefore(Value value, Operation *op,
                          llvm::DenseSet<Value> &visited) {
  if (!visited.insert(value).second)
    return true;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user == op)
      continue;
    Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || !ancestor->isBeforeInBlock(op))
      return false;
    for (Value r : user->getResults())
      if (isa<TensorType>(r.getType()) && !allUsesBefore(r, op, visited))
        return false;
  }
  return true;
}

BlockArgument ConvertMSAMPToRuntimePass::inPlaceTarget(Operation *op,
                                                       Value operand,
                                                       Value result) {
  auto arg = dyn_cast_or_null<BlockArgument>(operand);
  if (!arg || arg.getOwner() != &step.getBody().front())
    return nullptr;
  auto it = stateResultArg.find(result);
  if (it == stateResultArg.end() || it->second != arg.getArgNumber())
    return nullptr;
  llvm::DenseSet<Value> visited;
  if (!allUsesBefore(arg, op, visited))
    return nullptr;
  return arg;
}

void ConvertMSAMPToRuntimePass::placeInPlaceOutputs(func::CallOp call) {
  if (opInPlaceHandles.empty())
    return;
  SmallVector<int64_t> pairs; // operand index, argument number, ...
  for (auto [handle, arg] : opInPlaceHandles) {
    Operation *cast = handle.getDefiningOp();
    Operation *toBuffer = cast->getOperand(0).getDefiningOp();
    toBuffer->moveBefore(call);
    cast->moveBefore(call);
    for (OpOperand &use : call->getOpOperands())
      if (use.get() == handle) {
        pairs.push_back(use.getOperandNumber());
        pairs.push_back(arg.getArgNumber());
      }
  }
  call->setAttr(kInPlaceArgsAttr,
                DenseI64ArrayAttr::get(call.getContext(), pairs));
}

void ConvertMSAMPToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  step = getTrainStepOrError(module, "--convert-msamp-to-runtime");
  if (!step)
    return signalPassFailure();
  MLIRContext *ctx = &getContext();
  RuntimeCallBuilder rt(module, step);
  Block &entry = step.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i)
    if (auto updates = step.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr))
      stateResultArg[ret.getOperand(i)] = updates.getInt();

  SmallVector<Operation *> ops;
  step.walk([&](Operation *op) {
    if (isa<MSAMPDialect>(op->getDialect()) || matchGemm(op))
      ops.push_back(op);
  });

  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    opInPlaceHandles.clear();
    // Results are (buffer, tensor type) pairs wrapped after the call.
    SmallVector<std::pair<Value, Type>> outputs;
    auto out = [&](Type type) {
      Value buffer;
      Value arg = rt.output(b, loc, type, buffer);
      outputs.push_back({buffer, type});
      return arg;
    };
    auto stateOut = [&](Value operand, Value result) {
      if (BlockArgument arg = inPlaceTarget(op, operand, result)) {
        Value buffer;
        Value handle = rt.inPlaceOutput(b, loc, arg, buffer);
        inPlaceBuffers[buffer] = arg;
        opInPlaceHandles.push_back({handle, arg});
        outputs.push_back({buffer, result.getType()});
        ++numInPlace;
        return handle;
      }
      return out(result.getType());
    };
    auto optional = [&](Value v) {
      return v ? rt.input(b, loc, v) : rt.dummy(b, loc);
    };

    if (auto q = dyn_cast<QuantizeOp>(op)) {
      rt.call(b, loc, RuntimeFn::Quantize,
              {rt.input(b, loc, q.getInput()), rt.input(b, loc, q.getScale()),
               out(q.getType()), rt.i32(b, loc, dtype(q.getInput())),
               rt.i32(b, loc, dtype(q.getResult()))});
    } else if (auto d = dyn_cast<DequantizeOp>(op)) {
      rt.call(b, loc, RuntimeFn::Dequantize,
              {rt.input(b, loc, d.getInput()),
               rt.input(b, loc, d.getScaleInv()), out(d.getType()),
               rt.i32(b, loc, dtype(d.getInput())),
               rt.i32(b, loc, dtype(d.getResult()))});
    } else if (auto a = dyn_cast<AmaxOp>(op)) {
      rt.call(b, loc, RuntimeFn::Amax,
              {rt.input(b, loc, a.getInput()), out(a.getType()),
               rt.i32(b, loc, dtype(a.getInput()))});
    } else if (auto c = dyn_cast<ComputeScaleOp>(op)) {
      rt.call(b, loc, RuntimeFn::ComputeScale,
              {rt.input(b, loc, c.getAmaxHistory()),
               rt.input(b, loc, c.getPrevScale()), out(c.getType()),
               rt.i32(b, loc, static_cast<int64_t>(c.getKind())),
               rt.i32(b, loc, static_cast<int64_t>(c.getAlgo())),
               rt.i32(b, loc, getRuntimeDTypeCode(c.getFormat())),
               rt.i32(b, loc, c.getMarginAttr().getValue().getSExtValue())});
    } else if (auto h = dyn_cast<UpdateAmaxHistoryOp>(op)) {
      rt.call(b, loc, RuntimeFn::UpdateAmaxHistory,
              {rt.input(b, loc, h.getAmaxHistory()),
               rt.input(b, loc, h.getAmax()),
               stateOut(h.getAmaxHistory(), h.getResult())});
    } else if (auto g = dyn_cast<GemmOp>(op)) {
      int32_t flags = (g.getTransposeA() ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                      (g.getTransposeB() ? MSAMP_RT_GEMM_TRANSPOSE_B : 0) |
                      (g.getFastAccum() ? MSAMP_RT_GEMM_FAST_ACCUM : 0) |
                      (g.getAmax() ? MSAMP_RT_GEMM_WRITE_AMAX : 0);
      Value result = out(g.getResult().getType());
      Value amax = g.getAmax() ? out(g.getAmax().getType()) : rt.dummy(b, loc);
      rt.call(b, loc, RuntimeFn::Gemm,
              {rt.input(b, loc, g.getA()), rt.input(b, loc, g.getAScaleInv()),
               rt.input(b, loc, g.getB()), rt.input(b, loc, g.getBScaleInv()),
               result, amax, rt.i32(b, loc, dtype(g.getA())),
               rt.i32(b, loc, dtype(g.getB())),
               rt.i32(b, loc, dtype(g.getResult())), rt.i32(b, loc, flags)});
    } else if (isa<AllReduceOp, ReduceOp>(op)) {
      // One operand and result layout; msamp.reduce adds its owner rank.
      auto r = dyn_cast<AllReduceOp>(op);
      auto toOwner = dyn_cast<ReduceOp>(op);
      Value input = r ? r.getInput() : toOwner.getInput();
      Value scaleInv = r ? r.getScaleInv() : toOwner.getScaleInv();
      Value result = op->getResult(0);
      Value resultScale = scaleInv ? op->getResult(1) : Value();
      ReduceKind kind = r ? r.getKind() : toOwner.getKind();
      SmallVector<Value> args = {rt.input(b, loc, input),
                                 optional(scaleInv),
                                 out(result.getType()),
                                 resultScale ? out(resultScale.getType())
                                             : rt.dummy(b, loc),
                                 rt.i32(b, loc, dtype(input)),
                                 rt.i32(b, loc, static_cast<int64_t>(kind)),
                                 rt.i32(b, loc, scaleInv ? 1 : 0)};
      if (toOwner)
        args.push_back(rt.i32(b, loc, static_cast<int64_t>(toOwner.getRoot())));
      rt.call(b, loc, r ? RuntimeFn::AllReduce : RuntimeFn::Reduce, args);
    } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
      // A rank that does not own the tensor receives into its state.
      Value result = stateOut(bc.getInput(), bc.getResult());
      rt.call(b, loc, RuntimeFn::Broadcast,
              {rt.input(b, loc, bc.getInput()), result,
               rt.i32(b, loc, dtype(bc.getInput())),
               rt.i32(b, loc, static_cast<int64_t>(bc.getRoot()))});
    } else if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
      // An FP8 bucket is reduced as codes: a placeholder scale in, and a
      // scratch scale out that nothing reads.
      const bool fp8 = !rs.getInput().getType().getElementType().isF32();
      Value scratch;
      Value result = out(rs.getType());
      rt.call(
          b, loc, RuntimeFn::ReduceScatter,
          {rt.input(b, loc, rs.getInput()), rt.dummy(b, loc), result,
           fp8 ? rt.output(b, loc, getScalarF32Type(b.getContext()), scratch)
               : rt.dummy(b, loc),
           rt.i32(b, loc, dtype(rs.getInput())),
           rt.i32(b, loc, static_cast<int64_t>(rs.getKind())),
           rt.i32(b, loc, fp8 ? 1 : 0)});
    } else if (auto ag = dyn_cast<AllGatherOp>(op)) {
      rt.call(b, loc, RuntimeFn::AllGather,
              {rt.input(b, loc, ag.getInput()), out(ag.getType()),
               rt.i32(b, loc, dtype(ag.getInput()))});
    } else if (auto u = dyn_cast<AdamUpdateOp>(op)) {
      SmallVector<Value> args = {
          rt.input(b, loc, u.getParam()),    optional(u.getParamScale()),
          rt.input(b, loc, u.getGrad()),     optional(u.getGradScaleInv()),
          rt.input(b, loc, u.getExpAvg()),   optional(u.getExpAvgScale()),
          rt.input(b, loc, u.getExpAvgSq()), optional(u.getExpAvgSqScale()),
          rt.input(b, loc, u.getLr()),       rt.input(b, loc, u.getStep())};
      auto scaled = [&](Value operand, Value result, Value scale,
                        Value newScale) {
        args.push_back(stateOut(operand, result));
        args.push_back(newScale ? stateOut(scale, newScale) : rt.dummy(b, loc));
      };
      scaled(u.getParam(), u.getNewParam(), u.getParamScale(),
             u.getNewParamScale());
      scaled(u.getExpAvg(), u.getNewExpAvg(), u.getExpAvgScale(),
             u.getNewExpAvgScale());
      scaled(u.getExpAvgSq(), u.getNewExpAvgSq(), u.getExpAvgSqScale(),
             u.getNewExpAvgSqScale());
      args.append({rt.i32(b, loc, dtype(u.getParam())),
                   rt.i32(b, loc, dtype(u.getGrad())),
                   rt.i32(b, loc, dtype(u.getExpAvg())),
                   rt.i32(b, loc, dtype(u.getExpAvgSq())),
                   rt.f64(b, loc, u.getBeta1().convertToDouble()),
                   rt.f64(b, loc, u.getBeta2().convertToDouble()),
                   rt.f64(b, loc, u.getEps().convertToDouble()),
                   rt.f64(b, loc, u.getWeightDecay().convertToDouble()),
                   rt.i32(b, loc, adamFlags(u))});
      rt.call(b, loc, RuntimeFn::AdamUpdate, args);
    } else if (auto s = dyn_cast<SGDUpdateOp>(op)) {
      SmallVector<Value> args = {
          rt.input(b, loc, s.getParam()),  optional(s.getParamScale()),
          rt.input(b, loc, s.getGrad()),   optional(s.getGradScaleInv()),
          optional(s.getMomentumBuffer()), rt.input(b, loc, s.getLr()),
          rt.input(b, loc, s.getStep())};
      args.push_back(stateOut(s.getParam(), s.getNewParam()));
      args.push_back(s.getNewParamScale()
                         ? stateOut(s.getParamScale(), s.getNewParamScale())
                         : rt.dummy(b, loc));
      args.push_back(
          s.getNewMomentumBuffer()
              ? stateOut(s.getMomentumBuffer(), s.getNewMomentumBuffer())
              : rt.dummy(b, loc));
      int32_t flags =
          (s.getNesterov() ? MSAMP_RT_SGD_NESTEROV : 0) |
          (s.getMomentumBuffer() ? MSAMP_RT_SGD_HAS_MOMENTUM_BUFFER : 0);
      args.append({rt.i32(b, loc, dtype(s.getParam())),
                   rt.i32(b, loc, dtype(s.getGrad())),
                   rt.f64(b, loc, s.getMomentum().convertToDouble()),
                   rt.f64(b, loc, s.getWeightDecay().convertToDouble()),
                   rt.i32(b, loc, flags)});
      rt.call(b, loc, RuntimeFn::SGDUpdate, args);
    } else if (auto c = dyn_cast<CheckIndexOp>(op)) {
      // The location travels as a constant i8 buffer (one global per site).
      StringRef site = c.getSite();
      auto siteType = RankedTensorType::get({static_cast<int64_t>(site.size())},
                                            b.getI8Type());
      Value siteBytes = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              siteType,
              ArrayRef<int8_t>(reinterpret_cast<const int8_t *>(site.data()),
                               site.size())));
      std::optional<int64_t> ignore = c.getIgnoreIndex();
      rt.call(b, loc, RuntimeFn::CheckComputedIndex,
              {rt.input(b, loc, c.getIndices()), rt.input(b, loc, siteBytes),
               rt.i32(b, loc, dtype(c.getIndices())),
               arith::ConstantIntOp::create(b, loc, c.getUpper(), 64),
               arith::ConstantIntOp::create(b, loc, ignore.value_or(0), 64),
               rt.i32(b, loc, ignore ? 1 : 0)});
    } else if (std::optional<GemmMatch> m = matchGemm(op)) {
      // A GEMM left in high precision: the runtime's BLAS path, unless it
      // accumulates into a non-zero init (then it stays a linalg loop nest).
      if (!m->zeroInit)
        continue;
      int32_t flags = (m->transposeLhs ? MSAMP_RT_GEMM_TRANSPOSE_A : 0) |
                      (m->transposeRhs ? MSAMP_RT_GEMM_TRANSPOSE_B : 0);
      Value result = out(op->getResult(0).getType());
      rt.call(b, loc, RuntimeFn::Gemm,
              {rt.input(b, loc, m->lhs), rt.dummy(b, loc),
               rt.input(b, loc, m->rhs), rt.dummy(b, loc), result,
               rt.dummy(b, loc), rt.i32(b, loc, dtype(m->lhs)),
               rt.i32(b, loc, dtype(m->rhs)),
               rt.i32(b, loc, dtype(op->getResult(0))), rt.i32(b, loc, flags)});
    } else {
      op->emitError("no runtime lowering for this op");
      return signalPassFailure();
    }
    ++numCalls;
    placeInPlaceOutputs(rt.lastCall);

    // Wrap the outputs back into tensors and replace the op's results, in
    // order (outputs were created in result order).
    unsigned resultIndex = 0;
    for (auto [buffer, type] : outputs) {
      while (resultIndex < op->getNumResults() &&
             op->getResult(resultIndex).getType() != type)
        ++resultIndex;
      Value tensor = rt.finish(b, loc, buffer, type);
      if (inPlaceBuffers.count(buffer))
        inPlaceResults[tensor] = buffer;
      op->getResult(resultIndex++).replaceAllUsesWith(tensor);
    }
    op->erase();
  }

  // Write every updated state argument in place, the loss and the metrics
  // into trailing output arguments, and return nothing.
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  Value loss;
  SmallVector<std::pair<Value, StringRef>> metrics; // result order
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    Value value = ret.getOperand(i);
    auto updates = step.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr);
    if (!updates) {
      StringRef role = getResultRole(step, i);
      if (role == kRoleLoss && !loss) {
        loss = value;
      } else if (role == kRoleMetric) {
        metrics.push_back({value, getResultName(step, i)});
      } else {
        // The runtime would have nowhere to find it.
        step.emitError("result #")
            << i << " (role \"" << role
            << "\") is neither the loss, nor a metric, nor a state update; "
               "the runtime ABI cannot return it";
        return signalPassFailure();
      }
      continue;
    }
    BlockArgument arg = step.getArgument(updates.getInt());
    if (value == arg)
      continue;
    // A value a runtime call already wrote into the argument's buffer is
    // materialized into that same buffer value: a fresh to_buffer of the
    // argument here would read its value from before the call, and one-shot
    // bufferization would then copy every such argument before its call.
    // The materialize still reads `value` at the end, so no later op may
    // reuse its buffer; should bufferization nevertheless write the call's
    // output out of place, msamp-check-in-place-states copies it back.
    Value dest = inPlaceResults.lookup(value);
    if (dest && inPlaceBuffers.lookup(dest) != arg)
      dest = nullptr;
    if (!dest)
      rt.inPlaceOutput(b, loc, arg, dest);
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, value, dest, /*restrict=*/true,
        /*writable=*/true);
  }
  if (!loss) {
    step.emitError("the train step has no loss result");
    return signalPassFailure();
  }
  // The runtime's descriptor table: the N arguments of the manifest, the
  // loss, then the metrics in manifest "outputs" order (= result order).
  auto writeOutput = [&](Value value, StringRef role, StringRef name) {
    BlockArgument out = addStateArgument(step, value.getType(), role, name, "");
    Value dest;
    rt.inPlaceOutput(b, loc, out, dest);
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, value, dest, /*restrict=*/true,
        /*writable=*/true);
  };
  writeOutput(loss, "loss_output", "loss");
  for (auto [value, name] : metrics)
    writeOutput(value, "metric_output", name);
  func::ReturnOp::create(b, loc, ValueRange{});
  ret.erase();
  llvm::BitVector allResults(step.getNumResults(), true);
  (void)step.eraseResults(allResults);
  // The C wrapper passes every memref as a pointer to its descriptor, which
  // the packed entry point (msamp-emit-entry-point) forwards generically.
  step->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
}

} // namespace
