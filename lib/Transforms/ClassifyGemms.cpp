//===- ClassifyGemms.cpp - classify GEMMs by training dataflow --*- C++ -*-===//
//
// FP8 training treats the three GEMMs of a Linear layer differently (MS-AMP,
// Transformer Engine): forward operands are E4M3, output gradients E5M2, and
// activation x activation GEMMs (attention) stay in high precision by
// default. Which GEMM is which is not written in the graph, so this pass
// derives it from dataflow alone:
//
//  - the forward set is every value the loss depends on;
//  - a GEMM operand that is a parameter (seen through views) is its weight;
//  - with a weight, the GEMM is fprop when its result feeds the loss and
//    dgrad otherwise;
//  - without one, a backward GEMM whose result reaches a parameter's gradient
//    without passing through another GEMM (and has the parameter's size) is
//    that parameter's wgrad; other backward GEMMs that feed gradients are
//    attention_bwd, forward ones attention_fwd.
//
// The result is the `msamp.gemm` dictionary of docs/TrainStep.md 1 on each
// GEMM and `msamp.gemm_weight` on each parameter used as a GEMM weight.
// GEMMs that are not Linear GEMMs get an optimization remark saying why
// (MLIR 22 remark API: silent unless asked for with --remarks-filter=msamp).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/GemmMatcher.h"
#include "MSAMP/TrainStep/StepSignature.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPCLASSIFYGEMMS
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

constexpr StringLiteral kFprop = "fprop";
constexpr StringLiteral kDgrad = "dgrad";
constexpr StringLiteral kWgrad = "wgrad";
constexpr StringLiteral kAttentionFwd = "attention_fwd";
constexpr StringLiteral kAttentionBwd = "attention_bwd";
constexpr StringLiteral kOther = "other";

constexpr StringLiteral kWeight = "weight";
constexpr StringLiteral kActivation = "activation";
constexpr StringLiteral kGradOutput = "grad_output";

/// A generic that copies its one input, possibly permuted or with an
/// element-type cast: a view for the purpose of finding parameters.
bool isCopyLikeGeneric(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  if (!generic.getIndexingMapsArray()[0].isProjectedPermutation())
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || body.getOperations().size() > 2)
    return false;
  Value yielded = yield.getOperand(0);
  if (Operation *cast = yielded.getDefiningOp())
    if (isa<arith::ExtFOp, arith::TruncFOp>(cast))
      yielded = cast->getOperand(0);
  return yielded == body.getArgument(0);
}

/// Strips ops that show the same data under another shape, layout or
/// precision: a view of a parameter counts as the parameter, and a view of an
/// activation as the activation.
Value stripViews(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ExtractSliceOp, tensor::ReshapeOp, linalg::TransposeOp,
            linalg::BroadcastOp, msamp::DequantizeOp>(def))
      value = def->getOperand(0);
    else if (generic && isCopyLikeGeneric(generic))
      value = generic.getDpsInputs()[0];
    else
      break;
  }
  return value;
}

int64_t numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return -1;
  return shaped.getNumElements();
}

/// "lhs^T x rhs": how msamp.gemm will compute the result from lhs and rhs.
std::string describeForm(const GemmMatch &match) {
  return std::string(match.transposeLhs ? "lhs^T" : "lhs") + " x " +
         (match.transposeRhs ? "rhs^T" : "rhs");
}

/// "input 1 via transpose": which op input an operand is, and whether the
/// matcher looked through a transpose producer to find it.
std::string describeOperand(const GemmMatch &match, bool lhs) {
  unsigned index = lhs ? match.lhsOperandIndex : match.rhsOperandIndex;
  Value source = lhs ? match.lhs : match.rhs;
  Value operand = cast<linalg::LinalgOp>(match.op).getDpsInputs()[index];
  std::string s = "input " + std::to_string(index);
  if (source != operand)
    s += " via transpose";
  return s;
}

/// One function to classify, with its training roles: where the loss is,
/// which arguments are parameters, and which uses carry their gradients.
class Classifier {
public:
  Classifier(func::FuncOp func, SmallVector<Value> lossRoots,
             SmallVector<std::pair<OpOperand *, unsigned>> gradSinks)
      : func(func), gradSinks(std::move(gradSinks)) {
    for (auto [index, sink] : llvm::enumerate(this->gradSinks))
      sinkIndex.try_emplace(sink.first, index);
    computeForwardSet(lossRoots);
  }

