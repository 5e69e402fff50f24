//===- ForwardOps.cpp - ai.onnx ops to linalg/tensor/arith/math -----------===//
//
// One lowering per ONNX op type of the default domain. Elementwise ops are
// broadcasting linalg.generics, reductions linalg.reduce, GEMMs linalg.matmul
// (batch_matmul for batched operands) with transposes in the indexing maps,
// shape ops tensor.expand_shape / collapse_shape / insert_slice /
// extract_slice. Integer shape arithmetic on constants is folded on the host
// (foldConstant), so that Shape/Gather/Concat/Reshape chains of exporters
// never reach the IR.
//
//===----------------------------------------------------------------------===//

#include "NodeContext.h"
#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::msamp::onnx;
using llvm::Error;

namespace {

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

Error checkBroadcast(NodeContext &ctx, ArrayRef<unsigned> idx) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (unsigned i : idx)
    shapes.push_back(ctx.shape(i));
  if (!TensorBuilder::broadcastShapes(shapes)) {
    std::string msg = "shapes cannot be broadcast:";
    for (unsigned i : idx) {
      msg += " [";
      llvm::interleave(
          ctx.shape(i), [&](int64_t d) { msg += std::to_string(d); },
          [&] { msg += ","; });
      msg += "]";
    }
    return ctx.error(msg);
  }
  return Error::success();
}

Error checkSameElem(NodeContext &ctx, ArrayRef<unsigned> idx) {
  for (unsigned i : idx)
    if (ctx.elem(i) != ctx.elem(idx[0]))
      return ctx.error("inputs must have the same element type");
  return Error::success();
}

/// Binary elementwise op `fn(a, b)` with broadcasting.
Error binary(NodeContext &ctx,
             llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn,
             bool boolResult = false) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = checkSameElem(ctx, {0, 1}))
    return e;
  if (auto e = checkBroadcast(ctx, {0, 1}))
    return e;
  Type out = boolResult ? ctx.b.getI1Type() : ctx.elem(0);
  ctx.setOutput(0,
                ctx.tb.elementwise(ValueRange{ctx.in(0), ctx.in(1)}, out,
                                   [&](OpBuilder &b, Location l, ValueRange a) {
                                     return fn(b, l, a[0], a[1]);
                                   }));
  return Error::success();
}

/// Unary float op.
Error unaryFloat(NodeContext &ctx,
                 llvm::function_ref<Value(OpBuilder &, Location, Value)> fn) {
  if (auto e = ctx.requireInputs(1))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  ctx.setOutput(0,
                ctx.tb.elementwise(ValueRange{ctx.in(0)}, ctx.elem(0),
                                   [&](OpBuilder &b, Location l, ValueRange a) {
                                     return fn(b, l, a[0]);
                                   }));
  return Error::success();
}

/// A float-only unary node that is one math-dialect op per element.
template <typename MathOp>
Error unaryMath(NodeContext &ctx) {
  return unaryFloat(ctx, [](OpBuilder &b, Location l, Value x) -> Value {
    return MathOp::create(b, l, x);
  });
}

/// Variadic elementwise op folded left to right (Max, Min, Sum, Mean).
Error variadic(
    NodeContext &ctx,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn,
    bool mean = false) {
  SmallVector<unsigned> idx;
  SmallVector<Value> ins;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.error("input " + llvm::Twine(i) + " is empty");
    idx.push_back(i);
    ins.push_back(ctx.in(i));
  }
  if (ins.empty())
    return ctx.error("needs at least one input");
  if (auto e = checkSameElem(ctx, idx))
    return e;
  if (auto e = checkBroadcast(ctx, idx))
    return e;
  Type elem = ctx.elem(0);
  if (mean && !isa<FloatType>(elem))
    return ctx.error("Mean needs float inputs");
  size_t n = ins.size();
  ctx.setOutput(0, ctx.tb.elementwise(
                       ins, elem, [&](OpBuilder &b, Location l, ValueRange a) {
                         Value r = a[0];
                         for (Value v : a.drop_front())
                           r = fn(b, l, r, v);
                         if (mean)
                           r = arith::DivFOp::create(
                               b, l, r,
                               TensorBuilder::scalar(b, l, elem, double(n)));
                         return r;
                       }));
  return Error::success();
}

