//===- GemmMatcher.cpp - recognize GEMMs in linalg --------------*- C++ -*-===//
//
// Every GEMM form an exporter emits is reduced to one description,
// result[b?, m, n] = op(lhs) x op(rhs), by looking at indexing maps alone:
// linalg.matmul / batch_matmul / contract (default or explicit maps) and
// contraction linalg.generics. We deliberately do not rely on
// linalg-specialize-generic-ops: in LLVM 22.1 it drops transposes
// (llvm/llvm-project#181387), and a matcher that reads maps handles every
// spelling the same way.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/TrainStep/GemmMatcher.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::msamp;

namespace {
/// Element types the FP8 GEMM lowering accepts as high-precision inputs.
bool isSupportedFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

/// Strips the element-type casts that named ops insert between the block
/// arguments and the multiply (bf16 inputs with an f32 accumulator).
Value stripCasts(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

} // namespace

/// Checks that `body` is `out + in0 * in1` (either operand order, optional
/// float casts), i.e. a plain multiply-accumulate. Anything else (a scaled
/// product, a max-plus "contraction", an extra epilogue) is not a GEMM that
/// msamp.gemm can compute.
bool mlir::msamp::isMulAddBody(Block &body, std::string &why) {
  if (body.getNumArguments() != 3) {
    why = "the body does not take exactly two inputs and one accumulator";
    return false;
  }
  unsigned numMul = 0, numAdd = 0;
  for (Operation &op : body) {
    if (isa<arith::MulFOp>(op))
      ++numMul;
    else if (isa<arith::AddFOp>(op))
      ++numAdd;
    else if (!isa<arith::ExtFOp, arith::TruncFOp, linalg::YieldOp>(op)) {
      why = ("the body contains '" + op.getName().getStringRef() +
             "', not only a multiply-accumulate")
                .str();
      return false;
    }
  }
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (numMul != 1 || numAdd != 1 || !yield || yield.getNumOperands() != 1) {
    why = "the body is not one arith.mulf followed by one arith.addf";
    return false;
  }
  auto add = stripCasts(yield.getOperand(0)).getDefiningOp<arith::AddFOp>();
  if (!add) {
    why = "the yielded value is not the arith.addf";
    return false;
  }
  Value acc = add.getLhs(), prod = add.getRhs();
  if (stripCasts(acc) != body.getArgument(2))
    std::swap(acc, prod);
  if (stripCasts(acc) != body.getArgument(2)) {
    why = "the arith.addf does not accumulate into the output";
    return false;
  }
  auto mul = stripCasts(prod).getDefiningOp<arith::MulFOp>();
  if (!mul) {
    why = "the accumulated value is not the arith.mulf";
    return false;
  }
  Value x = stripCasts(mul.getLhs()), y = stripCasts(mul.getRhs());
  bool inOrder = x == body.getArgument(0) && y == body.getArgument(1);
  bool swapped = x == body.getArgument(1) && y == body.getArgument(0);
  if (!inOrder && !swapped) {
    why = "the arith.mulf does not multiply the two inputs";
    return false;
  }
  return true;
}

namespace {
/// A generic that merely permutes (and possibly casts) its one input: the
/// form torch-mlir and JAX use for `t()` / `transpose` when they do not emit
/// linalg.transpose. Returns the permutation (result dim i = input dim
/// perm[i]) or an empty vector.
SmallVector<int64_t> getGenericTransposePermutation(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[0].isPermutation() || !maps[1].isPermutation())
    return {};
  Block &body = generic.getRegion().front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body.getArgument(0) ||
      body.getOperations().size() != 1)
    return {};
  SmallVector<int64_t> perm;
  for (unsigned p = 0, e = maps[1].getNumResults(); p < e; ++p) {
    unsigned dim = maps[1].getDimPosition(p);
    perm.push_back(*maps[0].getResultPosition(
        getAffineDimExpr(dim, generic.getContext())));
  }
  return perm;
}