  /// Classifies every GEMM of the function; updates `counts` (num-gemms,
  /// num-fprop, num-dgrad, num-wgrad, num-attention).
  void run(std::array<uint64_t, 5> &counts);

private:
  /// Parameter argument index of `value` seen through views, if any.
  std::optional<unsigned> paramOf(Value value) {
    auto arg = dyn_cast<BlockArgument>(stripViews(value));
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        getArgRole(func, arg.getArgNumber()) != kRoleParam)
      return std::nullopt;
    return arg.getArgNumber();
  }

  /// Forward set: every value the loss transitively depends on, including
  /// values captured by the regions of the ops on the way.
  void computeForwardSet(ArrayRef<Value> roots) {
    SmallVector<Value> work(roots.begin(), roots.end());
    llvm::DenseSet<Operation *> visited;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (!forward.insert(value).second)
        continue;
      Operation *def = value.getDefiningOp();
      if (!def) {
        // A region argument (scf.for iter_arg, linalg block argument): the
        // op that owns the region computes it from its operands.
        Operation *parent =
            cast<BlockArgument>(value).getOwner()->getParentOp();
        if (!parent || parent == func.getOperation())
          continue;
        def = parent;
      }
      if (!visited.insert(def).second)
        continue;
      llvm::append_range(work, def->getOperands());
      // What the op's regions yield (scf.for / scf.if results) is computed
      // inside them: a GEMM in a loop body feeds the loss through the yield.
      for (Region &region : def->getRegions())
        for (Block &block : region)
          if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
            llvm::append_range(work, block.back().getOperands());
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(def->getRegions(), captured);
      llvm::append_range(work, captured);
    }
  }

  /// Indices into gradSinks of the gradients `start` reaches. With
  /// `throughGemms` false, the walk stops at other GEMMs: a wgrad produces
  /// its gradient directly, while an attention backward GEMM reaches
  /// gradients only through the GEMMs of the projections around it.
  llvm::SmallSetVector<unsigned, 4> reachedGradients(Value start,
                                                     bool throughGemms) {
    llvm::SmallSetVector<unsigned, 4> reached;
    llvm::DenseSet<Value> seen;
    SmallVector<Value> work = {start};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (!seen.insert(value).second)
        continue;
      for (OpOperand &use : value.getUses()) {
        auto sink = sinkIndex.find(&use);
        if (sink != sinkIndex.end())
          reached.insert(sink->second);
        Operation *user = use.getOwner();
        if (!throughGemms && gemmOps.contains(user))
          continue;
        if (user->hasTrait<OpTrait::IsTerminator>()) {
          Operation *parent = user->getParentOp();
          if (parent && parent != func.getOperation())
            llvm::append_range(work, parent->getResults());
          continue;
        }
        llvm::append_range(work, user->getResults());
        for (Region &region : user->getRegions())
          for (Block &block : region)
            llvm::append_range(work, block.getArguments());
      }
    }
    return reached;
  }

  /// Whether `start` reaches any gradient, through GEMMs too: whether
  /// reachedGradients(start, /*throughGemms=*/true) is non-empty. That walk
  /// from each attention backward GEMM visited everything downstream of it
  /// (every earlier layer's backward), quadratic in the layers; instead the
  /// set of values that reach a gradient is computed once per function,
  /// walking reachedGradients' edges backwards from the gradient sinks.
  bool reachesAnyGradient(Value start) {
    if (!reachesGradient) {
      reachesGradient.emplace();
      SmallVector<Value> work;
      for (auto &sink : gradSinks)
        work.push_back(sink.first->get());
      auto addOperands = [&](Operation *op) {
        // reachedGradients follows no edge out of a terminator's operands
        // except to its parent's results (handled below).
        if (!op->hasTrait<OpTrait::IsTerminator>())
          llvm::append_range(work, op->getOperands());
      };
      while (!work.empty()) {
        Value value = work.pop_back_val();
        if (!reachesGradient->insert(value).second)
          continue;
        if (auto arg = dyn_cast<BlockArgument>(value)) {
          // A region argument is reached from any operand of its op.
          Operation *owner = arg.getOwner()->getParentOp();
          if (owner && owner != func.getOperation())
            addOperands(owner);
          continue;
        }
        Operation *def = value.getDefiningOp();
        addOperands(def);
        // A result is also reached from what the op's regions yield.
        for (Region &region : def->getRegions())
          for (Block &block : region)
            if (!block.empty() &&
                block.back().hasTrait<OpTrait::IsTerminator>())
              llvm::append_range(work, block.back().getOperands());
      }
    }
    return reachesGradient->contains(start);
  }

  func::FuncOp func;
  std::optional<llvm::DenseSet<Value>> reachesGradient;
  SmallVector<std::pair<OpOperand *, unsigned>> gradSinks;
  DenseMap<OpOperand *, unsigned> sinkIndex;
  llvm::DenseSet<Value> forward;
  llvm::DenseSet<Operation *> gemmOps;
};

