//===- OutlineRepeatedBlocks.cpp - one function per repeated layer --------===//
//
// An N-layer model's @train_step is N copies of each layer's forward, backward
// and optimizer code in one function, and one-shot bufferization, the
// deallocation simplification and LLVM -O3 grew faster than linearly in that
// size (docs/Benchmarks.md, issue #19). Right before bufferization this pass
// finds the step's tandem repeats (a run of top-level ops followed by copies
// of itself that differ only in the values they read from outside) and
// outlines each copy as a call of one shared function, so the rest of the
// lowering sees a layer once and the step is a short sequence of calls.
//
// Detection (TandemRepeats.h) works on a key per top-level op (name,
// attributes, properties, types, the ops nested in it), not on text: at each
// position the candidate periods are the distances to the later occurrences of
// the same window of keys, and the longest common prefix of the two suffixes
// (prefix hashes and binary search) says how many copies follow. The keys
// ignore data flow, so every copy is then checked exactly: it is cloned into a
// candidate function (what it reads from outside as arguments, constants cloned
// in, what is used after it as results), and only copies whose functions are
// the same IR (structuralFingerprint: what comparing their generic printed
// form decided, without printing) share a function. Each scan position
// is visited once and every op is fingerprinted at most once: linear apart
// from the logarithmic searches.
//
// What stays in the step: the buffers of state arguments that are updated
// in place (the to_buffer of an argument, linked through a memref value to a
// runtime call with msamp.in_place_args or a materialize_in_destination) and
// the materialize_in_destination writes of new values into them. The
// updates themselves move into the functions, which take the argument's
// buffer as a memref argument; the call gets msamp.in_place_args naming its
// own operand, so msamp-check-in-place-states checks the buffer the call is
// given, and one-shot bufferization sees the argument's buffer in the step
// as before. A copy's run crosses such a buffer (the ops before it move
// into the call after it) when no other op of the copy before it reads the
// argument: a read moved after the writable to_buffer would be a conflict,
// and bufferization would update a copy. Otherwise the buffer splits the
// copy into runs, one function per run index. Constants and static
// tensor.empty ops are cloned into the functions and never split a run.
// Runs that would return a memref, or take one that is not such an
// argument buffer, stay inline.
//
// On buffers (on-buffers: after deallocation on the CPU, after the static
// arena on the GPU, msamp-gpu-outline-layers) nothing stays in the step. A
// run first takes in clones of the views, casts and buffer addresses
// outside it that it reads, so that a function never takes an unranked
// buffer or an address where its copies could take the buffer; such an op
// whose result is used after the run is rebuilt after the call instead of
// returned; and a run of pure ops only stays inline. The step's stack
// buffers (a multi-tensor call's table) move to its entry first, so that
// each copy takes its own as an argument: a copy whose period starts
// between a table's stores and its call (te's per-layer Adam calls on the
// GPU) returned its table to the next call, a stack buffer of a frame that
// was gone.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferViews.h"
#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Codegen/TandemRepeats.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <set>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPOUTLINEREPEATEDBLOCKS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// A constant, or a tensor.empty of a static shape: it holds no data, so a
/// function makes its own instead of taking it as an argument (an argument
/// would also be one more use of the step's shared empty, and
/// msamp-split-shared-inits groups those uses: the groups, and with them
/// bufferization's buffer reuse, would then depend on the number of
/// layers).
///
/// Also a fill of a constant into such an empty (a tensor of one value, the
/// start of a reduction): the function fills its own, so that the
/// reduction reads a fill of its own function, not an argument (the GPU
/// pipeline's reductions then start from the constant instead of copying
/// the caller's buffer: msamp-gpu-reduction-inits).
bool isClonableConstant(Operation *op) {
  if (!op)
    return false;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
           llvm::all_of(fill->getOperands(), [](Value operand) {
             return isClonableConstant(operand.getDefiningOp());
           });
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         (op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op));
}

