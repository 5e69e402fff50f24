//===- GradientOps.cpp - ONNX Runtime's gradient ops to linalg ------------===//
//
// The com.microsoft ops ONNX Runtime's GradientGraphBuilder writes into a
// training graph (docs/Inputs.md 2.2): activation gradients, softmax and
// layer-norm gradients, the cross-entropy gradient, and FusedMatMul for
// transposed GEMMs. Each lowering follows the op's definition in
// onnxruntime/core/graph/training_op_defs.cc and the CPU kernel's formula.
// InPlaceAccumulatorV2 is not lowered here: the importer reads through it
// (ImportONNX.cpp) because the contract returns gradients, not buffers.
//
//===----------------------------------------------------------------------===//

#include "NodeContext.h"
#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::msamp::onnx;
using llvm::Error;

namespace mlir::msamp::onnx {
llvm::Expected<Value> lowerMatmulND(NodeContext &ctx, Value a, Value b,
                                    bool transA, bool transB);
} // namespace mlir::msamp::onnx

namespace {

/// dX = f(dY, X or Y), elementwise; inputs must have one shape and type.
Error gradElementwise(
    NodeContext &ctx,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (ctx.type(0) != ctx.type(1))
    return ctx.error("dY and the forward value must have one type");
  ctx.setOutput(
      0, ctx.tb.elementwise(ValueRange{ctx.in(0), ctx.in(1)}, ctx.elem(0),
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              return fn(b, l, a[0], a[1]);
                            }));
  return Error::success();
}

Value cst(OpBuilder &b, Location l, Value like, double v) {
  return TensorBuilder::scalar(b, l, like.getType(), v);
}

Value sumAlong(TensorBuilder &tb, Value v, ArrayRef<int64_t> axes,
               bool keepdims) {
  return tb.reduce(v, axes, keepdims, 0.0,
                   [](OpBuilder &b, Location l, ValueRange a) {
                     return arith::AddFOp::create(b, l, a[0], a[1]);
                   });
}

/// SoftmaxGrad(_13) and LogSoftmaxGrad(_13): before opset 13 semantics
/// (SoftmaxGrad, LogSoftmaxGrad) the input is coerced to 2-D at `axis`.
Error softmaxGrad(NodeContext &ctx, bool log, bool v13) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (ctx.type(0) != ctx.type(1))
    return ctx.error("dY and Y must have one type");
  int64_t rank = ctx.rank(0);
  if (rank == 0)
    return ctx.error("input must have rank >= 1");
  auto axis = ctx.axis(ctx.attrInt("axis", v13 ? -1 : 1), rank);
  if (!axis)
    return axis.takeError();
  TensorBuilder &tb = ctx.tb;
  Value dy = ctx.in(0), y = ctx.in(1);
  ArrayRef<int64_t> s = ctx.shape(0);
  int64_t ax = *axis;
  if (!v13) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < ax ? outer : inner) *= s[i];
    dy = tb.reshape(dy, {outer, inner});
    y = tb.reshape(y, {outer, inner});
    ax = 1;
  }
  Type elem = ctx.elem(0);
  Value r;
  if (log) {
    // y = log_softmax: dx = dy - exp(y) * sum(dy).
    Value s1 = sumAlong(tb, dy, {ax}, true);
    r = tb.elementwise(ValueRange{dy, y, s1}, elem,
                       [](OpBuilder &b, Location l, ValueRange a) {
                         Value p = math::ExpOp::create(b, l, a[1]);
                         return arith::SubFOp::create(
                             b, l, a[0], arith::MulFOp::create(b, l, p, a[2]));
                       });
  } else {
    // dx = y * (dy - sum(dy * y)).
    Value prod = tb.elementwise(
        ValueRange{dy, y}, elem, [](OpBuilder &b, Location l, ValueRange a) {
          return arith::MulFOp::create(b, l, a[0], a[1]);
        });
    Value s1 = sumAlong(tb, prod, {ax}, true);
    r = tb.elementwise(ValueRange{dy, y, s1}, elem,
                       [](OpBuilder &b, Location l, ValueRange a) {
                         Value d = arith::SubFOp::create(b, l, a[0], a[2]);
                         return arith::MulFOp::create(b, l, a[1], d);
                       });
  }
  ctx.setOutput(0, tb.reshape(r, s));
  return Error::success();
}