/// Axes of a Reduce* node: from input 1 (newer opsets) or the `axes`
/// attribute, normalized and sorted; std::nullopt means "nothing to reduce"
/// (noop_with_empty_axes).
llvm::Expected<std::optional<SmallVector<int64_t>>>
reduceAxes(NodeContext &ctx) {
  std::vector<int64_t> axes;
  if (ctx.hasInput(1)) {
    auto c = ctx.constInts(1);
    if (!c)
      return c.takeError();
    axes = *c;
  } else if (auto a = ctx.attrInts("axes")) {
    axes = *a;
  }
  int64_t rank = ctx.rank(0);
  SmallVector<int64_t> out;
  if (axes.empty()) {
    if (ctx.attrInt("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t i = 0; i < rank; ++i)
      out.push_back(i);
    return std::optional<SmallVector<int64_t>>(out);
  }
  for (int64_t a : axes) {
    auto n = ctx.axis(a, rank);
    if (!n)
      return n.takeError();
    if (!llvm::is_contained(out, *n))
      out.push_back(*n);
  }
  llvm::sort(out);
  return std::optional<SmallVector<int64_t>>(out);
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

Error lowerReduce(NodeContext &ctx, ReduceKind kind) {
  if (auto e = ctx.requireInputs(1))
    return e;
  auto axes = reduceAxes(ctx);
  if (!axes)
    return axes.takeError();
  if (!*axes) {
    ctx.setOutput(0, ctx.in(0));
    return Error::success();
  }
  Type elem = ctx.elem(0);
  if (kind == ReduceKind::Mean && !isa<FloatType>(elem))
    return ctx.error("ReduceMean needs a float input");
  bool keepdims = ctx.attrInt("keepdims", 1);
  double init = 0.0;
  if (kind == ReduceKind::Max)
    init = -INFINITY;
  else if (kind == ReduceKind::Min)
    init = INFINITY;
  else if (kind == ReduceKind::Prod)
    init = 1.0;
  Value r = ctx.tb.reduce(ctx.in(0), **axes, keepdims, init,
                          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                            switch (kind) {
                            case ReduceKind::Max:
                              return scalar_ops::max(b, l, a[0], a[1]);
                            case ReduceKind::Min:
                              return scalar_ops::min(b, l, a[0], a[1]);
                            case ReduceKind::Prod:
                              return scalar_ops::mul(b, l, a[0], a[1]);
                            default:
                              return scalar_ops::add(b, l, a[0], a[1]);
                            }
                          });
  if (kind == ReduceKind::Mean) {
    int64_t count = 1;
    for (int64_t a : **axes)
      count *= ctx.shape(0)[a];
    r = ctx.tb.elementwise(
        ValueRange{r}, elem, [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::DivFOp::create(
              b, l, a[0], TensorBuilder::scalar(b, l, elem, double(count)));
        });
  }
  ctx.setOutput(0, r);
  return Error::success();
}

/// Softmax or log-softmax along one axis (keeping the shape).
Value softmaxAlong(TensorBuilder &tb, Value x, int64_t axis, bool log) {
  Type elem = TensorBuilder::typeOf(x).getElementType();
  Value m = tb.reduce(x, {axis}, /*keepdims=*/true, -INFINITY,
                      [](OpBuilder &b, Location l, ValueRange a) {
                        return scalar_ops::max(b, l, a[0], a[1]);
                      });
  Value e = tb.elementwise(ValueRange{x, m}, elem,
                           [](OpBuilder &b, Location l, ValueRange a) {
                             Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                             return math::ExpOp::create(b, l, d);
                           });
  Value s = tb.reduce(e, {axis}, /*keepdims=*/true, 0.0,
                      [](OpBuilder &b, Location l, ValueRange a) {
                        return arith::AddFOp::create(b, l, a[0], a[1]);
                      });
  if (!log)
    return tb.elementwise(ValueRange{e, s}, elem,
                          [](OpBuilder &b, Location l, ValueRange a) {
                            return arith::DivFOp::create(b, l, a[0], a[1]);
                          });
  return tb.elementwise(ValueRange{x, m, s}, elem,
                        [](OpBuilder &b, Location l, ValueRange a) {
                          Value d = arith::SubFOp::create(b, l, a[0], a[1]);
                          Value ls = math::LogOp::create(b, l, a[2]);
                          return arith::SubFOp::create(b, l, d, ls);
                        });
}

Error lowerSoftmax(NodeContext &ctx, bool log) {
  if (auto e = ctx.requireInputs(1))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  int64_t rank = ctx.rank(0);
  if (rank == 0)
    return ctx.error("input must have rank >= 1");
  if (ctx.opset >= 13) {
    auto axis = ctx.axis(ctx.attrInt("axis", -1), rank);
    if (!axis)
      return axis.takeError();
    ctx.setOutput(0, softmaxAlong(ctx.tb, ctx.in(0), *axis, log));
    return Error::success();
  }
  // Before opset 13 the input is coerced to 2-D at `axis` (default 1).
  auto axis = ctx.axis(ctx.attrInt("axis", 1), rank);
  if (!axis)
    return axis.takeError();
  ArrayRef<int64_t> s = ctx.shape(0);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *axis ? outer : inner) *= s[i];
  Value flat = ctx.tb.reshape(ctx.in(0), {outer, inner});
  Value y = softmaxAlong(ctx.tb, flat, 1, log);
  ctx.setOutput(0, ctx.tb.reshape(y, s));
  return Error::success();
}

/// MatMul semantics (numpy matmul) with optional transposes of the last two
/// dims, as FusedMatMul and ORT's gradient Gemms use.
llvm::Expected<Value> matmulND(NodeContext &ctx, Value a, Value b, bool transA,
                               bool transB) {
  TensorBuilder &tb = ctx.tb;
  RankedTensorType at = TensorBuilder::typeOf(a), bt = TensorBuilder::typeOf(b);
  if (!isa<FloatType>(at.getElementType()) ||
      at.getElementType() != bt.getElementType())
    return ctx.error("operands must be float tensors of one element type");
  if (at.getRank() == 0 || bt.getRank() == 0)
    return ctx.error("operands must have rank >= 1");
  // 1-D operands are promoted to matrices and the extra dim removed after.
  bool vecA = at.getRank() == 1, vecB = bt.getRank() == 1;
  if (vecA) {
    a = tb.reshape(a, {1, at.getDimSize(0)});
    transA = false;
  }
  if (vecB) {
    b = tb.reshape(b, {bt.getDimSize(0), 1});
    transB = false;
  }
  at = TensorBuilder::typeOf(a);
  bt = TensorBuilder::typeOf(b);
  int64_t ra = at.getRank(), rb = bt.getRank();
  int64_t m = at.getDimSize(ra - (transA ? 1 : 2));
  int64_t ka = at.getDimSize(ra - (transA ? 2 : 1));
  int64_t kb = bt.getDimSize(rb - (transB ? 1 : 2));
  int64_t n = bt.getDimSize(rb - (transB ? 2 : 1));
  if (ka != kb)
    return ctx.error("inner dimensions differ (" + llvm::Twine(ka) + " vs " +
                     llvm::Twine(kb) + ")");
  Value r;
  SmallVector<int64_t> outShape;
  if (ra == 2 && rb == 2) {
    r = tb.matmul(a, b, transA, transB);
    outShape = {m, n};
  } else if (rb == 2 && !transA) {
    // [..., M, K] x [K, N]: fold the batch into the rows (a Linear layer on
    // a sequence), which keeps it a plain GEMM with a 2-D weight.
    int64_t rows = at.getNumElements() / ka;
    Value a2 = tb.reshape(a, {rows, ka});
    r = tb.matmul(a2, b, false, transB);
    outShape.assign(at.getShape().begin(), at.getShape().end() - 1);
    outShape.push_back(n);
    r = tb.reshape(r, outShape);
  } else {
    ArrayRef<int64_t> ba = at.getShape().drop_back(2),
                      bb = bt.getShape().drop_back(2);
    auto batch = TensorBuilder::broadcastShapes({ba, bb});
    if (!batch)
      return ctx.error("batch dimensions cannot be broadcast");
    int64_t bsz = 1;
    for (int64_t d : *batch)
      bsz *= d;
    SmallVector<int64_t> sa(*batch), sb(*batch);
    sa.append(at.getShape().end() - 2, at.getShape().end());
    sb.append(bt.getShape().end() - 2, bt.getShape().end());
    Value a3 =
        tb.reshape(tb.broadcastTo(a, sa), {bsz, sa[sa.size() - 2], sa.back()});
    Value b3 =
        tb.reshape(tb.broadcastTo(b, sb), {bsz, sb[sb.size() - 2], sb.back()});
    r = tb.batchMatmul(a3, b3, transA, transB);
    outShape.assign(batch->begin(), batch->end());
    outShape.push_back(m);
    outShape.push_back(n);
    r = tb.reshape(r, outShape);
  }
  if (vecA || vecB) {
    SmallVector<int64_t> s(outShape);
    if (vecB)
      s.pop_back();
    if (vecA)
      s.erase(s.end() - (vecB ? 1 : 2));
    r = tb.reshape(r, s);
  }
  return r;
}

Error lowerMatMul(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  auto r = matmulND(ctx, ctx.in(0), ctx.in(1), false, false);
  if (!r)
    return r.takeError();
  ctx.setOutput(0, *r);
  return Error::success();
}

/// Multiplies by `alpha` when it is not 1.
Value scaleBy(TensorBuilder &tb, Value v, double alpha) {
  if (alpha == 1.0)
    return v;
  Type elem = TensorBuilder::typeOf(v).getElementType();
  return tb.elementwise(
      ValueRange{v}, elem, [&](OpBuilder &b, Location l, ValueRange a) {
        return arith::MulFOp::create(b, l, a[0],
                                     TensorBuilder::scalar(b, l, elem, alpha));
      });
}

Error lowerGemm(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (ctx.rank(0) != 2 || ctx.rank(1) != 2)
    return ctx.error("A and B must be 2-D");
  bool ta = ctx.attrInt("transA", 0), tbf = ctx.attrInt("transB", 0);
  auto y = matmulND(ctx, ctx.in(0), ctx.in(1), ta, tbf);
  if (!y)
    return y.takeError();
  double alpha = ctx.attrFloat("alpha", 1.0f);
  double beta = ctx.attrFloat("beta", 1.0f);
  Value r = *y;
  if (ctx.hasInput(2) && beta != 0.0) {
    Type elem = ctx.elem(0);
    if (ctx.elem(2) != elem)
      return ctx.error("C must have A's element type");
    ArrayRef<int64_t> ys = TensorBuilder::typeOf(r).getShape();
    if (!TensorBuilder::broadcastShapes({ctx.shape(2), ys}) ||
        TensorBuilder::broadcastShapes({ctx.shape(2), ys}) !=
            SmallVector<int64_t>(ys))
      return ctx.error("C cannot be broadcast to the output shape");
    r = ctx.tb.elementwise(
        ValueRange{r, ctx.in(2)}, ys, elem,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = a[0], c = a[1];
          if (alpha != 1.0)
            p = arith::MulFOp::create(b, l, p,
                                      TensorBuilder::scalar(b, l, elem, alpha));
          if (beta != 1.0)
            c = arith::MulFOp::create(b, l, c,
                                      TensorBuilder::scalar(b, l, elem, beta));
          return arith::AddFOp::create(b, l, p, c);
        });
  } else {
    r = scaleBy(ctx.tb, r, alpha);
  }
  ctx.setOutput(0, r);
  return Error::success();
}

