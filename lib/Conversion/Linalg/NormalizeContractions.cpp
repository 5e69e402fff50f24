//===- NormalizeContractions.cpp - any contraction as one (batched) GEMM --===//
//
// linalg-fuse-elementwise-ops folds reshapes into the contractions around
// them (fusion by expansion): attention's batched matmuls become generics
// with two batch dimensions (batch, head), a projection whose weight is
// viewed [heads, head_dim, dim] one with two N dimensions. GemmMatcher
// accepts only (batch?, M, N; K), so these stayed generated loop nests on
// both targets. This pass rewrites every such contraction into the form the
// matcher accepts: loop dimensions are grouped by the operands that index
// them,
//
//   batch: lhs, rhs and result   M: lhs and result
//   N:     rhs and result        K: lhs and rhs (the reduction)
//
// and each operand is viewed as one matrix (or one batch of matrices) by a
// tensor.collapse_shape of each group. That view needs no data movement
// when the operand's dimensions are in the order [batch..., X..., Y...]
// (either matrix orientation: a transposed operand is a GEMM flag); an
// operand in any other order is first made contiguous by one
// linalg.transpose. The group orders are chosen to copy the fewest elements.
// The new generic is a plain (batched) GEMM with a zero init, which
// convert-msamp-to-runtime turns into one msamp_rt_gemm call (strided
// batched on cuBLASLt, a loop over the batch calling the BLAS on the CPU).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/TrainStep/GemmMatcher.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPNORMALIZECONTRACTIONS
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

/// The loop dimensions of a contraction, by group, each in a chosen order.
enum Group { Batch = 0, M = 1, N = 2, K = 3 };
using Order = SmallVector<unsigned>;

struct Layout {
  /// dims[g]: the loop dimensions of group g, in the chosen order.
  std::array<Order, 4> dims;
  /// Per operand (lhs input, rhs input, result): its map's dimensions.
  std::array<Order, 3> natural;
  /// Which groups form the two matrix dimensions of each operand.
  static constexpr std::array<std::pair<Group, Group>, 3> matrix = {
      {{M, K}, {K, N}, {M, N}}};

  /// The operand's matrix groups in stored order: (X, Y), or (Y, X) when
  /// `swapped` (a transposed operand).
  static std::pair<Group, Group> matrixGroups(unsigned operand, bool swapped) {
    auto [x, y] = matrix[operand];
    return swapped ? std::make_pair(y, x) : std::make_pair(x, y);
  }

  /// The operand's dimensions in canonical order ([batch, X, Y]) or, with
  /// `swapped`, in transposed order ([batch, Y, X]).
  Order target(unsigned operand, bool swapped) const {
    auto [x, y] = matrixGroups(operand, swapped);
    Order order(dims[Batch]);
    llvm::append_range(order, dims[x]);
    llvm::append_range(order, dims[y]);
    return order;
  }
  /// Whether the operand is a view of one (batched) matrix as stored;
  /// `swapped` tells in which orientation.
  bool isView(unsigned operand, bool &swapped) const {
    for (bool s : {false, true})
      if (natural[operand] == target(operand, s)) {
        swapped = s;
        return true;
      }
    return false;
  }
};

/// The dimensions of `map` (a projected permutation) in result order.
Order dimsOf(AffineMap map) {
  Order dims;
  for (unsigned r = 0, e = map.getNumResults(); r < e; ++r)
    dims.push_back(map.getDimPosition(r));
  return dims;
}

/// `dims` filtered to the members of `group`, in the order of `dims`.
Order restrict(const Order &dims, const Order &group) {
  Order out;
  for (unsigned d : dims)
    if (llvm::is_contained(group, d))
      out.push_back(d);
  return out;
}