/// LayerNormalizationGrad(Y_grad, X, scale, mean, inv_std_var){axis}
///   -> (X_grad, scale_grad, bias_grad).
Error layerNormGrad(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(5))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  int64_t rank = ctx.rank(1);
  auto axis = ctx.axis(ctx.attrInt("axis", -1), rank);
  if (!axis)
    return axis.takeError();
  ArrayRef<int64_t> xs = ctx.shape(1);
  if (ctx.shape(0) != xs)
    return ctx.error("Y_grad and X must have one shape");
  SmallVector<int64_t> normAxes, batchAxes, statShape;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i >= *axis) {
      normAxes.push_back(i);
      count *= xs[i];
      statShape.push_back(1);
    } else {
      batchAxes.push_back(i);
      statShape.push_back(xs[i]);
    }
  }
  TensorBuilder &tb = ctx.tb;
  Type elem = ctx.elem(0);
  // mean / inv_std_var may come without the kept unit dims.
  for (unsigned i : {3u, 4u})
    if (ctx.type(i).getNumElements() !=
        RankedTensorType::get(statShape, elem).getNumElements())
      return ctx.error("mean and inv_std_var must have the batch shape");
  Value mean = tb.reshape(ctx.in(3), statShape);
  Value inv = tb.reshape(ctx.in(4), statShape);
  ArrayRef<int64_t> ss = ctx.shape(2);
  if (!TensorBuilder::broadcastShapes({ss, xs}) ||
      *TensorBuilder::broadcastShapes({ss, xs}) != SmallVector<int64_t>(xs))
    return ctx.error("scale must broadcast to X");
  Value dy = ctx.in(0), x = ctx.in(1), scale = ctx.in(2);
  Value xhat = tb.elementwise(ValueRange{x, mean, inv}, elem,
                              [](OpBuilder &b, Location l, ValueRange a) {
                                Value d =
                                    arith::SubFOp::create(b, l, a[0], a[1]);
                                return arith::MulFOp::create(b, l, d, a[2]);
                              });
  Value dxhat = tb.elementwise(ValueRange{dy, scale}, xs, elem,
                               [](OpBuilder &b, Location l, ValueRange a) {
                                 return arith::MulFOp::create(b, l, a[0], a[1]);
                               });
  Value prod = tb.elementwise(ValueRange{dxhat, xhat}, elem,
                              [](OpBuilder &b, Location l, ValueRange a) {
                                return arith::MulFOp::create(b, l, a[0], a[1]);
                              });
  Value s1 = sumAlong(tb, dxhat, normAxes, true);
  Value s2 = sumAlong(tb, prod, normAxes, true);
  Value dx =
      tb.elementwise(ValueRange{dxhat, xhat, s1, s2, inv}, elem,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value n = cst(b, l, a[0], double(count));
                       Value m1 = arith::DivFOp::create(b, l, a[2], n);
                       Value m2 = arith::DivFOp::create(b, l, a[3], n);
                       Value t = arith::SubFOp::create(b, l, a[0], m1);
                       t = arith::SubFOp::create(
                           b, l, t, arith::MulFOp::create(b, l, a[1], m2));
                       return arith::MulFOp::create(b, l, t, a[4]);
                     });
  ctx.setOutput(0, dx);
  // Parameter gradients reduce over the batch dims, to the scale's shape.
  auto paramGrad = [&](Value v) {
    Value r = batchAxes.empty() ? v : sumAlong(tb, v, batchAxes, false);
    return tb.reshape(r, ss);
  };
  if (ctx.wantsOutput(1)) {
    Value dyx = tb.elementwise(ValueRange{dy, xhat}, elem,
                               [](OpBuilder &b, Location l, ValueRange a) {
                                 return arith::MulFOp::create(b, l, a[0], a[1]);
                               });
    ctx.setOutput(1, paramGrad(dyx));
  }
  if (ctx.wantsOutput(2))
    ctx.setOutput(2, paramGrad(dy));
  return Error::success();
}

