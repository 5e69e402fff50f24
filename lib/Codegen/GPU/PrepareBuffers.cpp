//===- PrepareBuffers.cpp - buffers a GPU kernel can read ---------*- C++
//-*-===//
//
// msamp-gpu-stage-globals: memref.get_global -> alloc + copy, so constants
// live in the (device-accessible) buffers of the step, not in the host image
// (except a location text that only the host's index check reads).
// msamp-gpu-copies-to-linalg: ranked memref.copy -> linalg.copy, so copies
// become kernels.
// msamp-gpu-parallel-dims-outer: parallel iterators before reductions, so a
// reduction over an outer dimension is one kernel, not a host loop of
// launches.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/GPU/CallSites.h"
#include "MSAMP/Codegen/GPU/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUSTAGEGLOBALS
#define GEN_PASS_DEF_MSAMPGPUCOPIESTOLINALG
#define GEN_PASS_DEF_MSAMPGPUPARALLELDIMSOUTER
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// Whether every use of `value` (through casts) is the location text of
/// msamp_rt_check_computed_index, which the runtime keeps on the host to
/// word the error (its indices are checked on the stream). Such a
/// global needs no staging: staged, its copy was a kernel reading the host
/// image, an illegal address on the H100 (compute-sanitizer, kit run of
/// e986958).
bool onlyHostCallUses(Value value) {
  for (Operation *user : value.getUsers()) {
    if (auto call = dyn_cast<func::CallOp>(user)) {
      // The entry point: a typed declaration (`..._N`) names it in an
      // attribute until msamp-finalize-runtime-calls renames the call.
      StringRef entry = call.getCallee();
      if (auto decl = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              call, call.getCalleeAttr()))
        if (auto symbol =
                decl->getAttrOfType<StringAttr>(msamp::kRuntimeSymbolAttr))
          entry = symbol.getValue();
      if (entry == "msamp_rt_check_computed_index")
        continue;
      return false;
    }
    if (isa<memref::CastOp, UnrealizedConversionCastOp>(user) &&
        user->getNumResults() == 1 && onlyHostCallUses(user->getResult(0)))
      continue;
    return false;
  }
  return true;
}

/// Each global a function reads, staged once: a function no other calls
/// (the step) copies it into a buffer at its entry; a function others call
/// (a layer outlined before bufferization) takes that buffer as a new last
/// argument, which every call passes on from its caller. A layer's
/// constants are then the step's one copy each, as in the inline step, not
/// a copy per constant per call.
class GlobalStager {
public:
  explicit GlobalStager(ModuleOp module)
      : symbols(module), callsOf(msamp::collectCallSites(module, symbols)) {}

  /// The staged buffer of `read`'s global (identity layout, static shape)
  /// for `read`, which is in `func` or in a function it calls.
  Value stagedIn(func::FuncOp func, memref::GetGlobalOp read) {
    auto calls = callsOf.find(func);
    const bool isRoot = calls == callsOf.end() || func.isPublic();
    // A read of the step itself is staged where it is, as it always was.
    if (isRoot && read->getParentOfType<func::FuncOp>() == func) {
      OpBuilder b(read);
      return stage(b, read);
    }
    auto key =
        std::make_pair(func.getOperation(), read.getNameAttr().getAttr());
    if (Value known = staged.lookup(key))
      return known;
    if (isRoot) {
      OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
      return staged[key] = stage(b, read);
    }
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, read.getType(), {}, read.getLoc()))) {
      func.emitError("msamp-gpu-stage-globals: cannot add an argument for "
                     "the staged copy of ")
          << read.getNameAttr();
      return {};
    }
    // Known before the callers are asked: a function that calls itself
    // passes its own argument on.
    Value argument = staged[key] = func.getArgument(index);
    for (func::CallOp call : calls->second) {
      Value outer = stagedIn(call->getParentOfType<func::FuncOp>(), read);
      if (!outer)
        return {};
      call->insertOperands(call->getNumOperands(), outer);
    }
    return argument;
  }

private:
  /// A new buffer at `b` holding a copy of `read`'s global (a new read of
  /// it: the copy alone reads the global).
  static Value stage(OpBuilder &b, memref::GetGlobalOp read) {
    auto alloc = memref::AllocOp::create(b, read.getLoc(), read.getType(),
                                         b.getI64IntegerAttr(64));
    memref::CopyOp::create(b, read.getLoc(), b.clone(*read)->getResult(0),
                           alloc.getResult());
    return alloc.getResult();
  }

  SymbolTable symbols;
  msamp::CallSites callsOf;
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> staged;
};

struct StageGlobalsPass
    : msamp::impl::MSAMPGPUStageGlobalsBase<StageGlobalsPass> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> reads;
    getOperation().walk([&](memref::GetGlobalOp op) {
      if (!onlyHostCallUses(op.getResult()))
        reads.push_back(op);
    });
    GlobalStager stager(getOperation());
    for (memref::GetGlobalOp read : reads) {
      auto type = read.getType();
      if (!type.getLayout().isIdentity() || !type.hasStaticShape()) {
        read.emitError("msamp-gpu-stage-globals: only static identity-layout "
                       "globals can be staged");
        return signalPassFailure();
      }
      Value buffer =
          stager.stagedIn(read->getParentOfType<func::FuncOp>(), read);
      if (!buffer)
        return signalPassFailure();
      // Every user reads the copy; the copy alone reads the global.
      read.getResult().replaceAllUsesWith(buffer);
      read.erase();
    }
  }
};

struct CopiesToLinalgPass
    : msamp::impl::MSAMPGPUCopiesToLinalgBase<CopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target || source.getRank() == 0 ||
          source.getShape() != target.getShape() ||
          source.getElementType() != target.getElementType())
        continue;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

struct ParallelDimsOuterPass
    : msamp::impl::MSAMPGPUParallelDimsOuterBase<ParallelDimsOuterPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (unsigned i = 0; i < iterators.size(); ++i)
        if (iterators[i] == utils::IteratorType::parallel)
          order.push_back(i);
      const size_t numParallel = order.size();
      for (unsigned i = 0; i < iterators.size(); ++i)
        if (iterators[i] != utils::IteratorType::parallel)
          order.push_back(i);
      // Already parallel-first (or nothing to run in parallel).
      if (numParallel == 0 ||
          llvm::all_of(llvm::enumerate(order),
                       [](auto pair) { return pair.index() == pair.value(); }))
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // stays as it is: correct, only slower
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("msamp-gpu-parallel-dims-outer: cannot interchange");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
