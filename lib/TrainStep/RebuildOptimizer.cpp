//===- RebuildOptimizer.cpp - optimizer ops with operands replaced --------===//

#include "MSAMP/TrainStep/RebuildOptimizer.h"
#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"

using namespace mlir;
using namespace mlir::msamp;

/// `override` if set, else the op's current (value, scale).
static ScaledOperand pick(const std::optional<ScaledOperand> &override,
                          Value value, Value scale) {
  return override ? *override : ScaledOperand{value, scale};
}

Operation *mlir::msamp::rebuildOptimizerOp(OpBuilder &b, Operation *op,
                                           const OptimizerOverrides &o) {
  b.setInsertionPoint(op);
  Operation *newOp;
  if (auto adam = dyn_cast<AdamUpdateOp>(op)) {
    ScaledOperand param = pick(o.param, adam.getParam(), adam.getParamScale());
    ScaledOperand grad = pick(o.grad, adam.getGrad(), adam.getGradScaleInv());
    ScaledOperand m = pick(o.expAvg, adam.getExpAvg(), adam.getExpAvgScale());
    ScaledOperand v =
        pick(o.expAvgSq, adam.getExpAvgSq(), adam.getExpAvgSqScale());
    newOp = AdamUpdateOp::create(
        b, adam.getLoc(), param.value.getType(), typeOrNull(param.scale),
        m.value.getType(), typeOrNull(m.scale), v.value.getType(),
        typeOrNull(v.scale), param.value, param.scale, grad.value, grad.scale,
        m.value, m.scale, v.value, v.scale, adam.getLr(), adam.getStep(),
        adam.getBeta1Attr(), adam.getBeta2Attr(), adam.getEpsAttr(),
        adam.getWeightDecayAttr(), adam.getDecoupledAttr(),
        adam.getAdamModeAttr());
  } else {
    auto sgd = cast<SGDUpdateOp>(op);
    assert(!o.expAvg && !o.expAvgSq && "msamp.sgd_update has no moments");
    ScaledOperand param = pick(o.param, sgd.getParam(), sgd.getParamScale());
    ScaledOperand grad = pick(o.grad, sgd.getGrad(), sgd.getGradScaleInv());
    newOp = SGDUpdateOp::create(
        b, sgd.getLoc(), param.value.getType(), typeOrNull(param.scale),
        typeOrNull(sgd.getMomentumBuffer()), param.value, param.scale,
        grad.value, grad.scale, sgd.getMomentumBuffer(), sgd.getLr(),
        sgd.getStep(), sgd.getMomentumAttr(), sgd.getWeightDecayAttr(),
        sgd.getNesterovAttr());
  }
  newOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  return newOp;
}