/// SoftmaxCrossEntropyLossGrad(dY, log_prob, label[, weight]) and the
/// ...InternalGrad variant (ignore_index as input 4).
Error sceGrad(NodeContext &ctx, bool internal) {
  if (auto e = ctx.requireInputs(3))
    return e;
  if (auto e = ctx.requireFloat(1))
    return e;
  ArrayRef<int64_t> s = ctx.shape(1), ls = ctx.shape(2);
  int64_t rank = s.size();
  if (rank < 2 || int64_t(ls.size()) != rank - 1 || ls[0] != s[0] ||
      !llvm::equal(ls.drop_front(), s.drop_front(2)))
    return ctx.error("log_prob must be [N, C, d...] and labels [N, d...]");
  if (!isa<IntegerType>(ctx.elem(2)))
    return ctx.error("labels must be an integer tensor");
  int64_t classes = s[1];
  bool hasWeights = ctx.hasInput(3);
  if (hasWeights && (ctx.rank(3) != 1 || ctx.shape(3)[0] != classes))
    return ctx.error("weight must be [C]");
  std::optional<int64_t> ignore;
  if (ctx.hasAttr("ignore_index"))
    ignore = ctx.attrInt("ignore_index", 0);
  if (internal && ctx.hasInput(4)) {
    auto c = ctx.constInts(4);
    if (!c)
      return c.takeError();
    if (!c->empty())
      ignore = (*c)[0];
  }
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return ctx.error("unknown reduction '" + reduction + "'");
  Type elem = ctx.elem(1);
  TensorBuilder &tb = ctx.tb;
  Value labels = ctx.in(2), weights = hasWeights ? ctx.in(3) : Value();

  auto sampleWeight = [&](OpBuilder &b, Location l, Value label) -> Value {
    Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), label);
    Value zero = TensorBuilder::scalar(b, l, b.getIndexType(), 0);
    Value hi = TensorBuilder::scalar(b, l, b.getIndexType(), classes - 1);
    idx = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, idx, zero),
                                 hi);
    Value w = hasWeights ? Value(tensor::ExtractOp::create(b, l, weights, idx))
                         : TensorBuilder::scalar(b, l, elem, 1.0);
    if (ignore) {
      Value ig = TensorBuilder::scalar(b, l, label.getType(), double(*ignore));
      Value isIg =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, label, ig);
      w = arith::SelectOp::create(b, l, isIg,
                                  TensorBuilder::scalar(b, l, elem, 0.0), w);
    }
    return w;
  };
  Value w = tb.elementwise(ValueRange{labels}, ls, elem,
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return sampleWeight(b, l, a[0]);
                           });
  // Per-sample scale g[n, d...]: dY broadcast (none) or dY / sum(w) (mean).
  Value g;
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < int64_t(ls.size()); ++i)
    all.push_back(i);
  if (reduction == "none") {
    if (ctx.shape(0) != ls)
      return ctx.error("dY must have the labels' shape for reduction none");
    g = tb.elementwise(ValueRange{ctx.in(0), w}, elem,
                       [](OpBuilder &b, Location l, ValueRange a) {
                         return arith::MulFOp::create(b, l, a[0], a[1]);
                       });
  } else {
    if (ctx.type(0).getNumElements() != 1)
      return ctx.error("dY must be a scalar");
    Value dy = tb.reshape(ctx.in(0), {});
    Value denom;
    if (reduction == "mean")
      denom = sumAlong(tb, w, all, false);
    SmallVector<Value> ins = {w, dy};
    if (denom)
      ins.push_back(denom);
    g = tb.elementwise(ins, ls, elem,
                       [&](OpBuilder &b, Location l, ValueRange a) {
                         Value r = arith::MulFOp::create(b, l, a[0], a[1]);
                         if (a.size() > 2)
                           r = arith::DivFOp::create(b, l, r, a[2]);
                         return r;
                       });
  }
  // dX[n, c, d...] = (exp(log_prob) - [c == label]) * g[n, d...].
  MLIRContext *mctx = ctx.b.getContext();
  SmallVector<AffineExpr> sampleExprs = {getAffineDimExpr(0, mctx)};
  for (int64_t i = 2; i < rank; ++i)
    sampleExprs.push_back(getAffineDimExpr(i, mctx));
  AffineMap sampleMap = AffineMap::get(rank, 0, sampleExprs, mctx);
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, mctx);
  Value init = tb.empty(s, elem);
  auto op = linalg::GenericOp::create(
      ctx.b, ctx.loc, TypeRange{init.getType()},
      ValueRange{ctx.in(1), labels, g}, ValueRange{init},
      SmallVector<AffineMap>{id, sampleMap, sampleMap, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value p = math::ExpOp::create(b, l, a[0]);
        Value c = linalg::IndexOp::create(b, l, 1);
        Value lab = arith::IndexCastOp::create(b, l, b.getIndexType(), a[1]);
        Value hit =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, c, lab);
        Value oneHot = arith::SelectOp::create(b, l, hit, cst(b, l, p, 1.0),
                                               cst(b, l, p, 0.0));
        Value d = arith::SubFOp::create(b, l, p, oneHot);
        linalg::YieldOp::create(b, l,
                                Value(arith::MulFOp::create(b, l, d, a[2])));
      });
  ctx.setOutput(0, op.getResult(0));
  return Error::success();
}