Error lowerGelu(NodeContext &ctx) {
  std::string approx = ctx.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return ctx.error("unknown approximate '" + approx + "'");
  bool useTanh = approx == "tanh";
  return unaryFloat(ctx, [&](OpBuilder &b, Location l, Value x) {
    return useTanh ? scalar_ops::geluTanh(b, l, x) : scalar_ops::gelu(b, l, x);
  });
}

Error lowerClip(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  Type elem = ctx.elem(0);
  Value x = ctx.in(0);
  SmallVector<Value> ins = {x};
  bool hasMin = false, hasMax = false;
  double minAttr = -INFINITY, maxAttr = INFINITY;
  if (ctx.opset < 11) {
    hasMin = ctx.hasAttr("min");
    hasMax = ctx.hasAttr("max");
    minAttr = ctx.attrFloat("min", -INFINITY);
    maxAttr = ctx.attrFloat("max", INFINITY);
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!ctx.hasInput(i))
        continue;
      if (ctx.rank(i) != 0 && ctx.type(i).getNumElements() != 1)
        return ctx.error("min and max must be scalars");
      if (ctx.elem(i) != elem)
        return ctx.error("min and max must have the input's element type");
      ins.push_back(ctx.tb.reshape(ctx.in(i), {}));
    }
    hasMin = ctx.hasInput(1);
    hasMax = ctx.hasInput(2);
  }
  ctx.setOutput(
      0,
      ctx.tb.elementwise(
          ins, ctx.shape(0), elem, [&](OpBuilder &b, Location l, ValueRange a) {
            Value r = a[0];
            unsigned next = 1;
            if (hasMin) {
              Value lo = ctx.opset < 11
                             ? TensorBuilder::scalar(b, l, elem, minAttr)
                             : a[next++];
              r = scalar_ops::maxNoNaN(b, l, r, lo);
            }
            if (hasMax) {
              Value hi = ctx.opset < 11
                             ? TensorBuilder::scalar(b, l, elem, maxAttr)
                             : a[next++];
              r = scalar_ops::minNoNaN(b, l, r, hi);
            }
            return r;
          }));
  return Error::success();
}

Error lowerWhere(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(3))
    return e;
  if (!ctx.elem(0).isInteger(1))
    return ctx.error("condition must be a bool tensor");
  if (auto e = checkSameElem(ctx, {1, 2}))
    return e;
  if (auto e = checkBroadcast(ctx, {0, 1, 2}))
    return e;
  ctx.setOutput(0, ctx.tb.elementwise(
                       ValueRange{ctx.in(0), ctx.in(1), ctx.in(2)}, ctx.elem(1),
                       [](OpBuilder &b, Location l, ValueRange a) {
                         return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
                       }));
  return Error::success();
}

Error lowerPow(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (auto e = checkBroadcast(ctx, {0, 1}))
    return e;
  Type elem = ctx.elem(0);
  // x^2 (MSE losses) as a multiply: exact, as exporters' references are.
  if (const HostTensor *c = ctx.constant(1))
    if (c->numElements() == 1 && c->getDouble(0) == 2.0 &&
        ctx.rank(1) <= ctx.rank(0))
      return unaryFloat(ctx, [](OpBuilder &b, Location l, Value x) {
        return arith::MulFOp::create(b, l, x, x);
      });
  ctx.setOutput(
      0, ctx.tb.elementwise(ValueRange{ctx.in(0), ctx.in(1)}, elem,
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              Value e = ctx.tb.convertScalar(b, l, a[1], elem);
                              return math::PowFOp::create(b, l, a[0], e);
                            }));
  return Error::success();
}