/// Clones the clonable constant `value` and what it is made of (a fill's
/// constant and empty) into `builder`'s block, once each.
void cloneConstant(OpBuilder &builder, Value value, IRMapping &mapping) {
  if (mapping.contains(value))
    return;
  Operation *op = value.getDefiningOp();
  for (Value operand : op->getOperands())
    cloneConstant(builder, operand, mapping);
  builder.clone(*op, mapping);
}

/// Key of a top-level op: everything but the values it reads. A pinned op
/// (an argument's buffer) stays in the step, so only its kind and types
/// matter.
uint64_t structuralKey(Operation *op, bool pinned) {
  if (!pinned)
    return msamp::structuralKey(op);
  return static_cast<uint64_t>(
      llvm::hash_combine(pinned, op->getName(),
                         llvm::hash_combine_range(op->getOperandTypes().begin(),
                                                  op->getOperandTypes().end()),
                         llvm::hash_combine_range(op->getResultTypes().begin(),
                                                  op->getResultTypes().end())));
}

/// A run of ops of one copy that becomes one call.
struct Run {
  SmallVector<Operation *> ops;
};

struct MSAMPOutlineRepeatedBlocksPass
    : ::mlir::msamp::impl::MSAMPOutlineRepeatedBlocksBase<
          MSAMPOutlineRepeatedBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    step = msamp::findFunctionOfKind(module, msamp::kTrainStep);
    if (!step || step.isExternal())
      return markAllAnalysesPreserved();
    body = &step.getBody().front();
    if (onBuffers)
      hoistStackBuffers();
    for (Operation &op : body->without_terminator()) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    // On buffers there is nothing to keep in the step: bufferization and
    // deallocation are done, and a buffer is a pointer like any other value.
    if (!onBuffers)
      markPinned();
    SmallVector<uint64_t> keys;
    for (Operation *op : ops)
      keys.push_back(structuralKey(op, pinned.contains(op)));

    SymbolTable symbols(module);
    insertionPoint = std::next(step->getIterator());
    scan(keys, symbols);
    // Blocks no second copy matched stay inline.
    for (auto &entry : byFingerprint)
      if (!entry.second.inModule)
        entry.second.function.erase();
    // The functions have their own copies of the constants and empties the
    // outlined runs read; the originals left unused in the step (about 40%
    // of its ops at O2) would be carried through bufferization until a
    // canonicalization removed them.
    // Last first: a fill goes before the constant and empty it reads.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
      if (isClonableConstant(&op) && op.use_empty())
        op.erase();

    numCalls += calls;
    numFunctions += functions;
    remark::passed(
        step.getLoc(),
        msamp::remarkOptions("outline-repeated-blocks", "blocks-outlined"))
        << remark::add("{0} repeated blocks of @{1} ({2} ops) outlined as "
                       "calls of {3} functions ({4} calls deduplicated: "
                       "structurally identical to an earlier block)",
                       calls, step.getSymName(), outlinedOps, functions,
                       calls - functions);
  }

  /// The state updates and every op that shares a memref with one.
  void markPinned() {
    llvm::EquivalenceClasses<Operation *> memrefLinked;
    for (Operation *op : ops) {
      memrefLinked.insert(op);
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          if (!isa<BaseMemRefType>(operand.getType()))
            continue;
          Operation *def = operand.getDefiningOp();
          Operation *top = def ? body->findAncestorOpInBlock(*def) : nullptr;
          if (top && top != op)
            memrefLinked.unionSets(op, top);
        }
      });
    }
    llvm::DenseSet<Operation *> seedLeaders;
    for (Operation *op : ops)
      if (isStateUpdate(op))
        seedLeaders.insert(memrefLinked.getLeaderValue(op));
    // Of each linked set only the buffers of the step's arguments and the
    // writes of new values into them stay: the in-place updates move into
    // the functions, which take those buffers as memref arguments (the call
    // then carries msamp.in_place_args). A materialize_in_destination of a
    // value computed in place is no copy in the step, where bufferization
    // sees that the value is the argument's buffer; in a function it would
    // copy one argument into another.
    // Position of the first buffer of each argument that stays.
    llvm::DenseMap<Value, int64_t> firstKept;
    for (Operation *op : ops)
      if (seedLeaders.contains(memrefLinked.getLeaderValue(op)) &&
          (isArgumentBuffer(op) ||
           isa<bufferization::MaterializeInDestinationOp>(op))) {
        pinned.insert(op);
        if (isArgumentBuffer(op))
          firstKept.try_emplace(cast<bufferization::ToBufferOp>(op).getTensor(),
                                position.lookup(op));
      }
    // The argument's earlier buffers stay too: a read of its old value
    // through a to_buffer of its own (a multi-tensor call's table holds the
    // address it reads and the one it writes) would otherwise keep the
    // writable buffer from being crossed (isCrossable), and split the copy
    // into runs that each store into a table another run allocates. (A
    // read after the first kept buffer moves with its run, as before.)
    for (Operation *op : ops) {
      if (!isArgumentBuffer(op))
        continue;
      auto it = firstKept.find(cast<bufferization::ToBufferOp>(op).getTensor());
      if (it != firstKept.end() && position.lookup(op) < it->second)
        pinned.insert(op);
    }
  }

  /// The step's static stack buffers at its entry, in their order (LLVM
  /// gives each its slot in the frame wherever it is defined).
  void hoistStackBuffers() {
    Operation *last = nullptr;
    for (auto alloca :
         llvm::make_early_inc_range(body->getOps<memref::AllocaOp>())) {
      if (alloca->getNumOperands() != 0)
        continue; // dynamic: its sizes are defined where it is
      if (last)
        alloca->moveAfter(last);
      else
        alloca->moveBefore(body, body->begin());
      last = alloca;
    }
  }

  /// A to_buffer of one of the step's arguments: the one buffer an in-place
  /// update may write, so bufferization must see it in the step.
  bool isArgumentBuffer(Operation *op) {
    auto toBuffer = dyn_cast<bufferization::ToBufferOp>(op);
    if (!toBuffer)
      return false;
    auto arg = dyn_cast<BlockArgument>(toBuffer.getTensor());
    return arg && arg.getOwner() == body;
  }

  /// Whether a run may cross the argument buffer `op`: the run's ops
  /// before it then run after it, in the call that ends the run, and take
  /// it as an argument. Bufferization sees a writable to_buffer as a write
  /// of the argument, so no op of the copy [begin, op) other than a buffer
  /// that stays may read the argument (a read moved after the write would
  /// make the buffer a copy).
  bool isCrossable(Operation *op, int64_t begin) {
    if (!isArgumentBuffer(op))
      return false;
    int64_t at = position.lookup(op);
    Value arg = cast<bufferization::ToBufferOp>(op).getTensor();
    // `position` numbers the step as it was: ops before the copies may have
    // become calls since (not numbered, or on a recycled op's number), and
    // all of those are before `begin`, where a read is no concern.
    return llvm::all_of(arg.getUsers(), [&](Operation *user) {
      Operation *top = body->findAncestorOpInBlock(*user);
      auto it = top ? position.find(top) : position.end();
      return it == position.end() || it->second < begin || it->second > at ||
             pinned.contains(top);
    });
  }

  /// The msamp.in_place_args of the call that replaces `run`: each in-place
  /// operand of an op in the run (through casts in the run) is one of the
  /// `arguments`, and the pair names that argument's position instead.
  /// Empty if the run updates nothing in place; failure if an in-place
  /// operand is not an argument.
  FailureOr<SmallVector<int64_t>>
  inPlacePairs(const Run &run, const llvm::DenseSet<Operation *> &inRun,
               ArrayRef<Value> arguments) {
    SmallVector<int64_t> pairs;
    bool failed = false;
    for (Operation *op : run.ops)
      op->walk([&](Operation *nested) {
        auto attr =
            nested->getAttrOfType<DenseI64ArrayAttr>(msamp::kInPlaceArgsAttr);
        if (!attr)
          return;
        ArrayRef<int64_t> p = attr.asArrayRef();
        for (size_t k = 0; k + 1 < p.size(); k += 2) {
          if (p[k] >= nested->getNumOperands()) {
            failed = true;
            return;
          }
          Value buffer = nested->getOperand(p[k]);
          while (auto cast = buffer.getDefiningOp<memref::CastOp>()) {
            if (!inRun.contains(cast))
              break;
            buffer = cast.getSource();
          }
          const Value *it = llvm::find(arguments, buffer);
          if (it == arguments.end()) {
            failed = true;
            return;
          }
          pairs.push_back(it - arguments.begin());
          pairs.push_back(p[k + 1]);
        }
      });
    if (failed)
      return failure();
    return pairs;
  }

  bool isStateUpdate(Operation *op) {
    if (op->hasAttr(msamp::kInPlaceArgsAttr) ||
        isa<bufferization::MaterializeInDestinationOp>(op))
      return true;
    auto toBuffer = dyn_cast<bufferization::ToBufferOp>(op);
    return toBuffer && !toBuffer.getReadOnly() &&
           isa<BlockArgument>(toBuffer.getTensor());
  }

  void scan(ArrayRef<uint64_t> keys, SymbolTable &symbols) {
    // A copy made of copies of a shorter block (a chain of equal ops, a
    // few per layer) holds a number of layers that depends on the depth:
    // its function, and the GPU kernels merged around its calls, would
    // differ from one depth to the next. It stays inline.
    for (msamp::TandemRepeat repeat : msamp::findLayerRepeats(keys, minPeriod))
      outlineCopies(repeat.start, repeat.period, repeat.copies, symbols);
  }

  /// Outlines the runs of copies [start + c * period, +period), c < copies.
  void outlineCopies(int64_t start, int64_t period, int64_t copies,
                     SymbolTable &symbols) {
    // Runs: maximal ranges of unpinned ops; constants neither join nor end
    // one, nor do argument buffers that every copy's run may cross. The
    // keys being equal, every copy has the same runs.
    SmallVector<bool> crossable(period, true);
    for (int64_t c = 0; c < copies; ++c)
      for (int64_t offset = 0; offset < period; ++offset)
        if (crossable[offset] && pinned.contains(ops[start + offset]))
          crossable[offset] =
              isCrossable(ops[start + c * period + offset], start + c * period);
    SmallVector<std::pair<int64_t, int64_t>> runRanges; // offset, end
    int64_t runStart = -1;
    for (int64_t offset = 0; offset <= period; ++offset) {
      Operation *op = offset < period ? ops[start + offset] : nullptr;
      bool stays = op && pinned.contains(op);
      bool ends = !op || (stays && !crossable[offset]);
      if (ends) {
        if (runStart >= 0)
          runRanges.push_back({runStart, offset});
        runStart = -1;
      } else if (runStart < 0 && !isClonableConstant(op) && !stays) {
        runStart = offset;
      }
    }
    for (auto [begin, end] : runRanges) {
      SmallVector<Run> runs(copies);
      for (int64_t c = 0; c < copies; ++c)
        for (int64_t offset = begin; offset < end; ++offset) {
          Operation *op = ops[start + c * period + offset];
          if (!isClonableConstant(op) && !pinned.contains(op))
            runs[c].ops.push_back(op);
        }
      if (static_cast<int64_t>(runs[0].ops.size()) < minRunOps)
        continue;
      // On buffers a run of pure ops (index arithmetic a caller set up for
      // the layers) is no work to share: a function would only return it.
      if (onBuffers && llvm::all_of(runs[0].ops, isPure))
        continue;
      outlineRuns(runs, symbols);
    }
  }

  /// Values the run reads from outside it, in first-use order.
  llvm::SetVector<Value> captured(const Run &run,
                                  const llvm::DenseSet<Operation *> &inRun) {
    llvm::SetVector<Value> values;
    for (Operation *op : run.ops)
      op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def)
            def = cast<BlockArgument>(operand).getOwner()->getParentOp();
          Operation *top = body->findAncestorOpInBlock(*def);
          if (!top || !inRun.contains(top))
            values.insert(operand);
        }
      });
    return values;
  }

  /// Offsets (op index in the run, result number) of the results used after
  /// the run.
  void usedOutside(const Run &run, const llvm::DenseSet<Operation *> &inRun,
                   std::set<std::pair<int64_t, int64_t>> &offsets) {
    for (auto [index, op] : llvm::enumerate(run.ops))
      for (OpResult result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!inRun.contains(body->findAncestorOpInBlock(*user))) {
            offsets.insert({static_cast<int64_t>(index),
                            static_cast<int64_t>(result.getResultNumber())});
            break;
          }
  }

  /// A value a run hands to the rest of the step, and the reshapes between
  /// it and its root (a value of the run, which the function returns, or one
  /// the run read). The reshapes are rebuilt after the call: a returned view
  /// would be copied into its out-parameter (buffer-results-to-out-params).
  struct Export {
    Value value, root;
    SmallVector<Operation *> reshapes; // from `value` towards `root`
  };

  /// Whether `def`, an op of a run, is a view the caller can rebuild on
  /// its source after the call: a tensor reshape, or the element of a 0-d
  /// tensor (returned as a scalar, it would be read by the host: on the GPU
  /// a wait for the device in the step, where the caller's own read joins
  /// a single-thread kernel); on buffers also a view or cast of a buffer
  /// whose other operands (a view's offset) the run does not define.
  bool isRebuildableView(Operation *def,
                         const llvm::DenseSet<Operation *> &inRun) {
    if (def->getNumOperands() == 1 &&
        isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractOp>(
            def))
      return true;
    if (!onBuffers || !isBufferViewOrAddress(def))
      return false;
    return llvm::all_of(def->getOperands().drop_front(), [&](Value operand) {
      Operation *producer = operand.getDefiningOp();
      return !producer ||
             !inRun.contains(body->findAncestorOpInBlock(*producer));
    });
  }

  /// The exports of `run` at `offsets`; `results` gets the distinct roots
  /// the run defines, in order.
  SmallVector<Export>
  exportsOf(const Run &run, const llvm::DenseSet<Operation *> &inRun,
            const std::set<std::pair<int64_t, int64_t>> &offsets,
            SmallVector<Value> &results) {
    SmallVector<Export> exports;
    llvm::SetVector<Value> roots;
    for (auto [index, number] : offsets) {
      Export out;
      out.value = run.ops[index]->getResult(number);
      out.root = out.value;
      while (Operation *def = out.root.getDefiningOp()) {
        if (!inRun.contains(def) || !isRebuildableView(def, inRun))
          break;
        out.reshapes.push_back(def);
        out.root = def->getOperand(0);
      }
      Operation *def = out.root.getDefiningOp();
      if (def && inRun.contains(def))
        roots.insert(out.root);
      exports.push_back(std::move(out));
    }
    results.assign(roots.begin(), roots.end());
    return exports;
  }

  /// A view, reshape or cast of a buffer (BufferViews.h), or a buffer's
  /// address (a multi-tensor call's table entry).
  static bool isBufferViewOrAddress(Operation *op) {
    if (isa<memref::ExtractAlignedPointerAsIndexOp>(op))
      return true;
    if (auto cast = dyn_cast<arith::IndexCastOp>(op))
      return cast.getIn()
                 .getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>() !=
             nullptr;
    return msamp::isBufferView(op);
  }

  /// On buffers: the views, reshapes and casts outside `run` that it reads
  /// are cloned right before it and become its first ops, so that the
  /// function takes the buffer they start from (where a copy begins between
  /// a cast and the runtime call it is for, the call would otherwise take
  /// an unranked buffer).
  void pullViews(Run &run) {
    llvm::DenseSet<Operation *> inRun(run.ops.begin(), run.ops.end());
    SmallVector<Operation *> pulled;
    IRMapping clones;
    OpBuilder builder(run.ops.front());
    std::function<Value(Value)> pull = [&](Value value) -> Value {
      if (Value clone = clones.lookupOrNull(value))
        return clone;
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != body || inRun.contains(def) ||
          !isBufferViewOrAddress(def))
        return value;
      for (Value operand : def->getOperands())
        pull(operand);
      Operation *clone = builder.clone(*def, clones);
      pulled.push_back(clone);
      return clones.lookup(value);
    };
    for (Operation *op : run.ops)
      op->walk([&](Operation *nested) {
        for (OpOperand &use : nested->getOpOperands())
          use.set(pull(use.get()));
      });
    run.ops.insert(run.ops.begin(), pulled.begin(), pulled.end());
  }

  void outlineRuns(MutableArrayRef<Run> runs, SymbolTable &symbols) {
    if (!onBuffers)
      return outlineEqualRuns(runs, symbols);
    // Copies may pull different numbers of views (a copy that starts
    // between a view and its reader pulls it, the others have it): only
    // runs of one length can be the same IR, and they share the offsets of
    // the results the step uses after them.
    for (Run &run : runs)
      pullViews(run);
    std::map<size_t, SmallVector<Run>> byLength;
    for (Run &run : runs)
      byLength[run.ops.size()].push_back(std::move(run));
    for (auto &[length, equal] : byLength)
      outlineEqualRuns(equal, symbols);
  }

  /// Outlines runs of one length that may share a function.
  void outlineEqualRuns(MutableArrayRef<Run> runs, SymbolTable &symbols) {
    SmallVector<llvm::DenseSet<Operation *>> inRun(runs.size());
    std::set<std::pair<int64_t, int64_t>> offsets;
    for (auto [run, set] : llvm::zip_equal(runs, inRun)) {
      set.insert(run.ops.begin(), run.ops.end());
      usedOutside(run, set, offsets);
    }
    OpBuilder builder(&getContext());
    for (auto [run, set] : llvm::zip_equal(runs, inRun)) {
      llvm::SetVector<Value> reads = captured(run, set);
      SmallVector<Value> arguments, results;
      SmallVector<Type> argumentTypes, resultTypes;
      // On tensors a buffer may come in (an argument's, which the run
      // updates in place) but not go out: bufferization would not see what
      // the rest of the step does with it.
      bool foreignMemrefInput = false, memrefResult = false;
      for (Value value : reads)
        if (!isClonableConstant(value.getDefiningOp())) {
          arguments.push_back(value);
          argumentTypes.push_back(value.getType());
          Operation *def = value.getDefiningOp();
          foreignMemrefInput |=
              isa<BaseMemRefType>(value.getType()) &&
              !(def && pinned.contains(def) && isArgumentBuffer(def));
        }
      exportsOf(run, set, offsets, results);
      for (Value value : results) {
        resultTypes.push_back(value.getType());
        memrefResult |= isa<BaseMemRefType>(value.getType());
      }
      if (!onBuffers && (memrefResult || foreignMemrefInput ||
                         failed(inPlacePairs(run, set, arguments))))
        continue;

      Location loc = run.ops.front()->getLoc();
      auto outlined = func::FuncOp::create(
          loc, "block", builder.getFunctionType(argumentTypes, resultTypes));
      Block *entry = outlined.addEntryBlock();
      builder.setInsertionPointToStart(entry);
      IRMapping mapping;
      for (auto [value, argument] :
           llvm::zip_equal(arguments, entry->getArguments()))
        mapping.map(value, argument);
      for (Value value : reads)
        if (isClonableConstant(value.getDefiningOp()))
          cloneConstant(builder, value, mapping);
      for (Operation *op : run.ops)
        builder.clone(*op, mapping);
      // Which step argument a buffer is differs per copy: the call says it.
      outlined.walk(
          [](Operation *op) { op->removeAttr(msamp::kInPlaceArgsAttr); });
      SmallVector<Value> returned;
      for (Value value : results)
        returned.push_back(mapping.lookup(value));
      func::ReturnOp::create(builder, loc, returned);

      auto [it, inserted] =
          byFingerprint.try_emplace(msamp::structuralFingerprint(outlined));
      Candidate &candidate = it->second;
      if (inserted) {
        // Kept detached until a second copy matches it.
        candidate.function = outlined;
        candidate.first = std::move(run);
        candidate.offsets = offsets;
        continue;
      }
      outlined.erase();
      if (!candidate.inModule) {
        insertFunction(candidate, symbols);
        replaceWithCall(candidate.first, candidate.function, candidate.offsets,
                        builder);
      }
      replaceWithCall(run, candidate.function, offsets, builder);
    }
  }

  struct Candidate {
    func::FuncOp function;
    bool inModule = false;
    /// The first run with this fingerprint, still inline, and its results.
    Run first;
    std::set<std::pair<int64_t, int64_t>> offsets;
  };

  void insertFunction(Candidate &candidate, SymbolTable &symbols) {
    func::FuncOp callee = candidate.function;
    OpBuilder builder(&getContext());
    callee.setPrivate();
    // As msamp-outline-loop-nests: LLVM's inliner must not put the copies
    // back, and internal linkage keeps them out of train_step.so's exports.
    callee->setAttr("passthrough",
                    builder.getArrayAttr(builder.getStringAttr("noinline")));
    callee->setAttr(
        "llvm.linkage",
        LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal));
    callee.setSymName((step.getSymName() +
                       (onBuffers ? "_buffer_block_" : "_block_") +
                       Twine(functions))
                          .str());
    ++functions;
    symbols.insert(callee, insertionPoint);
    candidate.inModule = true;
  }

  /// Replaces `run` with a call of `callee`. Its arguments are recomputed
  /// from the IR now: a value the run read when it was fingerprinted may
  /// since have become another call's result (the same order and identity,
  /// so the same function).
  void replaceWithCall(Run &run, func::FuncOp callee,
                       const std::set<std::pair<int64_t, int64_t>> &offsets,
                       OpBuilder &builder) {
    llvm::DenseSet<Operation *> inRun(run.ops.begin(), run.ops.end());
    SmallVector<Value> arguments, results;
    for (Value value : captured(run, inRun))
      if (!isClonableConstant(value.getDefiningOp()))
        arguments.push_back(value);
    SmallVector<Export> exports = exportsOf(run, inRun, offsets, results);
    FailureOr<SmallVector<int64_t>> pairs = inPlacePairs(run, inRun, arguments);
    builder.setInsertionPointAfter(run.ops.back());
    auto call = func::CallOp::create(builder, run.ops.front()->getLoc(), callee,
                                     arguments);
    if (succeeded(pairs) && !pairs->empty())
      call->setAttr(msamp::kInPlaceArgsAttr,
                    builder.getDenseI64ArrayAttr(*pairs));
    IRMapping returned;
    returned.map(results, call.getResults());
    for (Export &out : exports) {
      Value replacement = returned.lookupOrDefault(out.root);
      for (Operation *reshape : llvm::reverse(out.reshapes)) {
        IRMapping source;
        source.map(reshape->getOperand(0), replacement);
        replacement = builder.clone(*reshape, source)->getResult(0);
      }
      out.value.replaceUsesWithIf(replacement, [&](OpOperand &use) {
        Operation *user = body->findAncestorOpInBlock(*use.getOwner());
        return user && !inRun.contains(user);
      });
    }
    for (Operation *op : llvm::reverse(run.ops))
      op->erase();
    ++calls;
    outlinedOps += run.ops.size();
    run.ops.clear();
  }

  func::FuncOp step;
  Block *body = nullptr;
  SmallVector<Operation *> ops;
  llvm::DenseSet<Operation *> pinned;
  /// Index of each top-level op of the step in `ops`.
  llvm::DenseMap<Operation *, int64_t> position;
  Block::iterator insertionPoint;
  /// Fingerprint of a run's function -> the function (or the first run with
  /// it).
  llvm::StringMap<Candidate> byFingerprint;
  int64_t calls = 0, functions = 0, outlinedOps = 0;
};

} // namespace