/// Groups the loop dimensions of `op` and picks the orders that copy the
/// fewest elements, or says why `op` is no contraction this pass handles.
std::optional<Layout> analyze(linalg::GenericOp op, std::string &why) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !op.hasPureTensorSemantics()) {
    why = "not two tensor inputs and one init";
    return std::nullopt;
  }
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape()) {
      why = "an operand has a dynamic shape";
      return std::nullopt;
    }
    Type element = type.getElementType();
    if (!element.isF32() && !element.isBF16() && !element.isF16()) {
      why = "an operand is not f32, bf16 or f16";
      return std::nullopt;
    }
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Layout layout;
  for (unsigned i = 0; i < 3; ++i) {
    if (maps[i].getNumSymbols() != 0 ||
        !maps[i].isProjectedPermutation(/*allowZeroInResults=*/false)) {
      why = "an indexing map is not a projected permutation";
      return std::nullopt;
    }
    layout.natural[i] = dimsOf(maps[i]);
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    bool inLhs = maps[0].isFunctionOfDim(d), inRhs = maps[1].isFunctionOfDim(d),
         inOut = maps[2].isFunctionOfDim(d);
    bool reduction = iterators[d] == utils::IteratorType::reduction;
    Group group;
    if (inLhs && inRhs && inOut && !reduction)
      group = Batch;
    else if (inLhs && !inRhs && inOut && !reduction)
      group = M;
    else if (!inLhs && inRhs && inOut && !reduction)
      group = N;
    else if (inLhs && inRhs && !inOut && reduction)
      group = K;
    else {
      why = "its loop dimension " + std::to_string(d) +
            " is a broadcast or a one-sided reduction";
      return std::nullopt;
    }
    layout.dims[group].push_back(d);
  }
  if (layout.dims[M].empty() || layout.dims[N].empty() ||
      layout.dims[K].empty()) {
    why = "it has no M, N or K dimension (a matrix-vector or dot product, "
          "not a matrix product)";
    return std::nullopt;
  }
  std::string body;
  if (!isMulAddBody(*op.getBlock(), body)) {
    why = body;
    return std::nullopt;
  }

  // Candidate orders of each group: as some operand that holds it stores it.
  std::array<SmallVector<Order>, 4> candidates;
  for (Group g : {Batch, M, N, K})
    for (unsigned i = 0; i < 3; ++i) {
      Order order = restrict(layout.natural[i], layout.dims[g]);
      if (order.size() == layout.dims[g].size() &&
          !llvm::is_contained(candidates[g], order))
        candidates[g].push_back(order);
    }
  auto numel = [&](unsigned i) {
    return cast<RankedTensorType>(op->getOperand(i).getType()).getNumElements();
  };
  std::optional<Layout> best;
  int64_t bestCopied = 0;
  for (const Order &b : candidates[Batch])
    for (const Order &m : candidates[M])
      for (const Order &n : candidates[N])
        for (const Order &k : candidates[K]) {
          Layout trial = layout;
          trial.dims = {b, m, n, k};
          int64_t copied = 0;
          for (unsigned i = 0; i < 3; ++i) {
            bool swapped;
            if (!trial.isView(i, swapped))
              copied += numel(i);
          }
          if (!best || copied < bestCopied) {
            best = trial;
            bestCopied = copied;
          }
        }
  return best;
}

/// The permutation that linalg.transpose needs to reorder `from` into `to`.
SmallVector<int64_t> permutation(const Order &from, const Order &to) {
  SmallVector<int64_t> perm;
  for (unsigned d : to)
    perm.push_back(llvm::find(from, d) - from.begin());
  return perm;
}

/// Reassociation that collapses [batch..., X..., Y...] into [B?, X, Y].
SmallVector<ReassociationIndices> groupsOf(const Layout &layout,
                                           unsigned operand, bool swapped) {
  auto [x, y] = Layout::matrixGroups(operand, swapped);
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (Group g : {Batch, x, y}) {
    if (layout.dims[g].empty())
      continue;
    ReassociationIndices group;
    for (size_t i = 0; i < layout.dims[g].size(); ++i)
      group.push_back(next++);
    groups.push_back(group);
  }
  return groups;
}

/// Shape of the loop dimensions `dims`.
SmallVector<int64_t> shapeOf(const Order &dims, ArrayRef<int64_t> loopSizes) {
  SmallVector<int64_t> shape;
  for (unsigned d : dims)
    shape.push_back(loopSizes[d]);
  return shape;
}

/// Rewrites `op` as the (batched) GEMM of `layout`. Returns the new result.
Value rewrite(RewriterBase &b, linalg::GenericOp op, const Layout &layout) {
  Location loc = op.getLoc();
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  auto product = [&](Group g) {
    int64_t size = 1;
    for (unsigned d : layout.dims[g])
      size *= loopSizes[d];
    return size;
  };
  bool batched = !layout.dims[Batch].empty();
  // New loop dimensions: (b?, m, n, k).
  unsigned offset = batched ? 1 : 0;
  std::array<unsigned, 4> newDim = {0, offset, offset + 1, offset + 2};
  auto newMap = [&](unsigned operand, bool swapped) {
    auto [x, y] = Layout::matrixGroups(operand, swapped);
    SmallVector<AffineExpr> exprs;
    if (batched)
      exprs.push_back(b.getAffineDimExpr(newDim[Batch]));
    exprs.push_back(b.getAffineDimExpr(newDim[x]));
    exprs.push_back(b.getAffineDimExpr(newDim[y]));
    return AffineMap::get(offset + 3, 0, exprs, b.getContext());
  };
  // The [B?, X, Y] shape of an operand viewed as (batched) matrices.
  auto matrixShape = [&](unsigned operand, bool swapped) {
    auto [x, y] = Layout::matrixGroups(operand, swapped);
    SmallVector<int64_t> shape;
    if (batched)
      shape.push_back(product(Batch));
    shape.append({product(x), product(y)});
    return shape;
  };

  // The inputs: a view when stored in a GEMM order, else one transpose.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < 2; ++i) {
    Value value = op.getDpsInputs()[i];
    bool swapped = false;
    if (!layout.isView(i, swapped)) {
      Order to = layout.target(i, /*swapped=*/false);
      Type element = getElementTypeOrSelf(value.getType());
      Value empty =
          tensor::EmptyOp::create(b, loc, shapeOf(to, loopSizes), element);
      value = linalg::TransposeOp::create(b, loc, value, empty,
                                          permutation(layout.natural[i], to))
                  ->getResult(0);
    }
    auto type = RankedTensorType::get(matrixShape(i, swapped),
                                      getElementTypeOrSelf(value));
    if (type != value.getType())
      value = tensor::CollapseShapeOp::create(b, loc, type, value,
                                              groupsOf(layout, i, swapped));
    inputs.push_back(value);
    maps.push_back(newMap(i, swapped));
  }

  // The result: computed into a zero matrix in the stored orientation when
  // the result is a view, else as [batch, M, N] and transposed afterwards.
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  bool swapped = false;
  bool view = layout.isView(2, swapped);
  Type element = resultType.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value empty =
      tensor::EmptyOp::create(b, loc, matrixShape(2, swapped), element);
  Value init =
      linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
          .getResult(0);
  maps.push_back(newMap(2, swapped));
  SmallVector<utils::IteratorType> iterators(offset + 2,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto gemm =
      linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, inputs,
                                ValueRange{init}, maps, iterators);
  // The same multiply-accumulate, operand for operand.
  b.cloneRegionBefore(op.getRegion(), gemm.getRegion(), gemm.getRegion().end());
  gemm->setDiscardableAttrs(op->getDiscardableAttrDictionary());

  Value result = gemm.getResult(0);
  Order stored = layout.target(2, swapped);
  auto expandedType =
      RankedTensorType::get(shapeOf(stored, loopSizes), element);
  if (expandedType != result.getType())
    result = tensor::ExpandShapeOp::create(b, loc, expandedType, result,
                                           groupsOf(layout, 2, swapped));
  if (!view) {
    Value empty =
        tensor::EmptyOp::create(b, loc, resultType.getShape(), element);
    result = linalg::TransposeOp::create(b, loc, result, empty,
                                         permutation(stored, layout.natural[2]))
                 ->getResult(0);
  }
  return result;
}

