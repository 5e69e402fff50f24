//===- TorchRandom.cpp - torch-mlir's spelling of randomness ----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The recognizer of include/MSAMP/Transforms/TorchRandom.h. It is strict on
// purpose: the compiler replaces what it matches by its own generator, so
// anything that only looks similar (another global, a seed read elsewhere, a
// generic that mixes the seed into data) must be an error, not a silently
// different random stream.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/TorchRandom.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {

constexpr StringLiteral kHint =
    "randomness must be spelled as torch-mlir spells it (docs/Randomness.md): "
    "the seed @global_seed loaded, advanced and stored once per random op, "
    "and a linalg.generic drawing uniform numbers from the advanced seed";

bool isConstantInt(Value v, uint64_t expected) {
  APInt value;
  return matchPattern(v, m_ConstantInt(&value)) && value.getBitWidth() == 64 &&
         value.getZExtValue() == expected;
}

std::optional<double> constantFloat(Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  return std::nullopt;
}

/// The single user of `v`, if it is an op of type OpTy.
template <typename OpTy>
OpTy singleUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return dyn_cast<OpTy>(*v.getUsers().begin());
}

/// The other operand of a commutative binary op whose one operand is `v`.
Value otherOperand(Operation *op, Value v) {
  if (op->getNumOperands() != 2)
    return nullptr;
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return nullptr;
}

/// Checks that `generic` is torch-mlir's uniform draw from `seed`; fills the
/// interval. Emits the error itself.
LogicalResult matchUniform(linalg::GenericOp generic, Value seed,
                           TorchUniform &out) {
  auto fail = [&](const Twine &why) {
    return generic.emitError("random-number linalg.generic: ")
           << why << "; " << kHint;
  };
  if (generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1)
    return fail("expected no inputs and one output");
  if (generic.getNumReductionLoops() != 0 ||
      !generic.getIndexingMapsArray()[0].isIdentity())
    return fail("expected an elementwise (parallel, identity-mapped) output");
  Type element = getElementTypeOrSelf(generic->getResult(0).getType());
  if (!element.isF64() && !element.isF32())
    return fail("expected f64 or f32 numbers");
  Block &body = generic.getRegion().front();
  // Only index arithmetic on the element index and the seed.
  for (Operation &op : body) {
    if (!isa<linalg::IndexOp, linalg::YieldOp, arith::IndexCastOp,
             arith::MulIOp, arith::AddIOp, arith::ShLIOp, arith::ShRUIOp,
             arith::OrIOp, arith::XOrIOp, arith::UIToFPOp, arith::MulFOp,
             arith::AddFOp, arith::TruncFOp, arith::ConstantOp>(op))
      return fail("unexpected " + op.getName().getStringRef() + " in its body");
    for (Value operand : op.getOperands()) {
      if (operand.getParentBlock() == &body || operand == seed ||
          matchPattern(operand, m_Constant()))
        continue;
      return fail("its body reads a value other than the element index, the "
                  "advanced seed and constants");
    }
  }
  if (!body.getArgument(0).use_empty())
    return fail("its body reads the output tensor");
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto trunc = yielded.getDefiningOp<arith::TruncFOp>())
    yielded = trunc.getIn();
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  auto mul = add ? add.getLhs().getDefiningOp<arith::MulFOp>() : nullptr;
  auto toFloat = mul ? mul.getLhs().getDefiningOp<arith::UIToFPOp>() : nullptr;
  std::optional<double> low = add ? constantFloat(add.getRhs()) : std::nullopt;
  std::optional<double> scale =
      mul ? constantFloat(mul.getRhs()) : std::nullopt;
  if (!toFloat || !low || !scale || !toFloat.getIn().getType().isInteger(64) ||
      !toFloat.getType().isF64())
    return fail("expected it to yield uitofp(64 random bits) * SCALE + LOW "
                "with constant SCALE and LOW");
  out.generic = generic;
  out.low = *low;
  out.high = *low + *scale / kTorchTwoPowMinus64;
  if (!(out.high > out.low))
    return fail("its interval is empty");
  return success();
}

