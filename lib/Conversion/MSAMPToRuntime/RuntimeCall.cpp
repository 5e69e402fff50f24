//===- RuntimeCall.cpp - one op becomes one runtime call --------*- C++ -*-===//

#include "RuntimeCall.h"

#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::msamp;

/// Ranked buffer -> unranked buffer of the same element type. The calls
/// keep typed memrefs until buffer deallocation has run (it must see every
/// use of a buffer); msamp-finalize-runtime-calls then retypes them to the
/// declared memref<*xi8>.
static Value eraseRank(OpBuilder &b, Location loc, Value buffer) {
  auto memrefType = cast<MemRefType>(buffer.getType());
  return memref::CastOp::create(
      b, loc,
      UnrankedMemRefType::get(memrefType.getElementType(),
                              memrefType.getMemorySpace()),
      buffer);
}

Value mlir::msamp::createStateBuffer(OpBuilder &b, Location loc,
                                     BlockArgument arg, Value &buffer) {
  auto type = cast<RankedTensorType>(arg.getType());
  buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), arg,
      /*read_only=*/false);
  return eraseRank(b, loc, buffer);
}

RuntimeCall::RuntimeCall(MSAMPToRuntimeState &state, PatternRewriter &rewriter,
                         Operation *op)
    : state(state), rewriter(rewriter), op(op), loc(op->getLoc()) {
  rewriter.setInsertionPoint(op);
}

Value RuntimeCall::erase(Value buffer) {
  return eraseRank(rewriter, loc, buffer);
}

Value RuntimeCall::input(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value buffer = bufferization::ToBufferOp::create(rewriter, loc, memrefType,
                                                   tensor, /*read_only=*/true);
  return erase(buffer);
}

Value RuntimeCall::optional(Value tensor) {
  return tensor ? input(tensor) : dummy();
}

Value RuntimeCall::dummy() {
  auto type = getScalarF32Type(rewriter.getContext());
  Value one = arith::ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(type, rewriter.getF32FloatAttr(1.0f)));
  return input(one);
}

Value RuntimeCall::output(Type tensorType) { return output(op, tensorType); }

Value RuntimeCall::output(Operation *owner, Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  outputs.push_back({buffer, tensorType, /*inPlace=*/false, owner});
  return erase(buffer);
}

Value RuntimeCall::outputFor(Value replaced) {
  auto type = cast<RankedTensorType>(replaced.getType());
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  outputs.push_back({buffer, type, /*inPlace=*/false, op, replaced});
  return erase(buffer);
}

Value RuntimeCall::scratch(Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  return erase(memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType())));
}

Value RuntimeCall::stateOutput(Value operand, Value result) {
  return stateOutput(op, operand, result);
}

Value RuntimeCall::stateOutput(Operation *owner, Value operand, Value result,
                               ArrayRef<Operation *> sameCall) {
  BlockArgument arg = state.getInPlaceTarget(owner, operand, result, sameCall);
  if (!arg) {
    Value handle = output(result.getType());
    outputs.back().owner = owner;
    return handle;
  }
  Value buffer;
  Value handle = createStateBuffer(rewriter, loc, arg, buffer);
  state.addInPlaceBuffer(buffer, arg);
  inPlaceHandles.push_back({handle, arg});
  outputs.push_back({buffer, result.getType(), /*inPlace=*/true, owner});
  ++state.numInPlace;
  return handle;
}

Value RuntimeCall::i32(int64_t value) {
  return arith::ConstantIntOp::create(rewriter, loc, value, 32);
}

Value RuntimeCall::i64(int64_t value) {
  return arith::ConstantIntOp::create(rewriter, loc, value, 64);
}

Value RuntimeCall::f64(double value) {
  return arith::ConstantFloatOp::create(rewriter, loc, rewriter.getF64Type(),
                                        APFloat(value));
}

int32_t RuntimeCall::dtype(Value value) {
  return getRuntimeDTypeCode(getElementTypeOrSelf(value.getType()));
}

void RuntimeCall::replaceOp(RuntimeFn fn, ValueRange args) {
  replaceOps(fn, args, {op});
}