Error lowerLayerNorm(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  int64_t rank = ctx.rank(0);
  auto axis = ctx.axis(ctx.attrInt("axis", -1), rank);
  if (!axis)
    return axis.takeError();
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  Type elem = ctx.elem(0);
  ArrayRef<int64_t> s = ctx.shape(0);
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t i = *axis; i < rank; ++i) {
    axes.push_back(i);
    count *= s[i];
  }
  TensorBuilder &tb = ctx.tb;
  SmallVector<unsigned> bcast = {0, 1};
  if (ctx.hasInput(2))
    bcast.push_back(2);
  if (auto e = checkSameElem(ctx, bcast))
    return e;
  if (auto e = checkBroadcast(ctx, bcast))
    return e;
  auto sumOver = [&](Value v) {
    return tb.reduce(v, axes, true, 0.0,
                     [](OpBuilder &b, Location l, ValueRange a) {
                       return arith::AddFOp::create(b, l, a[0], a[1]);
                     });
  };
  auto divCount = [&](OpBuilder &b, Location l, Value v) {
    return arith::DivFOp::create(
        b, l, v, TensorBuilder::scalar(b, l, elem, double(count)));
  };
  Value mean = tb.elementwise(ValueRange{sumOver(ctx.in(0))}, elem,
                              [&](OpBuilder &b, Location l, ValueRange a) {
                                return divCount(b, l, a[0]);
                              });
  Value d = tb.elementwise(ValueRange{ctx.in(0), mean}, elem,
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return arith::SubFOp::create(b, l, a[0], a[1]);
                           });
  Value sq = tb.elementwise(ValueRange{d}, elem,
                            [](OpBuilder &b, Location l, ValueRange a) {
                              return arith::MulFOp::create(b, l, a[0], a[0]);
                            });
  Value invStd =
      tb.elementwise(ValueRange{sumOver(sq)}, elem,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value var = divCount(b, l, a[0]);
                       Value ve = arith::AddFOp::create(
                           b, l, var, TensorBuilder::scalar(b, l, elem, eps));
                       // 1 / sqrt, not math.rsqrt: msamp's lowering
                       // sends math.rsqrt to libm's rsqrtf, which glibc
                       // does not have (the compiled step fails to load).
                       Value sd = math::SqrtOp::create(b, l, ve);
                       return arith::DivFOp::create(
                           b, l, TensorBuilder::scalar(b, l, elem, 1.0), sd);
                     });
  SmallVector<Value> ins = {d, invStd, ctx.in(1)};
  if (ctx.hasInput(2))
    ins.push_back(ctx.in(2));
  Value y =
      tb.elementwise(ins, s, elem, [&](OpBuilder &b, Location l, ValueRange a) {
        Value n = arith::MulFOp::create(b, l, a[0], a[1]);
        Value r = arith::MulFOp::create(b, l, n, a[2]);
        if (a.size() > 3)
          r = arith::AddFOp::create(b, l, r, a[3]);
        return r;
      });
  ctx.setOutput(0, y);
  ctx.setOutput(1, mean);
  ctx.setOutput(2, invStd);
  return Error::success();
}

/// SoftmaxCrossEntropyLoss (and ORT's ...Internal, whose ignore_index may be
/// input 3): loss over labels [N, d...] of scores [N, C, d...].
Error lowerSCE(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (auto e = ctx.requireFloat(0))
    return e;
  if (!isa<IntegerType>(ctx.elem(1)))
    return ctx.error("labels must be an integer tensor");
  int64_t rank = ctx.rank(0);
  ArrayRef<int64_t> s = ctx.shape(0), ls = ctx.shape(1);
  if (rank < 2 || ctx.rank(1) != rank - 1 || ls[0] != s[0] ||
      !llvm::equal(ls.drop_front(), s.drop_front(2)))
    return ctx.error("scores must be [N, C, d...] and labels [N, d...]");
  int64_t classes = s[1];
  bool hasWeights = ctx.hasInput(2);
  if (hasWeights && (ctx.rank(2) != 1 || ctx.shape(2)[0] != classes ||
                     ctx.elem(2) != ctx.elem(0)))
    return ctx.error("weights must be [C] of the scores' element type");
  std::optional<int64_t> ignore;
  if (ctx.hasAttr("ignore_index"))
    ignore = ctx.attrInt("ignore_index", 0);
  if (ctx.hasInput(3)) {
    auto c = ctx.constInts(3);
    if (!c)
      return c.takeError();
    if (!c->empty())
      ignore = (*c)[0];
  }
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return ctx.error("unknown reduction '" + reduction + "'");
  Type elem = ctx.elem(0);
  TensorBuilder &tb = ctx.tb;
  Value logProb = softmaxAlong(tb, ctx.in(0), 1, /*log=*/true);
  Value weights = hasWeights ? ctx.in(2) : Value();

  // Per-sample weight: weights[label] (1 without weights), 0 when ignored.
  auto sampleWeight = [&](OpBuilder &b, Location l, Value label,
                          Value &safeIndex) -> Value {
    Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), label);
    Value zero = TensorBuilder::scalar(b, l, b.getIndexType(), 0);
    Value hi = TensorBuilder::scalar(b, l, b.getIndexType(), classes - 1);
    // Clamp so that an ignored (or bad) label never reads out of bounds.
    safeIndex = arith::MinSIOp::create(
        b, l, arith::MaxSIOp::create(b, l, idx, zero), hi);
    Value w = hasWeights
                  ? Value(tensor::ExtractOp::create(b, l, weights, safeIndex))
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
  Value perSample =
      tb.elementwise(ValueRange{ctx.in(1)}, ls, elem,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value safe;
                       Value w = sampleWeight(b, l, a[0], safe);
                       SmallVector<Value> idx;
                       idx.push_back(linalg::IndexOp::create(b, l, 0));
                       idx.push_back(safe);
                       for (int64_t i = 1; i < int64_t(ls.size()); ++i)
                         idx.push_back(linalg::IndexOp::create(b, l, i));
                       Value lp = tensor::ExtractOp::create(b, l, logProb, idx);
                       Value nl = arith::NegFOp::create(b, l, lp);
                       return arith::MulFOp::create(b, l, nl, w);
                     });
  Value loss = perSample;
  if (reduction != "none") {
    SmallVector<int64_t> all;
    for (int64_t i = 0; i < int64_t(ls.size()); ++i)
      all.push_back(i);
    auto sumAll = [&](Value v) {
      return tb.reduce(v, all, false, 0.0,
                       [](OpBuilder &b, Location l, ValueRange a) {
                         return arith::AddFOp::create(b, l, a[0], a[1]);
                       });
    };
    loss = sumAll(perSample);
    if (reduction == "mean") {
      if (hasWeights || ignore) {
        Value wsum =
            sumAll(tb.elementwise(ValueRange{ctx.in(1)}, ls, elem,
                                  [&](OpBuilder &b, Location l, ValueRange a) {
                                    Value safe;
                                    return sampleWeight(b, l, a[0], safe);
                                  }));
        loss = tb.elementwise(ValueRange{loss, wsum}, elem,
                              [](OpBuilder &b, Location l, ValueRange a) {
                                return arith::DivFOp::create(b, l, a[0], a[1]);
                              });
      } else {
        int64_t n = TensorBuilder::typeOf(perSample).getNumElements();
        loss = tb.elementwise(
            ValueRange{loss}, elem,
            [&](OpBuilder &b, Location l, ValueRange a) {
              return arith::DivFOp::create(
                  b, l, a[0], TensorBuilder::scalar(b, l, elem, double(n)));
            });
      }
    }
  }
  ctx.setOutput(0, loss);
  ctx.setOutput(1, logProb);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// Host constant of int64 values with `shape`.