/// Matches the chain of one load of the seed and every draw from it.
LogicalResult matchChain(ml_program::GlobalLoadOp load,
                         SmallVectorImpl<TorchUniform> &out) {
  auto fail = [&](Operation *at, const Twine &why) {
    return at->emitError("torch-mlir seed: ") << why << "; " << kHint;
  };
  tensor::ExtractOp extract;
  tensor::InsertOp insert;
  for (Operation *user : load->getUsers()) {
    if (auto e = dyn_cast<tensor::ExtractOp>(user); e && !extract)
      extract = e;
    else if (auto i = dyn_cast<tensor::InsertOp>(user);
             i && !insert && i.getDest() == load.getResult())
      insert = i;
    else
      return fail(user, "the loaded seed is used by " +
                            user->getName().getStringRef() +
                            ", expected one tensor.extract and one "
                            "tensor.insert");
  }
  if (!extract || !insert)
    return fail(load, "the loaded seed is not extracted, advanced and "
                      "stored back");
  auto mul = singleUser<arith::MulIOp>(extract.getResult());
  if (!mul || !isConstantInt(otherOperand(mul, extract.getResult()),
                             kTorchLcgMultiplier))
    return fail(extract, "expected the seed to be advanced as seed * " +
                             Twine(kTorchLcgMultiplier) + " + " +
                             Twine(kTorchLcgIncrement));
  auto add = singleUser<arith::AddIOp>(mul.getResult());
  if (!add ||
      !isConstantInt(otherOperand(add, mul.getResult()), kTorchLcgIncrement))
    return fail(mul, "expected the seed to be advanced as seed * " +
                         Twine(kTorchLcgMultiplier) + " + " +
                         Twine(kTorchLcgIncrement));
  Value seed = add.getResult();
  if (insert.getScalar() != seed)
    return fail(insert, "the stored seed is not the advanced seed");
  auto store = singleUser<ml_program::GlobalStoreOp>(insert.getResult());
  if (!store || store.getGlobal().getLeafReference() != kTorchSeedGlobal)
    return fail(insert, "the advanced seed is not stored to @global_seed");

  SmallVector<Operation *> chain = {load, extract, mul, add, insert, store};
  llvm::SetVector<linalg::GenericOp> generics;
  for (Operation *user : seed.getUsers()) {
    if (user == insert.getOperation())
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user->getParentOp());
    if (!generic)
      return fail(user, "the advanced seed is used by " +
                            user->getName().getStringRef() +
                            " outside a random-number linalg.generic");
    generics.insert(generic);
  }
  for (linalg::GenericOp generic : generics) {
    TorchUniform uniform;
    if (failed(matchUniform(generic, seed, uniform)))
      return failure();
    uniform.seedOps = chain;
    out.push_back(uniform);
  }
  // A draw whose numbers are unused leaves only the chain: keep it so that
  // the rewrite still removes it.
  if (generics.empty()) {
    TorchUniform unused;
    unused.seedOps = chain;
    out.push_back(unused);
  }
  return success();
}

} // namespace

LogicalResult mlir::msamp::verifyTorchSeedGlobals(ModuleOp module) {
  bool ok = true;
  for (auto global : module.getOps<ml_program::GlobalOp>()) {
    auto type = dyn_cast<RankedTensorType>(global.getType());
    if (global.getSymName() == kTorchSeedGlobal && global.getIsMutable() &&
        type && type.getRank() == 0 && type.getElementType().isInteger(64))
      continue;
    global.emitError("ml_program.global @")
        << global.getSymName()
        << ": the contract accepts ml_program only as torch-mlir's dropout "
           "seed, a mutable tensor<i64> global named @global_seed; other "
           "state must be a function argument (role \"buffer\")";
    ok = false;
  }
  return success(ok);
}

FailureOr<SmallVector<TorchUniform>>
mlir::msamp::matchTorchRandomness(func::FuncOp func) {
  SmallVector<TorchUniform> uniforms;
  llvm::DenseSet<Operation *> matched;
  bool ok = true, chainsOk = true;
  func.walk([&](Operation *op) {
    if (op->getDialect() == nullptr ||
        op->getName().getDialectNamespace() != "ml_program")
      return;
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op)) {
      if (load.getGlobal().getLeafReference() != kTorchSeedGlobal) {
        load.emitError("ml_program.global_load of @")
            << load.getGlobal().getLeafReference()
            << ": only torch-mlir's @global_seed may be read; " << kHint;
        ok = false;
        return;
      }
      size_t first = uniforms.size();
      if (failed(matchChain(load, uniforms))) {
        // Its store is then unmatched too: one error per broken chain.
        ok = chainsOk = false;
        return;
      }
      for (size_t i = first; i < uniforms.size(); ++i)
        matched.insert(uniforms[i].seedOps.begin(), uniforms[i].seedOps.end());
      return;
    }
    if (!matched.contains(op) && chainsOk) {
      op->emitError("unexpected ")
          << op->getName() << " (not part of a seed load, advance and store); "
          << kHint;
      ok = false;
    }
  });
  if (!ok)
    return failure();
  return uniforms;
}