/// Looks through producers that swap the two matrix dimensions of `value`
/// (linalg.transpose or an equivalent generic), flipping `transposed` for
/// each one: a GEMM operand read through a transpose is the same operand with
/// the opposite transpose flag, so msamp.gemm can read the untransposed
/// tensor (and share its quantized copy with the other GEMMs that read it).
Value lookThroughTransposes(Value value, bool batched, bool &transposed) {
  SmallVector<int64_t> swap =
      batched ? SmallVector<int64_t>{0, 2, 1} : SmallVector<int64_t>{1, 0};
  while (Operation *def = value.getDefiningOp()) {
    Value source;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      if (transpose.getPermutation() == ArrayRef<int64_t>(swap))
        source = transpose.getInput();
    } else if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
      if (getGenericTransposePermutation(generic) == swap)
        source = generic.getDpsInputs()[0];
    }
    if (!source)
      break;
    value = source;
    transposed = !transposed;
  }
  return value;
}

} // namespace

/// The init is provably zero: a linalg.fill of a zero scalar or a zero
/// constant tensor. Then the op computes A x B alone and needs no epilogue.
bool mlir::msamp::isZeroTensor(Value value) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
    if (fill.getNumDpsInputs() != 1)
      return false;
    Value scalar = fill.getDpsInputs()[0];
    return matchPattern(scalar, m_AnyZeroFloat()) ||
           matchPattern(scalar, m_Zero());
  }
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

namespace {
/// A generic worth explaining when it is not matched: it reduces, takes two
/// inputs and multiplies. Elementwise generics and plain reductions are not
/// GEMM candidates at all and get no reason.
bool looksLikeContraction(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 2 || generic.getNumReductionLoops() == 0)
    return false;
  bool hasMul = false;
  generic.getRegion().walk([&](Operation *op) {
    if (isa<arith::MulFOp, arith::MulIOp>(op))
      hasMul = true;
  });
  return hasMul;
}

std::string typeString(Type type) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << type;
  return str;
}
} // namespace