Error fusedMatMul(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (ctx.attrInt("transBatchA", 0) || ctx.attrInt("transBatchB", 0))
    return ctx.error("transBatchA/transBatchB are not supported");
  auto r = lowerMatmulND(ctx, ctx.in(0), ctx.in(1), ctx.attrInt("transA", 0),
                         ctx.attrInt("transB", 0));
  if (!r)
    return r.takeError();
  double alpha = ctx.attrFloat("alpha", 1.0f);
  Value v = *r;
  if (alpha != 1.0) {
    Type elem = ctx.elem(0);
    v = ctx.tb.elementwise(
        ValueRange{v}, elem, [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::MulFOp::create(
              b, l, a[0], TensorBuilder::scalar(b, l, elem, alpha));
        });
  }
  ctx.setOutput(0, v);
  return Error::success();
}

/// Scale(X, scale){scale_down}: X * scale, or X / scale (ORT's ReduceMean
/// gradient divides by the element count this way).
Error scaleOp(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (ctx.type(1).getNumElements() != 1)
    return ctx.error("scale must have one element");
  bool down = ctx.attrInt("scale_down", 0);
  Type elem = ctx.elem(0);
  Value s = ctx.tb.reshape(ctx.in(1), {});
  ctx.setOutput(0, ctx.tb.elementwise(
                       ValueRange{ctx.in(0), s}, ctx.shape(0), elem,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value f = ctx.tb.convertScalar(b, l, a[1], elem);
                         if (down)
                           return arith::DivFOp::create(b, l, a[0], f);
                         return arith::MulFOp::create(b, l, a[0], f);
                       }));
  return Error::success();
}