/// For each handle (made by its cast op), the first op of `call`'s block
/// that uses it before `call`, or `call`. This lowering made the casts
/// right before the ops it adds, so one walk back from the call to the
/// earliest cast visits only those (a group call's handles, one walk for
/// all: linear in the group); isBeforeInBlock would renumber the whole step
/// after every insertion (quadratic in depth: 11% of a 12-layer compile,
/// issue 19).
static SmallVector<Operation *> firstUsersBefore(ArrayRef<Value> handles,
                                                 Operation *call) {
  SmallVector<Operation *> firstUsers(handles.size(), call);
  llvm::SmallDenseMap<Value, unsigned> indexOf;
  llvm::SmallPtrSet<Operation *, 8> casts;
  for (auto [i, handle] : llvm::enumerate(handles)) {
    Operation *cast = handle.getDefiningOp();
    if (cast->getBlock() == call->getBlock()) {
      indexOf[handle] = i;
      casts.insert(cast);
      continue;
    }
    // Elsewhere (no such step is lowered today): compare positions.
    for (Operation *user : handle.getUsers())
      if (user->getBlock() == call->getBlock() &&
          user->isBeforeInBlock(firstUsers[i]))
        firstUsers[i] = user;
  }
  // Back from the call: the last user seen of a handle is its first.
  for (Operation *it = call->getPrevNode(); it && !casts.empty();
       it = it->getPrevNode()) {
    casts.erase(it);
    for (Value operand : it->getOperands()) {
      auto found = indexOf.find(operand);
      if (found != indexOf.end())
        firstUsers[found->second] = it;
    }
  }
  return firstUsers;
}

void RuntimeCall::replaceOps(RuntimeFn fn, ValueRange args,
                             ArrayRef<Operation *> ops) {
  auto module = op->getParentOfType<ModuleOp>();
  func::FuncOp decl = getOrInsertTypedRuntimeDecl(module, fn, args.getTypes());
  auto call = func::CallOp::create(rewriter, loc, decl, args);
  ++state.numCalls;

  // The in-place output buffers move right before their first user (the
  // call, or what reads the handle for it), after every buffer the call
  // reads (one of which may be the same argument's old value: a read after
  // the to_buffer that writes would be a conflict for one-shot
  // bufferization), and each user records which operand must be which
  // argument (kInPlaceArgsAttr, see msamp-check-in-place-states).
  if (!inPlaceHandles.empty()) {
    // Per user: operand index, argument number, ...
    llvm::MapVector<Operation *, SmallVector<int64_t>> pairsOf;
    SmallVector<Value> handles =
        llvm::to_vector(llvm::make_first_range(inPlaceHandles));
    SmallVector<Operation *> firstUsers = firstUsersBefore(handles, call);
    for (auto [handleAndArg, firstUser] :
         llvm::zip_equal(inPlaceHandles, firstUsers)) {
      auto [handle, arg] = handleAndArg;
      Operation *cast = handle.getDefiningOp();
      Operation *toBuffer = cast->getOperand(0).getDefiningOp();
      rewriter.moveOpBefore(toBuffer, firstUser);
      rewriter.moveOpBefore(cast, firstUser);
      for (OpOperand &use : handle.getUses()) {
        SmallVector<int64_t> &pairs = pairsOf[use.getOwner()];
        pairs.push_back(use.getOperandNumber());
        pairs.push_back(arg.getArgNumber());
      }
    }
    for (auto &[user, pairs] : pairsOf)
      user->setAttr(kInPlaceArgsAttr,
                    DenseI64ArrayAttr::get(call.getContext(), pairs));
  }

  // Wrap the outputs back into tensors and replace, in output order, each
  // op's results (each op's outputs were created in result order) or the
  // value an output stands for (outputFor).
  llvm::SmallDenseMap<Operation *, unsigned> resultIndex;
  for (const Output &out : outputs) {
    Value tensor = bufferization::ToTensorOp::create(
        rewriter, loc, out.tensorType, out.buffer, /*restrict=*/true,
        /*writable=*/true);
    if (out.replaced) {
      rewriter.replaceAllUsesWith(out.replaced, tensor);
      continue;
    }
    unsigned &index = resultIndex[out.owner];
    while (index < out.owner->getNumResults() &&
           out.owner->getResult(index).getType() != out.tensorType)
      ++index;
    if (out.inPlace)
      state.addInPlaceResult(tensor, out.buffer);
    rewriter.replaceAllUsesWith(out.owner->getResult(index++), tensor);
  }
  for (Operation *owner : ops)
    rewriter.eraseOp(owner);
}