HostTensor intTensor(ArrayRef<int64_t> shape, ArrayRef<int64_t> values,
                     int32_t type = kInt64) {
  HostTensor t;
  t.dataType = type;
  t.shape.assign(shape.begin(), shape.end());
  unsigned size = dataTypeSize(type);
  t.bytes.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v64 = values[i];
    int32_t v32 = int32_t(v64);
    uint8_t v8 = uint8_t(v64 != 0);
    const void *src = size == 8   ? (const void *)&v64
                      : size == 4 ? (const void *)&v32
                                  : (const void *)&v8;
    std::memcpy(t.bytes.data() + i * size, src, size);
  }
  return t;
}

/// Output shape of a view op, also applied to a folded constant.
Error setViewOutput(NodeContext &ctx, ArrayRef<int64_t> shape) {
  if (const HostTensor *c = ctx.constant(0)) {
    HostTensor t = *c;
    t.shape.assign(shape.begin(), shape.end());
    ctx.setConstantOutput(0, std::move(t));
    return Error::success();
  }
  ctx.setOutput(0, ctx.tb.reshape(ctx.in(0), shape));
  return Error::success();
}

Error lowerReshape(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  auto target = ctx.constInts(1);
  if (!target)
    return target.takeError();
  bool allowZero = ctx.attrInt("allowzero", 0);
  ArrayRef<int64_t> in = ctx.shape(0);
  SmallVector<int64_t> shape;
  int64_t known = 1, inferAt = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero) {
      if (i >= in.size())
        return ctx.error("shape has 0 at a dim the input lacks");
      d = in[i];
    }
    if (d == -1) {
      if (inferAt >= 0)
        return ctx.error("shape has more than one -1");
      inferAt = i;
      shape.push_back(1);
      continue;
    }
    if (d < 0)
      return ctx.error("shape has a negative size " + llvm::Twine(d));
    shape.push_back(d);
    known *= d;
  }
  int64_t total = ctx.type(0).getNumElements();
  if (inferAt >= 0) {
    if (known == 0 || total % known)
      return ctx.error("cannot infer the -1 dimension");
    shape[inferAt] = total / known;
  } else if (known != total) {
    return ctx.error("shape has " + llvm::Twine(known) +
                     " elements, the input " + llvm::Twine(total));
  }
  return setViewOutput(ctx, shape);
}

Error lowerFlatten(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  int64_t rank = ctx.rank(0);
  int64_t a = ctx.attrInt("axis", 1);
  if (a < 0)
    a += rank;
  if (a < 0 || a > rank)
    return ctx.error("axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < a ? outer : inner) *= ctx.shape(0)[i];
  return setViewOutput(ctx, {outer, inner});
}

llvm::Expected<std::vector<int64_t>> axesOf(NodeContext &ctx) {
  if (ctx.hasInput(1))
    return ctx.constInts(1);
  return ctx.attrInts("axes").value_or(std::vector<int64_t>{});
}

Error lowerSqueeze(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  auto axes = axesOf(ctx);
  if (!axes)
    return axes.takeError();
  ArrayRef<int64_t> in = ctx.shape(0);
  SmallVector<int64_t> drop;
  for (int64_t a : *axes) {
    auto n = ctx.axis(a, in.size());
    if (!n)
      return n.takeError();
    if (in[*n] != 1)
      return ctx.error("cannot squeeze axis " + llvm::Twine(a) + " of size " +
                       llvm::Twine(in[*n]));
    drop.push_back(*n);
  }
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in))
    if (axes->empty() ? d != 1 : !llvm::is_contained(drop, int64_t(i)))
      shape.push_back(d);
  return setViewOutput(ctx, shape);
}

Error lowerUnsqueeze(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  auto axes = axesOf(ctx);
  if (!axes)
    return axes.takeError();
  ArrayRef<int64_t> in = ctx.shape(0);
  int64_t outRank = in.size() + axes->size();
  SmallVector<int64_t> ins;
  for (int64_t a : *axes) {
    auto n = ctx.axis(a, outRank);
    if (!n)
      return n.takeError();
    if (llvm::is_contained(ins, *n))
      return ctx.error("repeated axis");
    ins.push_back(*n);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0, j = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(ins, i) ? 1 : in[j++]);
  return setViewOutput(ctx, shape);
}

Error lowerTranspose(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  int64_t rank = ctx.rank(0);
  SmallVector<int64_t> perm;
  if (auto p = ctx.attrInts("perm")) {
    perm.assign(p->begin(), p->end());
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t i = 0; i < int64_t(sorted.size()); ++i)
    if (sorted[i] != i || int64_t(perm.size()) != rank)
      return ctx.error("perm is not a permutation of the input's dims");
  ctx.setOutput(0, ctx.tb.transpose(ctx.in(0), perm));
  return Error::success();
}