/// BiasGelu(A, B) = Gelu(A + B) and BiasGeluGrad_dX(dY, X, B) =
/// dY * Gelu'(X + B) (exact erf form): ORT's BiasGeluFusion merges the bias
/// add of a Linear with the Gelu after it. B broadcasts to A (a bias over the
/// last dim).
Error biasGelu(NodeContext &ctx, bool grad) {
  unsigned x = grad ? 1 : 0;
  if (auto e = ctx.requireInputs(grad ? 3 : 2))
    return e;
  if (auto e = ctx.requireFloat(x))
    return e;
  ArrayRef<int64_t> xs = ctx.shape(x);
  auto bs = TensorBuilder::broadcastShapes({xs, ctx.shape(x + 1)});
  if (ctx.elem(x + 1) != ctx.elem(x) || !bs || *bs != SmallVector<int64_t>(xs))
    return ctx.error("the bias must broadcast to the input");
  if (grad && ctx.type(0) != ctx.type(1))
    return ctx.error("dY and X must have one type");
  SmallVector<Value> ins;
  if (grad)
    ins.push_back(ctx.in(0));
  ins.append({ctx.in(x), ctx.in(x + 1)});
  ctx.setOutput(0, ctx.tb.elementwise(
                       ins, xs, ctx.elem(x),
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value xb = arith::AddFOp::create(b, l, a[x], a[x + 1]);
                         if (!grad)
                           return scalar_ops::gelu(b, l, xb);
                         return arith::MulFOp::create(
                             b, l, a[0], scalar_ops::geluDerivative(b, l, xb));
                       }));
  return Error::success();
}

/// GatherGrad(shape, indices, dY){axis}: the gradient of Gather(data,
/// indices){axis} with respect to data, a zero tensor of `shape` into which
/// every dY slice is added at its index (repeated indices accumulate).
/// Lowered as one linalg.generic that reduces over the index dims:
///   dX[.., v, ..] = sum_i (norm(indices[i]) == v ? dY[.., i, ..] : 0)
/// with norm() the forward Gather's (negative indices count from the end,
/// out-of-range ones clamp). As a reduction it costs |dX| * |indices|
/// compares; the CPU lowering turns it into a loop of row adds
/// (msamp-one-hot-reduction-to-scatter).
Error gatherGrad(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(3))
    return e;
  if (auto e = ctx.requireFloat(2))
    return e;
  if (!isa<IntegerType>(ctx.elem(1)))
    return ctx.error("indices must be an integer tensor");
  auto shape = ctx.constInts(0);
  if (!shape)
    return shape.takeError();
  int64_t rank = shape->size();
  if (rank == 0)
    return ctx.error("shape must have rank >= 1");
  auto axis = ctx.axis(ctx.attrInt("axis", 0), rank);
  if (!axis)
    return axis.takeError();
  ArrayRef<int64_t> is = ctx.shape(1);
  int64_t irank = is.size(), ax = *axis, dimSize = (*shape)[ax];
  SmallVector<int64_t> dyShape(shape->begin(), shape->begin() + ax);
  dyShape.append(is.begin(), is.end());
  dyShape.append(shape->begin() + ax + 1, shape->end());
  if (ctx.shape(2) != ArrayRef<int64_t>(dyShape))
    return ctx.error("dY must have the forward Gather's output shape");
  if (dimSize <= 0)
    return ctx.error("cannot scatter into an empty axis");
  // Iteration space: the rank dims of dX (parallel), then the index dims
  // (reduction).
  MLIRContext *mctx = ctx.b.getContext();
  unsigned dims = rank + irank;
  SmallVector<AffineExpr> outExprs, idxExprs, dyExprs;
  for (int64_t i = 0; i < rank; ++i)
    outExprs.push_back(getAffineDimExpr(i, mctx));
  for (int64_t i = 0; i < irank; ++i)
    idxExprs.push_back(getAffineDimExpr(rank + i, mctx));
  for (int64_t i = 0; i < rank; ++i) {
    if (i == ax)
      dyExprs.append(idxExprs.begin(), idxExprs.end());
    else
      dyExprs.push_back(getAffineDimExpr(i, mctx));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(dims, 0, idxExprs, mctx),
                                 AffineMap::get(dims, 0, dyExprs, mctx),
                                 AffineMap::get(dims, 0, outExprs, mctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.append(irank, utils::IteratorType::reduction);
  Type elem = ctx.elem(2);
  Value init = ctx.tb.splat(RankedTensorType::get(*shape, elem), 0.0);
  auto op = linalg::GenericOp::create(
      ctx.b, ctx.loc, TypeRange{init.getType()},
      ValueRange{ctx.in(1), ctx.in(2)}, ValueRange{init}, maps, iters,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Type index = b.getIndexType();
        Value idx = arith::IndexCastOp::create(b, l, index, a[0]);
        Value zero = TensorBuilder::scalar(b, l, index, 0);
        Value neg =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx, zero);
        idx = arith::SelectOp::create(
            b, l, neg,
            arith::AddIOp::create(b, l, idx,
                                  TensorBuilder::scalar(b, l, index, dimSize)),
            idx);
        idx = arith::MaxSIOp::create(b, l, idx, zero);
        idx = arith::MinSIOp::create(
            b, l, idx, TensorBuilder::scalar(b, l, index, dimSize - 1));
        Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, idx,
                                          linalg::IndexOp::create(b, l, ax));
        Value add =
            arith::SelectOp::create(b, l, hit, a[1], cst(b, l, a[1], 0.0));
        linalg::YieldOp::create(b, l,
                                Value(arith::AddFOp::create(b, l, a[2], add)));
      });
  ctx.setOutput(0, op.getResult(0));
  return Error::success();
}

} // namespace

