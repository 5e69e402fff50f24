//===- RandomOps.cpp - ai.onnx random ops as torch-mlir spells them -------===//
//
// Dropout (training_mode), RandomUniformLike and Bernoulli import to the one
// spelling of randomness the input contract accepts (docs/Randomness.md 1):
// torch-mlir's, a seed global `@global_seed` loaded, advanced by a 64-bit
// LCG and stored once per random op, and a linalg.generic of integer
// arithmetic on (element index, advanced seed) yielding
// `uitofp(bits) * SCALE + LOW`. --msamp-philox-random replaces each draw by
// the step's own Philox numbers, and a Dropout is built as torch-mlir builds
// it (u < keep, 0/1, divided by keep, times the data), so
// --msamp-dropout-training turns it off in evaluation, exactly as for a
// torch export. ONNX's `seed` attributes are not used: the numbers come from
// the run's seed, the step, the rank and the op (a fixed seed would draw the
// same mask on every step). The other random ops (RandomUniform,
// RandomNormal(Like), Multinomial) are refused with an error naming them.
//
//===----------------------------------------------------------------------===//

#include "NodeContext.h"

#include "MSAMP/Transforms/TorchRandom.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

using namespace mlir;
using namespace mlir::msamp;
using namespace mlir::msamp::onnx;
using llvm::Error;

namespace {

Value i64Constant(OpBuilder &b, Location loc, uint64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(int64_t(v)));
}

/// The seed global, created at the start of the module on first use.
FlatSymbolRefAttr seedGlobal(NodeContext &ctx) {
  auto module =
      ctx.b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto seedType = RankedTensorType::get({}, ctx.b.getI64Type());
  if (!SymbolTable::lookupSymbolIn(module, kTorchSeedGlobal)) {
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToStart(module.getBody());
    ml_program::GlobalOp::create(
        ctx.b, ctx.loc, kTorchSeedGlobal, seedType, /*is_mutable=*/true,
        DenseElementsAttr::get(seedType, ctx.b.getI64IntegerAttr(0)),
        ctx.b.getStringAttr("private"));
  }
  return FlatSymbolRefAttr::get(ctx.b.getContext(), kTorchSeedGlobal);
}

/// Uniform numbers in [low, high) of `shape`, f64 or f32 (`elem`), drawn as
/// torch-mlir draws them: the seed advanced once, then per element the
/// "squares" counter generator of (row-major index, seed), 64 bits scaled
/// by (high - low) * 2^-64.
Value drawUniform(NodeContext &ctx, ArrayRef<int64_t> shape, Type elem,
                  double low, double high) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  auto seedType = RankedTensorType::get({}, b.getI64Type());
  FlatSymbolRefAttr global = seedGlobal(ctx);
  Value loaded = ml_program::GlobalLoadOp::create(b, loc, seedType, global);
  Value seed = tensor::ExtractOp::create(b, loc, loaded, ValueRange{});
  Value advanced = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, seed,
                            i64Constant(b, loc, kTorchLcgMultiplier)),
      i64Constant(b, loc, kTorchLcgIncrement));
  Value inserted =
      tensor::InsertOp::create(b, loc, advanced, loaded, ValueRange{});
  ml_program::GlobalStoreOp::create(b, loc, global, inserted);

  Type f64 = b.getF64Type();
  unsigned rank = shape.size();
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  Type resultElem = elem.isF32() ? elem : f64;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get(shape, resultElem)}, ValueRange{},
      ValueRange{ctx.tb.empty(shape, resultElem)}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange) {
        Type i64 = nb.getI64Type();
        auto c = [&](uint64_t v) { return i64Constant(nb, l, v); };
        // The row-major element index.
        Value index = c(0);
        for (unsigned d = 0; d < rank; ++d) {
          Value i = arith::IndexCastOp::create(
              nb, l, i64, linalg::IndexOp::create(nb, l, d));
          index = d == 0 ? i
                         : arith::AddIOp::create(
                               nb, l,
                               arith::MulIOp::create(nb, l, index,
                                                     c(uint64_t(shape[d]))),
                               i);
        }
        Value c32 = c(32);
        auto rotate = [&](Value x) -> Value {
          return arith::OrIOp::create(nb, l,
                                      arith::ShLIOp::create(nb, l, x, c32),
                                      arith::ShRUIOp::create(nb, l, x, c32));
        };
        auto squarePlus = [&](Value x, Value y) -> Value {
          return arith::AddIOp::create(nb, l,
                                       arith::MulIOp::create(nb, l, x, x), y);
        };
        // Widynski's "squares": x = y = index * key, z = y + key.
        Value y = arith::MulIOp::create(nb, l, index, advanced);
        Value z = arith::AddIOp::create(nb, l, y, advanced);
        Value x = rotate(squarePlus(y, y));
        x = rotate(squarePlus(x, z));
        x = rotate(squarePlus(x, y));
        Value t = squarePlus(x, z);
        x = rotate(t);
        Value bits = arith::XOrIOp::create(
            nb, l, t, arith::ShRUIOp::create(nb, l, squarePlus(x, y), c32));
        Value u = arith::UIToFPOp::create(nb, l, f64, bits);
        Value scaled = arith::MulFOp::create(
            nb, l, u,
            arith::ConstantOp::create(
                nb, l, nb.getF64FloatAttr((high - low) * kTorchTwoPowMinus64)));
        Value r = arith::AddFOp::create(
            nb, l, scaled,
            arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(low)));
        if (resultElem != f64)
          r = arith::TruncFOp::create(nb, l, resultElem, r);
        linalg::YieldOp::create(nb, l, r);
      });
  return generic.getResult(0);
}