Error lowerConcat(NodeContext &ctx) {
  if (ctx.numInputs() == 0)
    return ctx.error("needs at least one input");
  if (auto e = ctx.requireInputs(ctx.numInputs()))
    return e;
  int64_t rank = ctx.rank(0);
  auto axis = ctx.axis(ctx.attrInt("axis", 0), rank);
  if (!axis)
    return axis.takeError();
  SmallVector<int64_t> shape(ctx.shape(0));
  shape[*axis] = 0;
  bool allConst = true;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    if (ctx.rank(i) != rank || ctx.elem(i) != ctx.elem(0))
      return ctx.error("inputs must have one rank and element type");
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && ctx.shape(i)[d] != shape[d])
        return ctx.error("inputs differ outside the concat axis");
    shape[*axis] += ctx.shape(i)[*axis];
    allConst &= ctx.constant(i) != nullptr;
  }
  if (allConst && rank == 1) {
    std::vector<int64_t> vals;
    for (unsigned i = 0; i < ctx.numInputs(); ++i) {
      auto v = ctx.constant(i)->toInts();
      vals.insert(vals.end(), v.begin(), v.end());
    }
    if (isa<IntegerType>(ctx.elem(0))) {
      ctx.setConstantOutput(0,
                            intTensor(shape, vals, ctx.constant(0)->dataType));
      return Error::success();
    }
  }
  Value dest = ctx.tb.empty(shape, ctx.elem(0));
  int64_t offset = 0;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    offsets[*axis] = offset;
    dest = tensor::InsertSliceOp::create(
        ctx.b, ctx.loc, ctx.in(i), dest,
        getAsIndexOpFoldResult(ctx.b.getContext(), offsets),
        getAsIndexOpFoldResult(ctx.b.getContext(), ctx.shape(i)),
        getAsIndexOpFoldResult(ctx.b.getContext(), strides));
    offset += ctx.shape(i)[*axis];
  }
  ctx.setOutput(0, dest);
  return Error::success();
}

Error lowerGather(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  if (!isa<IntegerType>(ctx.elem(1)))
    return ctx.error("indices must be an integer tensor");
  int64_t rank = ctx.rank(0);
  if (rank == 0)
    return ctx.error("data must have rank >= 1");
  auto axis = ctx.axis(ctx.attrInt("axis", 0), rank);
  if (!axis)
    return axis.takeError();
  ArrayRef<int64_t> ds = ctx.shape(0), is = ctx.shape(1);
  int64_t dimSize = ds[*axis];
  SmallVector<int64_t> shape(ds.begin(), ds.begin() + *axis);
  shape.append(is.begin(), is.end());
  shape.append(ds.begin() + *axis + 1, ds.end());
  // Shape arithmetic: gather from a constant vector.
  if (const HostTensor *c = ctx.constant(0))
    if (const HostTensor *ic = ctx.constant(1))
      if (rank == 1 && isa<IntegerType>(ctx.elem(0))) {
        std::vector<int64_t> data = c->toInts(), out;
        for (int64_t i : ic->toInts()) {
          if (i < 0)
            i += dimSize;
          if (i < 0 || i >= dimSize)
            return ctx.error("index " + llvm::Twine(i) + " out of range");
          out.push_back(data[i]);
        }
        ctx.setConstantOutput(0, intTensor(shape, out, c->dataType));
        return Error::success();
      }
  if (dimSize == 0)
    return ctx.error("cannot gather from an empty axis");
  Value data = ctx.in(0);
  int64_t irank = is.size();
  // Indices map to output dims [axis, axis + irank).
  MLIRContext *mctx = ctx.b.getContext();
  SmallVector<AffineExpr> iexprs;
  for (int64_t i = 0; i < irank; ++i)
    iexprs.push_back(getAffineDimExpr(*axis + i, mctx));
  unsigned outRank = shape.size();
  SmallVector<AffineMap> maps = {
      AffineMap::get(outRank, 0, iexprs, mctx),
      AffineMap::getMultiDimIdentityMap(outRank, mctx)};
  Value init = ctx.tb.empty(shape, ctx.elem(0));
  auto op = linalg::GenericOp::create(
      ctx.b, ctx.loc, TypeRange{init.getType()}, ValueRange{ctx.in(1)},
      ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(outRank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        Value zero = TensorBuilder::scalar(b, l, b.getIndexType(), 0);
        Value size = TensorBuilder::scalar(b, l, b.getIndexType(), dimSize);
        // Negative indices count from the end; out-of-range ones are clamped
        // rather than read out of bounds (ONNX leaves them undefined).
        Value neg =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx, zero);
        idx = arith::SelectOp::create(
            b, l, neg, arith::AddIOp::create(b, l, idx, size), idx);
        idx = arith::MaxSIOp::create(b, l, idx, zero);
        idx = arith::MinSIOp::create(
            b, l, idx,
            TensorBuilder::scalar(b, l, b.getIndexType(), dimSize - 1));
        SmallVector<Value> coords;
        for (int64_t i = 0; i < *axis; ++i)
          coords.push_back(linalg::IndexOp::create(b, l, i));
        coords.push_back(idx);
        for (int64_t i = *axis + 1; i < rank; ++i)
          coords.push_back(linalg::IndexOp::create(b, l, i - 1 + irank));
        Value v = tensor::ExtractOp::create(b, l, data, coords);
        linalg::YieldOp::create(b, l, v);
      });
  ctx.setOutput(0, op.getResult(0));
  return Error::success();
}

