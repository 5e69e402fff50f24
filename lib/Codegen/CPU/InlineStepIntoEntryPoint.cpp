//===- InlineStepIntoEntryPoint.cpp - --msamp-inline-step-into-entry-point ===//
//
// The runtime calls the step through one symbol, msamp_train_step_packed
// (one pointer to the table of descriptor pointers), which called
// _mlir_ciface_train_step (one pointer per descriptor), which called
// @train_step (every descriptor field a scalar: 11,453 parameters at 24
// layers). At -O0 a parameter or call argument beyond the registers is a
// stack slot, and LLVM lowers all of a function's incoming arguments, or all
// of a call's outgoing ones, as one SelectionDAG: its code generation grew
// faster than the count (about 2.5x per doubling), and the count grows with
// the state, i.e. with depth (issue 19). Both bodies are moved into the
// packed entry point instead, which takes one pointer: the step's
// instructions are the same, in the same order, without the two calls and
// without the descriptor fields that nothing reads.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPINLINESTEPINTOENTRYPOINT
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

constexpr StringLiteral kPackedEntryPoint = "msamp_train_step_packed";

/// The one call of `callee` in `caller`, if `callee` is a definition that
/// returns nothing and that call is its only use in `module` (its control
/// flow, whatever it is, moves as it is).
LLVM::CallOp soleCall(ModuleOp module, LLVM::LLVMFuncOp caller,
                      LLVM::LLVMFuncOp callee) {
  if (!callee || callee.isExternal() || callee.isVarArg() ||
      !isa<LLVM::LLVMVoidType>(callee.getFunctionType().getReturnType()))
    return {};
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(callee, module);
  if (!uses || !llvm::hasSingleElement(*uses))
    return {};
  auto call = dyn_cast<LLVM::CallOp>(uses->begin()->getUser());
  if (!call || call->getParentOfType<LLVM::LLVMFuncOp>() != caller)
    return {};
  return call;
}

/// Moves the body of `callee` into its caller in place of `call` (each
/// return becomes a branch to what followed the call) and erases `callee`.
void inlineAndErase(LLVM::CallOp call, LLVM::LLVMFuncOp callee) {
  Block *callBlock = call->getBlock();
  Block *after = callBlock->splitBlock(std::next(call->getIterator()));
  Block *entry = &callee.getBody().front();
  callBlock->getParent()->getBlocks().splice(after->getIterator(),
                                             callee.getBody().getBlocks());
  for (auto [argument, operand] :
       llvm::zip_equal(entry->getArguments(), call.getArgOperands()))
    argument.replaceAllUsesWith(operand);
  entry->eraseArguments(0, entry->getNumArguments());
  for (Block &block :
       llvm::make_range(entry->getIterator(), after->getIterator()))
    if (auto ret = dyn_cast<LLVM::ReturnOp>(block.getTerminator())) {
      OpBuilder builder(ret);
      LLVM::BrOp::create(builder, ret.getLoc(), ValueRange(), after);
      ret.erase();
    }
  OpBuilder builder(call);
  LLVM::BrOp::create(builder, call.getLoc(), ValueRange(), entry);
  call.erase();
  callee.erase();
}

struct MSAMPInlineStepIntoEntryPointPass
    : ::mlir::msamp::impl::MSAMPInlineStepIntoEntryPointBase<
          MSAMPInlineStepIntoEntryPointPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto packed = module.lookupSymbol<LLVM::LLVMFuncOp>(kPackedEntryPoint);
    if (!packed || packed.isExternal())
      return markAllAnalysesPreserved();
    // Outermost first: the C interface into the entry point, then the
    // step into what was the C interface.
    bool changed = false;
    for (std::string name : {("_mlir_ciface_" + msamp::kTrainStep).str(),
                             msamp::kTrainStep.str()}) {
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      LLVM::CallOp call = soleCall(module, packed, callee);
      if (!call)
        break;
      inlineAndErase(call, callee);
      ++numInlined;
      changed = true;
    }
    if (!changed)
      return markAllAnalysesPreserved();
    // The C interface unpacked every field of every descriptor for the
    // step, which reads few of them (a bare pointer, a scalar): the rest
    // are loads and extractvalues without uses, over half of the entry
    // point at O2, which the -O0 code generator would still translate and
    // select. Erased last first, so that a dead value's operands are dead
    // by the time they are visited.
    SmallVector<Operation *> body;
    packed.walk([&](Operation *op) {
      if (op != packed)
        body.push_back(op);
    });
    for (Operation *op : llvm::reverse(body))
      if (isOpTriviallyDead(op))
        op->erase();
  }
};

} // namespace
