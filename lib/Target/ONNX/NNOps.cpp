//===- NNOps.cpp - ai.onnx softmax, GEMMs and the loss -------------------===//
//
// The ONNX ops that are more than one elementwise or shape op: Softmax and
// LogSoftmax, MatMul and Gemm (linalg.matmul / batch_matmul with transposes
// in the indexing maps), SoftmaxCrossEntropyLoss. The gradient ops of
// GradientOps.cpp reuse the GEMM and softmax builders.
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

} // namespace

void mlir::msamp::onnx::registerNNOps(llvm::StringMap<LowerFn> &t) {
  t["Softmax"] = [](NodeContext &c) { return lowerSoftmax(c, false); };
  t["LogSoftmax"] = [](NodeContext &c) { return lowerSoftmax(c, true); };
  t["MatMul"] = lowerMatMul;
  t["Gemm"] = lowerGemm;
  t["SoftmaxCrossEntropyLoss"] = lowerSCE;
  t["SoftmaxCrossEntropyLossInternal"] = lowerSCE;
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
