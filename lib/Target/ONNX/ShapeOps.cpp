//===- ShapeOps.cpp - ai.onnx shape, data-movement and constant ops -------===//
//
// Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Gather, Slice, Expand as
// tensor.expand_shape / collapse_shape / insert_slice / extract_slice and
// linalg; Shape, Size, ConstantOfShape, Constant and integer Casts of
// constants are folded on the host, so that the Shape/Gather/Concat/Reshape
// chains of exporters never reach the IR.
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

HostTensor mlir::msamp::onnx::intTensor(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> values,
                                        int32_t type) {
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

namespace {

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

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

} // namespace

void mlir::msamp::onnx::registerShapeOps(llvm::StringMap<LowerFn> &t) {
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
}