void Classifier::run(std::array<uint64_t, 5> &counts) {
  const std::array<uint64_t, 5> before = counts;
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  StringRef funcName = func.getSymName();

  // Find every GEMM first: the wgrad test needs them all as barriers.
  SmallVector<GemmMatch> gemms;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::string reason;
    if (std::optional<GemmMatch> match = matchGemm(op, &reason)) {
      gemms.push_back(*match);
      gemmOps.insert(op);
    } else if (!reason.empty()) {
      remark::missed(
          op->getLoc(),
          remarkOptions("classify-gemms", "not-a-gemm").function(funcName))
          << remark::add("contraction not classified as a GEMM; it stays in "
                         "high precision")
          << remark::reason("{0}", reason);
    }
  });

  for (auto [index, match] : llvm::enumerate(gemms)) {
    Operation *op = match.op;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    Value result = op->getResult(0);

    // Operand roles, in the op's operand order.
    SmallVector<StringRef, 2> roles;
    SmallVector<unsigned, 2> weights;
    for (OpOperand *operand : linalgOp.getDpsInputOperands()) {
      Value value = operand->get();
      if (std::optional<unsigned> param = paramOf(value)) {
        roles.push_back(kWeight);
        weights.push_back(*param);
        continue;
      }
      Value base = stripViews(value);
      auto arg = dyn_cast<BlockArgument>(base);
      bool isGraphInput = arg && arg.getOwner() == &func.getBody().front();
      roles.push_back(forward.contains(base) || isGraphInput ? kActivation
                                                             : kGradOutput);
    }

    bool resultIsForward = forward.contains(result);
    StringRef kind;
    std::string layer, weight, why;
    if (weights.size() == 1) {
      kind = resultIsForward ? kFprop : kDgrad;
      weight = getArgName(func, weights.front()).str();
      layer = layerNameOf(weight);
    } else if (weights.size() > 1) {
      kind = kOther;
      why = "both operands are parameters (\"" +
            getArgName(func, weights[0]).str() + "\", \"" +
            getArgName(func, weights[1]).str() +
            "\"): not a Linear GEMM; kept in high precision";
    } else if (resultIsForward) {
      kind = kAttentionFwd;
      why = "activation x activation GEMM (attention): no operand is a "
            "parameter; kept in high precision unless fp8-attention=true";
    } else {
      // The first gradient, in result order, that this GEMM produces
      // directly and that has the size of its parameter.
      int64_t size = numElements(result.getType());
      // A batched wgrad computes one partial gradient per batch entry and
      // sums them afterwards: compare the size of one entry.
      auto shape = cast<ShapedType>(result.getType()).getShape();
      if (match.batched && size > 0 && shape[0] > 0)
        size /= shape[0];
      // Sink indices are in result order; the walk finds them in any order.
      SmallVector<unsigned> reached =
          llvm::to_vector(reachedGradients(result, /*throughGemms=*/false));
      llvm::sort(reached);
      for (unsigned sink : reached) {
        unsigned param = gradSinks[sink].second;
        if (size < 0 || numElements(func.getArgumentTypes()[param]) != size)
          continue;
        kind = kWgrad;
        layer = layerNameOf(getArgName(func, param));
        break;
      }
      if (kind.empty()) {
        if (reachesAnyGradient(result)) {
          kind = kAttentionBwd;
          why = "activation x activation GEMM (attention backward): no "
                "operand is a parameter and the result reaches parameter "
                "gradients only through other GEMMs; kept in high precision "
                "unless fp8-attention=true";
        } else {
          kind = kOther;
          why = "backward GEMM with no parameter operand that reaches no "
                "parameter gradient: not a Linear GEMM; kept in high "
                "precision";
        }
      }
    }
    if (layer.empty())
      layer = "gemm" + std::to_string(index);

    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("kind", b.getStringAttr(kind)),
        b.getNamedAttr("layer", b.getStringAttr(layer)),
        b.getNamedAttr("operand_roles", b.getStrArrayAttr(roles))};
    if (!weight.empty())
      entries.push_back(b.getNamedAttr("weight", b.getStringAttr(weight)));
    op->setAttr(kGemmAttr, b.getDictionaryAttr(entries));

    ++counts[0];
    if (kind == kFprop)
      ++counts[1];
    else if (kind == kDgrad)
      ++counts[2];
    else if (kind == kWgrad)
      ++counts[3];
    else if (kind == kAttentionFwd || kind == kAttentionBwd)
      ++counts[4];

    if (kind == kFprop || kind == kDgrad)
      func.setArgAttr(weights.front(), kGemmWeightAttr, b.getUnitAttr());
    if (!why.empty())
      remark::missed(op->getLoc(),
                     remarkOptions("classify-gemms", "not-a-linear-gemm")
                         .function(funcName))
          << remark::add("GEMM {0} classified {1}", layer, kind)
          << remark::reason("{0}", why);
    // The canonical form the FP8 lowering will use, so that the matcher's
    // view of every GEMM can be checked from the command line.
    remark::analysis(op->getLoc(),
                     remarkOptions("classify-gemms", "gemm").function(funcName))
        << remark::add("{0} layer {1}", kind, layer)
        << remark::metric("form", describeForm(match))
        << remark::metric("lhs", describeOperand(match, /*lhs=*/true))
        << remark::metric("rhs", describeOperand(match, /*lhs=*/false))
        << remark::metric("batched", match.batched)
        << remark::metric("zero_init", match.zeroInit);
  }
  // Pass statistics are compiled out of release builds of LLVM (Debian's
  // included), so the counts are also reported as a remark.
  remark::analysis(
      func.getLoc(),
      remarkOptions("classify-gemms", "gemm-summary").function(funcName))
      << remark::metric("num-gemms", counts[0] - before[0])
      << remark::metric("num-fprop", counts[1] - before[1])
      << remark::metric("num-dgrad", counts[2] - before[2])
      << remark::metric("num-wgrad", counts[3] - before[3])
      << remark::metric("num-attention", counts[4] - before[4]);
}