std::optional<GemmMatch> mlir::msamp::matchGemm(Operation *op,
                                                std::string *reason) {
  auto fail = [&](const Twine &why) -> std::optional<GemmMatch> {
    if (reason)
      *reason = why.str();
    return std::nullopt;
  };
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp)
    return std::nullopt;
  StringRef name = op->getName().getStringRef();

  if (isa<linalg::BatchReduceMatmulOp>(op))
    return fail("'linalg.batch_reduce_matmul' also reduces over the batch "
                "dimension (two reduction dimensions)");
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    if (!looksLikeContraction(generic))
      return std::nullopt;
  } else if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::ContractOp>(
                 op)) {
    // matvec, vecmat, dot, batch_matvec, ...: contractions, but not
    // matrix-matrix products.
    if (linalg::isaContractionOpInterface(linalgOp))
      return fail("'" + name +
                  "' is a contraction but not a matrix-matrix "
                  "product");
    return std::nullopt;
  }

  if (linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1)
    return fail("'" + name + "' does not have exactly two inputs and one init");
  if (!linalgOp.hasPureTensorSemantics() || op->getNumResults() != 1)
    return fail("'" + name + "' does not have tensor semantics");

  // Element types: the FP8 lowering quantizes f32/bf16/f16 operands.
  Value in0 = linalgOp.getDpsInputs()[0], in1 = linalgOp.getDpsInputs()[1];
  Value init = linalgOp.getDpsInits()[0];
  Type t0 = getElementTypeOrSelf(in0.getType());
  Type t1 = getElementTypeOrSelf(in1.getType());
  Type tOut = getElementTypeOrSelf(init.getType());
  if (!isSupportedFloat(t0) || !isSupportedFloat(t1) || !isSupportedFloat(tOut))
    return fail("element types " + typeString(t0) + " x " + typeString(t1) +
                " -> " + typeString(tOut) + " are not f32, bf16 or f16");

  // Iteration space: one reduction dimension K and two parallel dimensions
  // (M, N), or three with a leading batch dimension.
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  unsigned numReduction = linalgOp.getNumReductionLoops();
  unsigned numParallel = linalgOp.getNumParallelLoops();
  if (numReduction != 1)
    return fail("'" + name + "' has " + Twine(numReduction) +
                " reduction dimensions; a GEMM has exactly one (K)");
  if (numParallel != 2 && numParallel != 3)
    return fail("'" + name + "' has " + Twine(numParallel) +
                " parallel dimensions; a GEMM has two (M, N) or three "
                "(batch, M, N) (msamp-normalize-contractions rewrites the "
                "others when lowering)");
  unsigned k = 0;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      k = dim;

  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  if (maps.size() != 3)
    return fail("'" + name + "' does not have three indexing maps");
  for (AffineMap map : maps) {
    if (map.getNumSymbols() != 0 ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return fail("'" + name +
                  "' has an indexing map that is not a projected "
                  "permutation of the loop dimensions");
    if (map.getNumResults() != numParallel)
      return fail("'" + name +
                  "' has a broadcast or a rank mismatch: every "
                  "operand must have rank " +
                  Twine(numParallel));
  }
  AffineMap map0 = maps[0], map1 = maps[1], outMap = maps[2];
  if (outMap.isFunctionOfDim(k))
    return fail("'" + name + "' writes the reduction dimension");
  if (!map0.isFunctionOfDim(k) || !map1.isFunctionOfDim(k))
    return fail("'" + name +
                "' does not reduce over a dimension of both "
                "inputs");

  bool batched = numParallel == 3;
  unsigned offset = batched ? 1 : 0;
  if (batched) {
    unsigned b = outMap.getDimPosition(0);
    if (map0.getDimPosition(0) != b || map1.getDimPosition(0) != b)
      return fail("'" + name +
                  "' does not have a leading batch dimension "
                  "shared by all operands");
  }

  // Canonical orientation: the result is C[i, j] with i, j its last two
  // dimensions. The input that carries i is lhs ([i, k] or [k, i]), the one
  // that carries j is rhs ([k, j] or [j, k]). An output map (n, m) thus swaps
  // lhs and rhs and flips both transposes: (A B)^T = B^T A^T.
  unsigned i = outMap.getDimPosition(offset);
  unsigned j = outMap.getDimPosition(offset + 1);
  auto matrixDims = [&](AffineMap map) {
    return std::make_pair(map.getDimPosition(offset),
                          map.getDimPosition(offset + 1));
  };
  auto holds = [&](AffineMap map, unsigned dim) {
    auto [d0, d1] = matrixDims(map);
    return (d0 == dim && d1 == k) || (d0 == k && d1 == dim);
  };
  unsigned lhsIndex, rhsIndex;
  if (holds(map0, i) && holds(map1, j)) {
    lhsIndex = 0;
    rhsIndex = 1;
  } else if (holds(map1, i) && holds(map0, j)) {
    lhsIndex = 1;
    rhsIndex = 0;
  } else {
    return fail("'" + name +
                "' is not a matrix product: the inputs do not each hold one "
                "result dimension and the reduction dimension");
  }

  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op)) {
    // Named matmuls are multiply-accumulates by definition; generics and
    // linalg.contract get their body checked.
    std::string why;
    if (!isMulAddBody(*linalgOp.getBlock(), why))
      return fail("'" + name + "' has GEMM indexing maps but " + why);
  }

  GemmMatch match;
  match.op = op;
  match.batched = batched;
  match.lhsOperandIndex = lhsIndex;
  match.rhsOperandIndex = rhsIndex;
  AffineMap lhsMap = maps[lhsIndex], rhsMap = maps[rhsIndex];
  match.transposeLhs = matrixDims(lhsMap).first == k;  // [k, m]
  match.transposeRhs = matrixDims(rhsMap).second == k; // [n, k]
  match.lhs = lookThroughTransposes(linalgOp.getDpsInputs()[lhsIndex], batched,
                                    match.transposeLhs);
  match.rhs = lookThroughTransposes(linalgOp.getDpsInputs()[rhsIndex], batched,
                                    match.transposeRhs);
  match.init = init;
  match.zeroInit = isZeroTensor(init);
  return match;
}

std::string mlir::msamp::whyOperandsNotStaticF32(const GemmMatch &match) {
  for (Value v : {match.lhs, match.rhs}) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32())
      return "its operands are not f32 tensors";
    if (!type.hasStaticShape())
      return "its operands have dynamic shapes";
  }
  return "";
}
