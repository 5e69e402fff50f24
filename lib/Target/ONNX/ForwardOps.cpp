//===- ForwardOps.cpp - ai.onnx elementwise ops and reductions -----------===//
//
// One lowering per ONNX op type of the default domain; this file has the
// elementwise ops (broadcasting linalg.generics), the reductions
// (linalg.reduce) and LayerNormalization. GEMMs, softmax and the loss are in
// NNOps.cpp, shape ops in ShapeOps.cpp. Integer arithmetic on constants
// (shape computations) is folded on the host, so that Shape/Gather/Concat/
// Reshape chains of exporters never reach the IR.
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
  t["LayerNormalization"] = lowerLayerNorm;
}
