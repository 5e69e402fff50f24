//===- TensorBuilder.cpp - linalg-on-tensors building blocks --------------===//
//
// Every op is written the way python/msamp/graphs/emitter.py writes it: each
// GEMM accumulates into its own zero linalg.fill, each elementwise op writes
// into its own tensor.empty, nothing is shared between ops.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::msamp::onnx;

std::optional<SmallVector<int64_t>>
TensorBuilder::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i], &o = out[off + i];
      if (d == o || d == 1)
        continue;
      if (o != 1)
        return std::nullopt;
      o = d;
    }
  }
  return out;
}

Value TensorBuilder::scalar(OpBuilder &nb, Location l, Type type,
                            double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(nb, l, nb.getFloatAttr(ft, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(nb, l, int64_t(value));
  auto it = cast<IntegerType>(type);
  int64_t iv;
  // +-inf stand for the type's extremes (reduction identities).
  if (value == std::numeric_limits<double>::infinity())
    iv = it.getWidth() == 1 ? 1 : int64_t(llvm::maxIntN(it.getWidth()));
  else if (value == -std::numeric_limits<double>::infinity())
    iv = it.getWidth() == 1 ? 0 : llvm::minIntN(it.getWidth());
  else
    iv = int64_t(value);
  return arith::ConstantOp::create(nb, l, nb.getIntegerAttr(it, iv));
}

Value TensorBuilder::scalar(Type type, double value) {
  return scalar(b, loc, type, value);
}

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type elem) {
  return tensor::EmptyOp::create(b, loc, shape, elem);
}

Value TensorBuilder::splat(RankedTensorType type, double value) {
  Value init = empty(type.getShape(), type.getElementType());
  Value c = scalar(type.getElementType(), value);
  return linalg::FillOp::create(b, loc, c, init).getResult(0);
}

static SmallVector<utils::IteratorType> parallel(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value TensorBuilder::elementwise(ValueRange ins, ArrayRef<int64_t> outShape,
                                 Type outElem, ScalarFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (Value v : ins) {
    RankedTensorType t = typeOf(v);
    unsigned off = rank - t.getRank();
    SmallVector<AffineExpr> exprs;
    for (unsigned i = 0; i < t.getRank(); ++i)
      exprs.push_back(t.getDimSize(i) == 1 && outShape[off + i] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(off + i, ctx));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = empty(outShape, outElem);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
      parallel(rank), [&](OpBuilder &nb, Location l, ValueRange args) {
        Value r = body(nb, l, args.drop_back());
        linalg::YieldOp::create(nb, l, r);
      });
  return op.getResult(0);
}

Value TensorBuilder::elementwise(ValueRange ins, Type outElem, ScalarFn body) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : ins)
    shapes.push_back(typeOf(v).getShape());
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  assert(shape && "callers check broadcast compatibility");
  return elementwise(ins, *shape, outElem, body);
}

Value TensorBuilder::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  if (typeOf(v).getShape() == shape)
    return v;
  return elementwise(ValueRange{v}, shape, typeOf(v).getElementType(),
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

Value TensorBuilder::reduce(Value x, ArrayRef<int64_t> axes, bool keepdims,
                            double init, ScalarFn combine) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> outShape, keptShape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    bool reduced = llvm::is_contained(axes, i);
    if (!reduced)
      outShape.push_back(t.getDimSize(i));
    keptShape.push_back(reduced ? 1 : t.getDimSize(i));
  }
  Type elem = t.getElementType();
  Value acc = splat(RankedTensorType::get(outShape, elem), init);
  Value r;
  if (axes.empty()) {
    // ONNX reduces nothing when axes is empty and noop_with_empty_axes is
    // set; linalg.reduce needs at least one dimension.
    return x;
  }
  auto op = linalg::ReduceOp::create(
      b, loc, ValueRange{x}, ValueRange{acc}, axes,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, combine(nb, l, args));
      });
  r = op.getResult(0);
  if (keepdims)
    r = reshape(r, keptShape);
  return r;
}

Value TensorBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  RankedTensorType t = typeOf(x);
  bool identity = true;
  SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    shape.push_back(t.getDimSize(p));
    identity &= int64_t(i) == p;
  }
  if (identity)
    return x;
  Value init = empty(shape, t.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
}