/// The forward_backward contract: the loss and the grad results.
std::optional<Classifier> forForwardBackward(func::FuncOp func) {
  if (func.isExternal())
    return std::nullopt;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret || ret.getNumOperands() != func.getNumResults())
    return std::nullopt;
  SmallVector<Value> loss;
  SmallVector<std::pair<OpOperand *, unsigned>> sinks;
  StepSignature signature(func); // indexes the arguments by name
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    StringRef role = getResultRole(func, i);
    if (role == kRoleLoss)
      loss.push_back(ret.getOperand(i));
    if (role != kRoleGrad)
      continue;
    if (std::optional<unsigned> param =
            signature.findArgument(getResultName(func, i), kRoleParam))
      sinks.emplace_back(&ret->getOpOperand(i), *param);
  }
  return Classifier(func, std::move(loss), std::move(sinks));
}

/// A compiled train step: the loss result, and the `grad` operands of the
/// optimizer ops, whose `param` operand names the parameter.
std::optional<Classifier> forTrainStep(func::FuncOp func) {
  if (func.isExternal())
    return std::nullopt;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret || ret.getNumOperands() != func.getNumResults())
    return std::nullopt;
  SmallVector<Value> loss;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (getResultRole(func, i) == kRoleLoss)
      loss.push_back(ret.getOperand(i));
  SmallVector<std::pair<OpOperand *, unsigned>> sinks;
  auto addSink = [&](Value param, OpOperand &grad) {
    auto arg = dyn_cast<BlockArgument>(stripViews(param));
    if (arg && arg.getOwner() == &func.getBody().front() &&
        getArgRole(func, arg.getArgNumber()) == kRoleParam)
      sinks.emplace_back(&grad, arg.getArgNumber());
  };
  func.walk([&](Operation *op) {
    if (auto adam = dyn_cast<msamp::AdamUpdateOp>(op))
      addSink(adam.getParam(), adam.getGradMutable());
    else if (auto sgd = dyn_cast<msamp::SGDUpdateOp>(op))
      addSink(sgd.getParam(), sgd.getGradMutable());
  });
  return Classifier(func, std::move(loss), std::move(sinks));
}

struct MSAMPClassifyGemmsPass
    : ::mlir::msamp::impl::MSAMPClassifyGemmsBase<MSAMPClassifyGemmsPass> {
  using Base::Base;
  void runOnOperation() override {
    // No forward_backward function (or train step) means nothing to
    // classify: the pass is a no-op, not an error, so it composes with
    // graphs that the contract check already rejected or never saw.
    std::array<uint64_t, 5> counts = {0, 0, 0, 0, 0};
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>(kKindAttr);
      if (!kind)
        continue;
      std::optional<Classifier> classifier;
      if (kind.getValue() == kForwardBackward)
        classifier = forForwardBackward(func);
      else if (kind.getValue() == kTrainStep)
        classifier = forTrainStep(func);
      if (classifier)
        classifier->run(counts);
    }
    numGemms += counts[0];
    numFprop += counts[1];
    numDgrad += counts[2];
    numWgrad += counts[3];
    numAttention += counts[4];
  }
};
} // namespace