/// The ONNX `dtype` attribute of RandomUniformLike / Bernoulli as an element
/// type (absent: `dflt`), or an error.
llvm::Expected<Type> dtypeAttr(NodeContext &ctx, Type dflt) {
  if (!ctx.hasAttr("dtype"))
    return dflt;
  Type elem =
      elementTypeFor(ctx.b.getContext(), int32_t(ctx.attrInt("dtype", 0)));
  if (!elem)
    return ctx.error("unsupported dtype " +
                     llvm::Twine(ctx.attrInt("dtype", 0)));
  return elem;
}

/// x * (u < keep) / keep with torch-mlir's generics: the i1 mask (a compare
/// with a 0-d f64 constant), its 0/1 conversion, the division by keep in
/// the data's type, and the product. Returns {output, mask}.
std::pair<Value, Value> dropoutMasked(NodeContext &ctx, Value x, double keep) {
  OpBuilder &b = ctx.b;
  RankedTensorType type = TensorBuilder::typeOf(x);
  Type elem = type.getElementType();
  Value u = drawUniform(ctx, type.getShape(), b.getF64Type(), 0.0, 1.0);
  auto scalarF64 = RankedTensorType::get({}, b.getF64Type());
  Value keepTensor = arith::ConstantOp::create(
      b, ctx.loc, DenseElementsAttr::get(scalarF64, b.getF64FloatAttr(keep)));
  Value mask =
      ctx.tb.elementwise(ValueRange{u, keepTensor}, b.getI1Type(),
                         [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return arith::CmpFOp::create(
                               nb, l, arith::CmpFPredicate::OLT, a[0], a[1]);
                         });
  Value zeroOne = ctx.tb.elementwise(
      ValueRange{mask}, elem, [&](OpBuilder &nb, Location l, ValueRange a) {
        return Value(arith::UIToFPOp::create(nb, l, elem, a[0]));
      });
  Value scaled = ctx.tb.elementwise(
      ValueRange{zeroOne}, elem, [&](OpBuilder &nb, Location l, ValueRange a) {
        return Value(arith::DivFOp::create(
            nb, l, a[0], TensorBuilder::scalar(nb, l, elem, keep)));
      });
  Value out =
      ctx.tb.elementwise(ValueRange{x, scaled}, elem,
                         [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                           return arith::MulFOp::create(nb, l, a[0], a[1]);
                         });
  return {out, mask};
}

/// A constant scalar float input (Dropout's ratio), or `dflt` when absent.
llvm::Expected<double> constScalar(NodeContext &ctx, unsigned i, double dflt,
                                   llvm::StringRef what) {
  if (!ctx.hasInput(i))
    return dflt;
  const HostTensor *c = ctx.constant(i);
  if (!c)
    return ctx.error(what + llvm::Twine(" must be a constant"));
  if (c->numElements() != 1)
    return ctx.error(what + llvm::Twine(" must be one value"));
  return c->getDouble(0);
}

/// Dropout's (or DropoutGrad's) training_mode input: false when absent.
llvm::Expected<bool> trainingMode(NodeContext &ctx, unsigned i) {
  if (!ctx.hasInput(i))
    return false;
  auto mode = ctx.constInts(i);
  if (!mode)
    return mode.takeError();
  return !mode->empty() && (*mode)[0] != 0;
}

/// Dropout's ratio: input 1 from opset 12, the attribute before; in [0, 1).
llvm::Expected<double> dropoutRatio(NodeContext &ctx) {
  llvm::Expected<double> ratio =
      ctx.opset >= 12 ? constScalar(ctx, 1, 0.5, "ratio")
                      : llvm::Expected<double>(ctx.attrFloat("ratio", 0.5f));
  if (!ratio)
    return ratio.takeError();
  if (!(*ratio >= 0.0 && *ratio < 1.0))
    return ctx.error("ratio must be in [0, 1), got " +
                     llvm::Twine(std::to_string(*ratio)));
  return ratio;
}