Value TensorBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  RankedTensorType t = typeOf(x);
  if (t.getShape() == shape)
    return x;
  auto target = RankedTensorType::get(shape, t.getElementType());
  // Rank 0 <-> all-ones shapes use the empty reassociation.
  if (t.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, target, x,
                                         ArrayRef<ReassociationIndices>{});
  if (target.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, target, x,
                                           ArrayRef<ReassociationIndices>{});
  if (t.getRank() > target.getRank()) {
    if (auto re = getReassociationIndicesForReshape(t, target))
      return tensor::CollapseShapeOp::create(b, loc, target, x, *re);
  } else if (t.getRank() < target.getRank()) {
    if (auto re = getReassociationIndicesForReshape(target, t))
      return tensor::ExpandShapeOp::create(b, loc, target, x, *re);
  }
  // No single reassociation (e.g. [2,3] -> [3,2]): go through rank 1.
  auto allDims = [](int64_t rank) {
    SmallVector<ReassociationIndices> re(1);
    for (int64_t i = 0; i < rank; ++i)
      re[0].push_back(i);
    return re;
  };
  auto flatType =
      RankedTensorType::get({t.getNumElements()}, t.getElementType());
  Value flat = x;
  if (t.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, x,
                                           allDims(t.getRank()));
  if (target.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, target, flat,
                                       allDims(target.getRank()));
}

Value TensorBuilder::matmul(Value a, Value bv, bool transA, bool transB) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType at = typeOf(a), bt = typeOf(bv);
  int64_t m = at.getDimSize(transA ? 1 : 0);
  int64_t n = bt.getDimSize(transB ? 0 : 1);
  auto outType = RankedTensorType::get({m, n}, at.getElementType());
  Value acc = splat(outType, 0.0);
  auto op = linalg::MatmulOp::create(b, loc, TypeRange{outType},
                                     ValueRange{a, bv}, ValueRange{acc});
  if (transA || transB) {
    AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
               dk = getAffineDimExpr(2, ctx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(3, 0,
                       transA ? ArrayRef<AffineExpr>{dk, dm}
                              : ArrayRef<AffineExpr>{dm, dk},
                       ctx),
        AffineMap::get(3, 0,
                       transB ? ArrayRef<AffineExpr>{dn, dk}
                              : ArrayRef<AffineExpr>{dk, dn},
                       ctx),
        AffineMap::get(3, 0, {dm, dn}, ctx)};
    op.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  }
  return op.getResult(0);
}

Value TensorBuilder::batchMatmul(Value a, Value bv, bool transA, bool transB) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType at = typeOf(a), bt = typeOf(bv);
  int64_t bs = at.getDimSize(0);
  int64_t m = at.getDimSize(transA ? 2 : 1);
  int64_t n = bt.getDimSize(transB ? 1 : 2);
  auto outType = RankedTensorType::get({bs, m, n}, at.getElementType());
  Value acc = splat(outType, 0.0);
  auto op = linalg::BatchMatmulOp::create(b, loc, TypeRange{outType},
                                          ValueRange{a, bv}, ValueRange{acc});
  if (transA || transB) {
    AffineExpr db = getAffineDimExpr(0, ctx), dm = getAffineDimExpr(1, ctx),
               dn = getAffineDimExpr(2, ctx), dk = getAffineDimExpr(3, ctx);
    SmallVector<AffineMap> maps = {
        AffineMap::get(4, 0,
                       transA ? ArrayRef<AffineExpr>{db, dk, dm}
                              : ArrayRef<AffineExpr>{db, dm, dk},
                       ctx),
        AffineMap::get(4, 0,
                       transB ? ArrayRef<AffineExpr>{db, dn, dk}
                              : ArrayRef<AffineExpr>{db, dk, dn},
                       ctx),
        AffineMap::get(4, 0, {db, dm, dn}, ctx)};
    op.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  }
  return op.getResult(0);
}

Value TensorBuilder::convertScalar(OpBuilder &nb, Location l, Value v,
                                   Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  auto fromI = dyn_cast<IntegerType>(from), toI = dyn_cast<IntegerType>(to);
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(nb, l, to, v);
    return arith::TruncFOp::create(nb, l, to, v);
  }
  if (fromF && toI) {
    if (toI.getWidth() == 1)
      return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, v,
                                   scalar(nb, l, from, 0.0));
    return arith::FPToSIOp::create(nb, l, to, v);
  }
  if (fromI && toF) {
    if (fromI.getWidth() == 1)
      return arith::UIToFPOp::create(nb, l, to, v);
    return arith::SIToFPOp::create(nb, l, to, v);
  }
  if (fromI && toI) {
    if (toI.getWidth() == 1)
      return arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, v,
                                   scalar(nb, l, from, 0.0));
    if (fromI.getWidth() == 1)
      return arith::ExtUIOp::create(nb, l, to, v);
    if (fromI.getWidth() < toI.getWidth())
      return arith::ExtSIOp::create(nb, l, to, v);
    return arith::TruncIOp::create(nb, l, to, v);
  }
  return v;
}

Value TensorBuilder::convert(Value x, Type elem) {
  if (typeOf(x).getElementType() == elem)
    return x;
  return elementwise(ValueRange{x}, typeOf(x).getShape(), elem,
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return convertScalar(nb, l, a[0], elem);
                     });
}