Error lowerSlice(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(3))
    return e;
  auto starts = ctx.constInts(1), ends = ctx.constInts(2);
  if (!starts)
    return starts.takeError();
  if (!ends)
    return ends.takeError();
  ArrayRef<int64_t> s = ctx.shape(0);
  int64_t rank = s.size();
  std::vector<int64_t> axes, steps;
  if (ctx.hasInput(3)) {
    auto a = ctx.constInts(3);
    if (!a)
      return a.takeError();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    auto st = ctx.constInts(4);
    if (!st)
      return st.takeError();
    steps = *st;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return ctx.error("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offs(rank, 0), sizes(s), strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = ctx.axis(axes[i], rank);
    if (!ax)
      return ax.takeError();
    int64_t d = s[*ax], st = steps[i];
    if (st <= 0)
      return ctx.error("only positive steps are supported");
    auto clampIdx = [&](int64_t v) {
      if (v < 0)
        v += d;
      return std::clamp<int64_t>(v, 0, d);
    };
    int64_t b0 = clampIdx((*starts)[i]), e0 = clampIdx((*ends)[i]);
    sizes[*ax] = e0 > b0 ? (e0 - b0 + st - 1) / st : 0;
    // An empty slice may start at the end; extract_slice wants it in bounds.
    offs[*ax] = sizes[*ax] ? b0 : 0;
    strides[*ax] = st;
  }
  if (const HostTensor *c = ctx.constant(0))
    if (rank == 1 && isa<IntegerType>(ctx.elem(0))) {
      std::vector<int64_t> in = c->toInts(), out;
      for (int64_t i = 0; i < sizes[0]; ++i)
        out.push_back(in[offs[0] + i * strides[0]]);
      ctx.setConstantOutput(0, intTensor(sizes, out, c->dataType));
      return Error::success();
    }
  MLIRContext *mctx = ctx.b.getContext();
  auto type = RankedTensorType::get(sizes, ctx.elem(0));
  ctx.setOutput(
      0, tensor::ExtractSliceOp::create(ctx.b, ctx.loc, type, ctx.in(0),
                                        getAsIndexOpFoldResult(mctx, offs),
                                        getAsIndexOpFoldResult(mctx, sizes),
                                        getAsIndexOpFoldResult(mctx, strides)));
  return Error::success();
}

Error lowerShape(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  ArrayRef<int64_t> s = ctx.shape(0);
  int64_t rank = s.size();
  int64_t start = ctx.attrInt("start", 0), end = ctx.attrInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + end);
  ctx.setConstantOutput(0, intTensor({int64_t(dims.size())}, dims));
  return Error::success();
}

Error lowerSize(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  ctx.setConstantOutput(0, intTensor({}, {ctx.type(0).getNumElements()}));
  return Error::success();
}

Error lowerConstantOfShape(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  auto shape = ctx.constInts(0);
  if (!shape)
    return shape.takeError();
  HostTensor t;
  t.dataType = kFloat;
  t.shape.assign(shape->begin(), shape->end());
  std::vector<char> one(4, 0);
  if (const auto *a = ctx.attr("value")) {
    auto v = decodeTensor(a->t(), ctx.baseDir, "value");
    if (!v)
      return ctx.error(llvm::toString(v.takeError()));
    if (v->numElements() != 1)
      return ctx.error("value must have one element");
    t.dataType = v->dataType;
    one = v->bytes;
  }
  auto n = checkedNumElements(t.shape, "ConstantOfShape");
  if (!n)
    return ctx.error(llvm::toString(n.takeError()));
  if (!elementTypeFor(ctx.b.getContext(), t.dataType))
    return ctx.error("unsupported value type " + dataTypeName(t.dataType));
  for (int64_t i = 0; i < *n; ++i)
    t.bytes.insert(t.bytes.end(), one.begin(), one.end());
  ctx.setConstantOutput(0, std::move(t));
  return Error::success();
}

Error lowerConstant(NodeContext &ctx) {
  HostTensor t;
  if (const auto *a = ctx.attr("value")) {
    auto v = decodeTensor(a->t(), ctx.baseDir, "value");
    if (!v)
      return ctx.error(llvm::toString(v.takeError()));
    t = std::move(*v);
  } else if (const auto *a = ctx.attr("value_float")) {
    t.dataType = kFloat;
    float f = a->f();
    t.bytes.assign((char *)&f, (char *)&f + 4);
  } else if (const auto *a = ctx.attr("value_floats")) {
    t.dataType = kFloat;
    t.shape = {int64_t(a->floats_size())};
    for (float f : a->floats())
      t.bytes.insert(t.bytes.end(), (char *)&f, (char *)&f + 4);
  } else if (const auto *a = ctx.attr("value_int")) {
    t = intTensor({}, {a->i()});
  } else if (const auto *a = ctx.attr("value_ints")) {
    std::vector<int64_t> v(a->ints().begin(), a->ints().end());
    t = intTensor({int64_t(v.size())}, v);
  } else {
    return ctx.error("needs a value, value_float(s) or value_int(s) "
                     "attribute (sparse and string constants are not "
                     "supported)");
  }
  if (!elementTypeFor(ctx.b.getContext(), t.dataType))
    return ctx.error("unsupported constant type " + dataTypeName(t.dataType));
  ctx.setConstantOutput(0, std::move(t));
  return Error::success();
}

Error lowerCast(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  int32_t to = ctx.attrInt("to", 0);
  Type elem = elementTypeFor(ctx.b.getContext(), to);
  if (!elem)
    return ctx.error("unsupported target type " + dataTypeName(to));
  if (const HostTensor *c = ctx.constant(0))
    if (isa<IntegerType>(elem) && isa<IntegerType>(ctx.elem(0))) {
      ctx.setConstantOutput(0, intTensor(c->shape, c->toInts(), to));
      return Error::success();
    }
  ctx.setOutput(0, ctx.tb.convert(ctx.in(0), elem));
  return Error::success();
}

Error lowerIdentity(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  const HostTensor *c = ctx.constant(0);
  ctx.setOutput(0, ctx.in(0), c ? std::make_shared<HostTensor>(*c) : nullptr);
  return Error::success();
}

Error lowerDropout(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(1))
    return e;
  // Inference semantics only: training_mode must be absent or false.
  if (ctx.hasInput(2)) {
    auto mode = ctx.constInts(2);
    if (!mode)
      return mode.takeError();
    if (!mode->empty() && (*mode)[0])
      return ctx.error("training_mode = true (random masks) is not supported");
  }
  ctx.setOutput(0, ctx.in(0));
  if (ctx.wantsOutput(1))
    ctx.setOutput(
        1, ctx.tb.splat(RankedTensorType::get(ctx.shape(0), ctx.b.getI1Type()),
                        1.0));
  return Error::success();
}

