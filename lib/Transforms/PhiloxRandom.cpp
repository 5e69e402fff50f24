//===- PhiloxRandom.cpp - the step's own random numbers ---------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// torch-mlir draws dropout masks from a global seed that the graph advances
// on every call (an LCG in an ml_program global). Such a seed lives outside
// the step's state: it is not checkpointed, it is the same on every
// data-parallel rank, and its numbers depend on how many random ops ran
// before. This pass makes the randomness a pure function of step state
// instead: every draw becomes msamp.random_uniform keyed by (rng.seed, step
// counter, rank, op id, element), which is what makes a resumed run
// bit-identical, gives every rank its own masks, and lets the CPU and GPU
// targets compute the same numbers (docs/Randomness.md).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Dialect/MSAMPOps.h"
#include "MSAMP/TrainStep/TrainStep.h"
#include "MSAMP/Transforms/Passes.h"
#include "MSAMP/Transforms/TorchRandom.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPPHILOXRANDOM
#include "MSAMP/Transforms/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;
using namespace mlir::msamp;

namespace {

constexpr StringLiteral kPassName = "--msamp-philox-random";
constexpr StringLiteral kSeedName = "rng.seed";

struct MSAMPPhiloxRandomPass
    : ::mlir::msamp::impl::MSAMPPhiloxRandomBase<MSAMPPhiloxRandomPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step = getTrainStepOrError(module, kPassName);
    if (!step)
      return signalPassFailure();
    if (failed(verifyTorchSeedGlobals(module)))
      return signalPassFailure();
    FailureOr<SmallVector<TorchUniform>> uniforms = matchTorchRandomness(step);
    if (failed(uniforms))
      return signalPassFailure();
    if (!uniforms->empty() && failed(rewrite(module, step, *uniforms)))
      return signalPassFailure();
    // The seed global is dead once its loads and stores are gone.
    for (auto global :
         llvm::make_early_inc_range(module.getOps<ml_program::GlobalOp>()))
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
  }

  LogicalResult rewrite(ModuleOp module, func::FuncOp step,
                        ArrayRef<TorchUniform> uniforms) {
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    std::optional<unsigned> stepIndex = findArgument(step, "step", kRoleStep);
    if (!stepIndex)
      return step.emitError(kPassName)
             << ": @train_step has no step counter (role \"step\")";
    if (findArgument(step, kSeedName))
      return step.emitError(kPassName)
             << ": @train_step already has an argument named '" << kSeedName
             << "' (run the pass once)";
    Value stepCounter = step.getArgument(*stepIndex);
    auto scalarI64 = RankedTensorType::get({}, b.getI64Type());
    Value seed =
        addStateArgument(step, scalarI64, kRoleRngState, kSeedName, kInitSeed);
    Value rank;
    for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
      if (getArgRole(step, i) == kRoleRank)
        rank = step.getArgument(i);
    if (!rank)
      rank = addStateArgument(step, RankedTensorType::get({}, b.getI32Type()),
                              kRoleRank, "rank", /*init=*/"");
    updateFunctionType(step);

    int64_t id = 0;
    for (const TorchUniform &u : uniforms) {
      if (linalg::GenericOp generic = u.generic) {
        b.setInsertionPoint(generic);
        auto draw = RandomUniformOp::create(
            b, generic.getLoc(), generic->getResult(0).getType(), seed,
            stepCounter, rank, b.getI64IntegerAttr(id++),
            b.getF64FloatAttr(u.low), b.getF64FloatAttr(u.high));
        generic->getResult(0).replaceAllUsesWith(draw.getResult());
        generic.erase();
      }
    }
    // Each chain once (several draws may share one), last op first.
    llvm::DenseSet<Operation *> erased;
    for (const TorchUniform &u : uniforms)
      for (Operation *op : llvm::reverse(u.seedOps))
        if (erased.insert(op).second)
          op->erase();
    return success();
  }
};

} // namespace
