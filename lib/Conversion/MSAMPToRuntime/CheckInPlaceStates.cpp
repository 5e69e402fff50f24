//===- CheckInPlaceStates.cpp - state outputs are the state arguments -----===//
//
// convert-msamp-to-runtime lets an optimizer (or broadcast) call write a
// state argument directly: its output operand is a to_buffer of the
// argument, and the step then needs no copy of the argument before the call
// nor of the result back into it (RuntimeABI.md: "state updated in place").
// Whether the output really is the argument's buffer is one-shot
// bufferization's decision: it copies the argument first when something
// still reads the old value after the call. This pass, right after
// bufferization, checks every such output (the calls carry
// msamp.in_place_args) and, where the call wrote a copy, copies it into the
// argument at the end of the step, which is what the state contract asks
// for. It then drops the attribute. (A multi-tensor call's table entries
// are not call operands: the ops that take the buffers' addresses carry the
// attribute instead, AdamGroupToRuntime.cpp.)
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Conversion/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPCHECKINPLACESTATES
#include "MSAMP/Conversion/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

struct MSAMPCheckInPlaceStatesPass
    : ::mlir::msamp::impl::MSAMPCheckInPlaceStatesBase<
          MSAMPCheckInPlaceStatesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    Operation *terminator = entry.getTerminator();
    bool failedCheck = false;
    func.walk([&](Operation *call) {
      auto pairs =
          call->getAttrOfType<DenseI64ArrayAttr>(msamp::kInPlaceArgsAttr);
      if (!pairs)
        return;
      call->removeAttr(msamp::kInPlaceArgsAttr);
      ArrayRef<int64_t> p = pairs.asArrayRef();
      for (size_t i = 0; i + 1 < p.size(); i += 2) {
        if (p[i] >= call->getNumOperands() ||
            p[i + 1] >= func.getNumArguments()) {
          call->emitError("msamp.in_place_args names operand ")
              << p[i] << " and argument " << p[i + 1] << ", which do not exist";
          failedCheck = true;
          return;
        }
        Value buffer = call->getOperand(p[i]);
        while (auto cast = buffer.getDefiningOp<memref::CastOp>())
          buffer = cast.getSource();
        BlockArgument arg = func.getArgument(p[i + 1]);
        if (buffer == arg)
          continue;
        if (!isa<MemRefType>(buffer.getType()) ||
            buffer.getParentBlock() != &entry) {
          call->emitError("in-place output for argument #")
              << arg.getArgNumber()
              << " was bufferized into a buffer this pass cannot copy back";
          failedCheck = true;
          return;
        }
        OpBuilder b(terminator);
        memref::CopyOp::create(b, call->getLoc(), buffer, arg);
        ++numCopiedBack;
        remark::analysis(
            call->getLoc(),
            msamp::remarkOptions("check-in-place-states", "state-copied-back"))
            << remark::add("state argument #{0} is written by a copy and "
                           "copied back at the end of the step: it is still "
                           "read after the call that updates it",
                           static_cast<int64_t>(arg.getArgNumber()));
      }
    });
    if (failedCheck)
      signalPassFailure();
  }
};

} // namespace