Error lowerExpand(NodeContext &ctx) {
  if (auto e = ctx.requireInputs(2))
    return e;
  auto shape = ctx.constInts(1);
  if (!shape)
    return shape.takeError();
  auto out = TensorBuilder::broadcastShapes({ctx.shape(0), *shape});
  if (!out)
    return ctx.error("shape cannot be broadcast");
  ctx.setOutput(0, ctx.tb.broadcastTo(ctx.in(0), *out));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Host folding of integer arithmetic on constants (shape computations)
//===----------------------------------------------------------------------===//

Error intBinary(
    NodeContext &ctx,
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)> fn,
    int64_t (*fold)(int64_t, int64_t)) {
  const HostTensor *a = ctx.constant(0), *c = ctx.constant(1);
  if (a && c && a->dataType == c->dataType && isa<IntegerType>(ctx.elem(0))) {
    bool same = a->shape == c->shape;
    bool cScalar = c->numElements() == 1 && c->shape.size() <= a->shape.size();
    bool aScalar = a->numElements() == 1 && a->shape.size() <= c->shape.size();
    if (same || aScalar || cScalar) {
      const HostTensor *big = (same || cScalar) ? a : c;
      std::vector<int64_t> va = a->toInts(), vc = c->toInts(), out;
      for (int64_t i = 0, n = big->numElements(); i < n; ++i)
        out.push_back(
            fold(va[va.size() == 1 ? 0 : i], vc[vc.size() == 1 ? 0 : i]));
      ctx.setConstantOutput(0, intTensor(big->shape, out, a->dataType));
      return Error::success();
    }
  }
  return binary(ctx, fn);
}

} // namespace

void mlir::msamp::onnx::registerForwardOps(llvm::StringMap<LowerFn> &t) {
  using namespace scalar_ops;
  t["Add"] = [](NodeContext &c) {
    return intBinary(c, add, [](int64_t x, int64_t y) { return x + y; });
  };
  t["Sub"] = [](NodeContext &c) {
    return intBinary(c, sub, [](int64_t x, int64_t y) { return x - y; });
  };
  t["Mul"] = [](NodeContext &c) {
    return intBinary(c, mul, [](int64_t x, int64_t y) { return x * y; });
  };
  t["Div"] = [](NodeContext &c) {
    return intBinary(c, scalar_ops::div, [](int64_t x, int64_t y) {
      return y == 0 ? int64_t(0) : x / y;
    });
  };
  t["Pow"] = lowerPow;
  t["Max"] = [](NodeContext &c) { return variadic(c, max); };
  t["Min"] = [](NodeContext &c) { return variadic(c, min); };
  t["Sum"] = [](NodeContext &c) { return variadic(c, add); };
  t["Mean"] = [](NodeContext &c) { return variadic(c, add, true); };
  t["Equal"] = [](NodeContext &c) { return binary(c, cmpEq, true); };
  t["Less"] = [](NodeContext &c) { return binary(c, cmpLt, true); };
  t["Greater"] = [](NodeContext &c) { return binary(c, cmpGt, true); };
  t["Sqrt"] = unaryMath<math::SqrtOp>;
  t["Exp"] = unaryMath<math::ExpOp>;
  t["Log"] = unaryMath<math::LogOp>;
  t["Tanh"] = unaryMath<math::TanhOp>;
  t["Erf"] = unaryMath<math::ErfOp>;
  t["Reciprocal"] = [](NodeContext &c) {
    return unaryFloat(c, [](OpBuilder &b, Location l, Value x) -> Value {
      return arith::DivFOp::create(
          b, l, TensorBuilder::scalar(b, l, x.getType(), 1.0), x);
    });
  };
  t["Sigmoid"] = [](NodeContext &c) { return unaryFloat(c, sigmoid); };
  t["Relu"] = [](NodeContext &c) { return unaryFloat(c, relu); };
  t["Gelu"] = lowerGelu;
  t["Neg"] = [](NodeContext &c) -> Error {
    if (auto e = c.requireInputs(1))
      return e;
    c.setOutput(0, c.tb.elementwise(ValueRange{c.in(0)}, c.elem(0),
                                    [](OpBuilder &b, Location l, ValueRange a) {
                                      return neg(b, l, a[0]);
                                    }));
    return Error::success();
  };
  t["Abs"] = [](NodeContext &c) -> Error {
    if (auto e = c.requireInputs(1))
      return e;
    c.setOutput(0, c.tb.elementwise(ValueRange{c.in(0)}, c.elem(0),
                                    [](OpBuilder &b, Location l, ValueRange a) {
                                      return scalar_ops::abs(b, l, a[0]);
                                    }));
    return Error::success();
  };
  t["Where"] = lowerWhere;
  t["Clip"] = lowerClip;
  t["ReduceSum"] = [](NodeContext &c) {
    return lowerReduce(c, ReduceKind::Sum);
  };
  t["ReduceMean"] = [](NodeContext &c) {
    return lowerReduce(c, ReduceKind::Mean);
  };
  t["ReduceMax"] = [](NodeContext &c) {
    return lowerReduce(c, ReduceKind::Max);
  };
  t["ReduceMin"] = [](NodeContext &c) {
    return lowerReduce(c, ReduceKind::Min);
  };
  t["Softmax"] = [](NodeContext &c) { return lowerSoftmax(c, false); };
  t["LogSoftmax"] = [](NodeContext &c) { return lowerSoftmax(c, true); };
  t["MatMul"] = lowerMatMul;
  t["Gemm"] = lowerGemm;
  t["LayerNormalization"] = lowerLayerNorm;
  t["SoftmaxCrossEntropyLoss"] = lowerSCE;
  t["SoftmaxCrossEntropyLossInternal"] = lowerSCE;
  t["Transpose"] = lowerTranspose;
  t["Reshape"] = lowerReshape;
  t["Flatten"] = lowerFlatten;
  t["Squeeze"] = lowerSqueeze;
  t["Unsqueeze"] = lowerUnsqueeze;
  t["Concat"] = lowerConcat;
  t["Gather"] = lowerGather;
  t["Slice"] = lowerSlice;
  t["Shape"] = lowerShape;
  t["Size"] = lowerSize;
  t["ConstantOfShape"] = lowerConstantOfShape;
  t["Expand"] = lowerExpand;
  t["Constant"] = lowerConstant;
  t["Cast"] = lowerCast;
  t["Identity"] = lowerIdentity;
  t["Dropout"] = lowerDropout;
}

namespace mlir::msamp::onnx {
/// Exposed for GradientOps.cpp (FusedMatMul, SoftmaxGrad, ...).
llvm::Expected<Value> lowerMatmulND(NodeContext &ctx, Value a, Value b,
                                    bool transA, bool transB) {
  return matmulND(ctx, a, b, transA, transB);
}
Value lowerSoftmaxAlong(TensorBuilder &tb, Value x, int64_t axis, bool log) {
  return softmaxAlong(tb, x, axis, log);
}
Error lowerSoftmaxCrossEntropy(NodeContext &ctx) { return lowerSCE(ctx); }
} // namespace mlir::msamp::onnx