/// A reduction of the product of two inputs read through the same
/// indexing map: a (batched) dot product, not a matrix product.
bool isDotProduct(linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return op.getNumDpsInputs() == 2 && maps[0] == maps[1];
}

struct NormalizeContractionsPass
    : msamp::impl::MSAMPNormalizeContractionsBase<NormalizeContractionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    int64_t normalized = 0, transposes = 0, left = 0, dots = 0;
    // Why the first contraction left as a loop nest is left (the remark).
    std::string firstWhy;
    auto leave = [&](StringRef why) {
      if (left++ == 0)
        firstWhy = why.str();
    };
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      if (std::optional<GemmMatch> match = matchGemm(op)) {
        // convert-msamp-to-runtime keeps a GEMM into a non-zero init.
        if (!match->zeroInit)
          leave("it is a GEMM into a non-zero init");
        return;
      }
      candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates) {
      std::string why;
      std::optional<Layout> layout = analyze(op, why);
      if (!layout) {
        // Only multiply-accumulates are worth a word: row sums, maxima and
        // one-hot reductions are no GEMMs.
        std::string body;
        if (op.getNumDpsInputs() != 2 || !isMulAddBody(*op.getBlock(), body))
          continue;
        // Both inputs read at the same index: each output is the dot
        // product of two equally laid out rows (softmax backward's
        // sum(dP * P) once the GPU pipeline fuses the product into its row
        // sum). No dimension belongs to one operand alone, so there is no
        // matrix product to hand to a GEMM: it is a row reduction.
        if (isDotProduct(op))
          ++dots;
        else
          leave(why);
        continue;
      }
      // A non-zero init would need an epilogue add: it stays a loop nest
      // (the exporters' contractions all start from a zero fill).
      if (!isZeroTensor(op.getDpsInits()[0])) {
        leave("it accumulates into a non-zero init");
        continue;
      }
      rewriter.setInsertionPoint(op);
      unsigned copies = 0;
      for (unsigned i = 0; i < 3; ++i) {
        bool swapped;
        copies += layout->isView(i, swapped) ? 0 : 1;
      }
      transposes += copies;
      rewriter.replaceOp(op, rewrite(rewriter, op, *layout));
      ++normalized;
    }
    numNormalized += normalized;
    numTransposes += transposes;
    numLeft += left;
    // Statistics are no-ops in a release LLVM (docs/Passes.md); the counts
    // are also a remark.
    func::FuncOp func = getOperation();
    if (normalized + left + dots > 0)
      remark::passed(func.getLoc(),
                     msamp::remarkOptions("normalize-contractions",
                                          "contractions-normalized"))
          << remark::add("{0} contractions in @{1} rewritten as one (batched) "
                         "GEMM each, {2} operands made contiguous by a "
                         "transpose; {3} multiply-accumulate reductions left "
                         "as loop nests{4}{5}",
                         normalized, func.getSymName(), transposes, left,
                         left ? " (the first because " + firstWhy + ")" : "",
                         dots ? "; " + std::to_string(dots) +
                                    " dot products of equally indexed "
                                    "operands (no M or N dimension) run as "
                                    "row reductions"
                              : "");
  }
};

} // namespace