Error lowerDropout(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  llvm::Expected<double> ratio = dropoutRatio(ctx);
  if (!ratio)
    return ratio.takeError();
  // training_mode is an input from opset 12; earlier Dropouts are inference
  // (opset 7-11 have no mode; is_test before 7 is not supported).
  llvm::Expected<bool> training =
      ctx.opset >= 12 ? trainingMode(ctx, 2) : llvm::Expected<bool>(false);
  if (!training)
    return training.takeError();
  auto maskType = RankedTensorType::get(ctx.shape(0), ctx.b.getI1Type());
  if (!*training) {
    ctx.setOutput(0, ctx.in(0));
    if (ctx.wantsOutput(1))
      ctx.setOutput(1, ctx.tb.splat(maskType, 1.0));
    return Error::success();
  }
  // The keep probability as torch-mlir computes it: in f64, from the ratio.
  auto [out, mask] = dropoutMasked(ctx, ctx.in(0), 1.0 - *ratio);
  ctx.setOutput(0, out);
  if (ctx.wantsOutput(1))
    ctx.setOutput(1, mask);
  return Error::success();
}

/// com.microsoft DropoutGrad(dY, mask, ratio, training_mode): dY * mask /
/// (1 - ratio) in training mode, dY otherwise (ONNX Runtime's gradient of
/// Dropout).
Error lowerDropoutGrad(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (!ctx.elem(1).isInteger(1) || ctx.shape(1) != ctx.shape(0))
    return ctx.error("mask must be a bool tensor of dY's shape");
  llvm::Expected<double> ratio = constScalar(ctx, 2, 0.5, "ratio");
  if (!ratio)
    return ratio.takeError();
  llvm::Expected<bool> training = trainingMode(ctx, 3);
  if (!training)
    return training.takeError();
  if (!*training) {
    ctx.setOutput(0, ctx.in(0));
    return Error::success();
  }
  Type elem = ctx.elem(0);
  double keep = 1.0 - *ratio;
  ctx.setOutput(0, ctx.tb.elementwise(
                       ValueRange{ctx.in(0), ctx.in(1)}, elem,
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         Value m = arith::UIToFPOp::create(nb, l, elem, a[1]);
                         Value s = arith::DivFOp::create(
                             nb, l, m,
                             TensorBuilder::scalar(nb, l, elem, keep));
                         return Value(arith::MulFOp::create(nb, l, a[0], s));
                       }));
  return Error::success();
}

Error lowerRandomUniformLike(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  llvm::Expected<Type> elem = dtypeAttr(ctx, ctx.elem(0));
  if (!elem)
    return elem.takeError();
  if (!isa<FloatType>(*elem))
    return ctx.error("dtype must be a floating-point type");
  double low = ctx.attrFloat("low", 0.0f), high = ctx.attrFloat("high", 1.0f);
  if (!(high > low))
    return ctx.error("high (" + llvm::Twine(std::to_string(high)) +
                     ") must exceed low (" + llvm::Twine(std::to_string(low)) +
                     ")");
  Value u = drawUniform(ctx, ctx.shape(0), *elem, low, high);
  if (TensorBuilder::typeOf(u).getElementType() != *elem)
    u = ctx.tb.convert(u, *elem);
  ctx.setOutput(0, u);
  return Error::success();
}

/// Bernoulli(p): 1 with probability p, per element: u < p for u in [0, 1).
Error lowerBernoulli(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  llvm::Expected<Type> elem = dtypeAttr(ctx, ctx.elem(0));
  if (!elem)
    return elem.takeError();
  Type f64 = ctx.b.getF64Type();
  Value u = drawUniform(ctx, ctx.shape(0), f64, 0.0, 1.0);
  Value hit = ctx.tb.elementwise(
      ValueRange{u, ctx.in(0)}, ctx.b.getI1Type(),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value p = a[1];
        if (p.getType() != f64)
          p = arith::ExtFOp::create(nb, l, f64, p);
        return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, a[0], p);
      });
  ctx.setOutput(0, elem->isInteger(1) ? hit : ctx.tb.convert(hit, *elem));
  return Error::success();
}

Error refuseRandom(NodeContext &ctx) {
  return ctx.error("random op " + ctx.node.op_type() +
                   " is not supported: the contract accepts Dropout, "
                   "RandomUniformLike and Bernoulli (docs/ONNX.md)");
}

} // namespace

void mlir::msamp::onnx::registerRandomOps(llvm::StringMap<LowerFn> &t) {
  t["Dropout"] = lowerDropout;
  t["DropoutGrad"] = lowerDropoutGrad;
  t["RandomUniformLike"] = lowerRandomUniformLike;
  t["Bernoulli"] = lowerBernoulli;
  for (const char *op :
       {"RandomUniform", "RandomNormal", "RandomNormalLike", "Multinomial"})
    t[op] = refuseRandom;
}