void mlir::msamp::onnx::registerGradientOps(llvm::StringMap<LowerFn> &t) {
  t["ReluGrad"] = [](NodeContext &c) {
    return gradElementwise(c, [](OpBuilder &b, Location l, Value dy, Value x) {
      Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x,
                                        cst(b, l, x, 0.0));
      return Value(arith::SelectOp::create(b, l, pos, dy, cst(b, l, dy, 0.0)));
    });
  };
  t["GeluGrad"] = [](NodeContext &c) {
    return gradElementwise(c, [](OpBuilder &b, Location l, Value dy, Value x) {
      return Value(
          arith::MulFOp::create(b, l, dy, scalar_ops::geluDerivative(b, l, x)));
    });
  };
  t["SigmoidGrad"] = [](NodeContext &c) {
    return gradElementwise(c, [](OpBuilder &b, Location l, Value dy, Value y) {
      Value om = arith::SubFOp::create(b, l, cst(b, l, y, 1.0), y);
      return Value(
          arith::MulFOp::create(b, l, dy, arith::MulFOp::create(b, l, y, om)));
    });
  };
  t["TanhGrad"] = [](NodeContext &c) {
    return gradElementwise(c, [](OpBuilder &b, Location l, Value dy, Value y) {
      Value y2 = arith::MulFOp::create(b, l, y, y);
      Value om = arith::SubFOp::create(b, l, cst(b, l, y, 1.0), y2);
      return Value(arith::MulFOp::create(b, l, dy, om));
    });
  };
  t["SoftmaxGrad"] = [](NodeContext &c) {
    return softmaxGrad(c, false, false);
  };
  t["SoftmaxGrad_13"] = [](NodeContext &c) {
    return softmaxGrad(c, false, true);
  };
  t["LogSoftmaxGrad"] = [](NodeContext &c) {
    return softmaxGrad(c, true, false);
  };
  t["LogSoftmaxGrad_13"] = [](NodeContext &c) {
    return softmaxGrad(c, true, true);
  };
  t["LayerNormalizationGrad"] = layerNormGrad;
  t["SoftmaxCrossEntropyLossGrad"] = [](NodeContext &c) {
    return sceGrad(c, false);
  };
  t["SoftmaxCrossEntropyLossInternalGrad"] = [](NodeContext &c) {
    return sceGrad(c, true);
  };
  t["FusedMatMul"] = fusedMatMul;
  t["Scale"] = scaleOp;
  t["BiasGelu"] = [](NodeContext &c) { return biasGelu(c, false); };
  t["BiasGeluGrad_dX"] = [](NodeContext &c) { return biasGelu(c, true); };
  t["GatherGrad"] = gatherGrad;
}
