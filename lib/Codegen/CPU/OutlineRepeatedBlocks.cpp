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
// Detection works on a key per top-level op (name, attributes, properties,
// types, the ops nested in it), not on text: at each position the candidate
// periods are the distances to the later occurrences of the same window of
// keys, and the longest common prefix of the two suffixes (prefix hashes and
// binary search) says how many copies follow. The keys ignore data flow, so
// every copy is then checked exactly: it is cloned into a candidate function
// (what it reads from outside as arguments, constants cloned in, what is used
// after it as results) printed in generic form, and only copies whose text is
// identical share a function. Each scan position is visited once and every op
// is printed at most once: linear apart from the logarithmic searches.
//
// What stays in the step: the ops that update a state argument in place (a
// runtime call with msamp.in_place_args, the writable to_buffer of an
// argument, materialize_in_destination) and every op connected to them
// through a memref value. Across a call boundary their buffers would be
// copies: their writes must stay in @train_step, where
// msamp-check-in-place-states and one-shot bufferization see the argument
// itself. A copy is split at those ops into runs, and each run index is its
// own shared function. Constants are cloned into the functions and never
// split a run. Runs whose inputs or results would be memrefs stay inline.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/CPU/Passes.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"
#include "MSAMP/TrainStep/TrainStep.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <set>

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPOUTLINEREPEATEDBLOCKS
#include "MSAMP/Codegen/CPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// How many keys a window has: candidate periods come from later
/// occurrences of the window that starts a copy.
constexpr int64_t kWindow = 16;
/// At most this many later occurrences of a window are tried per position.
constexpr int64_t kMaxCandidates = 1024;

bool isClonableConstant(Operation *op) {
  return op && op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

/// Key of a top-level op: everything but the values it reads. A pinned op
/// stays in the step, so only its kind and types matter (its
/// msamp.in_place_args name a different argument in every layer).
uint64_t structuralKey(Operation *op, bool pinned) {
  if (pinned)
    return static_cast<uint64_t>(llvm::hash_combine(
        op->getName(),
        llvm::hash_combine_range(op->getOperandTypes().begin(),
                                 op->getOperandTypes().end()),
        llvm::hash_combine_range(op->getResultTypes().begin(),
                                 op->getResultTypes().end())));
  llvm::hash_code hash = llvm::hash_value(pinned);
  op->walk([&](Operation *nested) {
    hash = llvm::hash_combine(
        hash,
        OperationEquivalence::computeHash(
            nested, OperationEquivalence::ignoreHashValue,
            OperationEquivalence::ignoreHashValue,
            OperationEquivalence::IgnoreLocations),
        llvm::hash_combine_range(nested->getOperandTypes().begin(),
                                 nested->getOperandTypes().end()),
        nested->getNumRegions());
  });
  return static_cast<uint64_t>(hash);
}

/// Polynomial prefix hashes of the key sequence: equal ranges in O(1).
class PrefixHashes {
public:
  explicit PrefixHashes(ArrayRef<uint64_t> keys) {
    prefix.resize(keys.size() + 1, 0);
    power.resize(keys.size() + 1, 1);
    for (size_t i = 0; i < keys.size(); ++i) {
      prefix[i + 1] = prefix[i] * kBase + keys[i];
      power[i + 1] = power[i] * kBase;
    }
  }
  uint64_t range(size_t begin, size_t length) const {
    return prefix[begin + length] - prefix[begin] * power[length];
  }
  /// Length of the longest common prefix of the suffixes at `a` < `b`.
  size_t commonPrefix(size_t a, size_t b) const {
    size_t lo = 0, hi = prefix.size() - 1 - b;
    while (lo < hi) {
      size_t mid = (lo + hi + 1) / 2;
      if (range(a, mid) == range(b, mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  }

private:
  static constexpr uint64_t kBase = 0x100000001b3ULL;
  std::vector<uint64_t> prefix, power;
};

/// The window at `i` as a DenseMap key (top bit clear: never one of the
/// map's reserved empty and tombstone keys).
uint64_t windowKey(const PrefixHashes &hashes, size_t i) {
  return hashes.range(i, kWindow) >> 1;
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
    for (Operation &op : body->without_terminator())
      ops.push_back(&op);
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
    for (auto &entry : byText)
      if (!entry.second.inModule)
        entry.second.function.erase();

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
    for (Operation *op : ops)
      if (seedLeaders.contains(memrefLinked.getLeaderValue(op)))
        pinned.insert(op);
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
    int64_t n = keys.size();
    if (n < 2 * minPeriod || n < kWindow)
      return;
    PrefixHashes hashes(keys);
    // Window hash -> positions in increasing order.
    llvm::DenseMap<uint64_t, SmallVector<int64_t>> windows;
    SmallVector<int64_t> indexInWindow(n, 0);
    for (int64_t i = 0; i + kWindow <= n; ++i) {
      auto &list = windows[windowKey(hashes, i)];
      indexInWindow[i] = list.size();
      list.push_back(i);
    }
    int64_t i = 0;
    while (i + kWindow <= n) {
      ArrayRef<int64_t> later = ArrayRef(windows[windowKey(hashes, i)])
                                    .drop_front(indexInWindow[i] + 1);
      int64_t bestPeriod = 0, bestCopies = 0, bestSaving = 0, tried = 0;
      for (int64_t j : later) {
        int64_t period = j - i;
        if (period < minPeriod)
          continue;
        if (j + period > n || ++tried > kMaxCandidates)
          break;
        int64_t copies =
            1 + static_cast<int64_t>(hashes.commonPrefix(i, j)) / period;
        int64_t saving = (copies - 1) * period;
        if (copies >= 2 && saving > bestSaving) {
          bestPeriod = period;
          bestCopies = copies;
          bestSaving = saving;
        }
      }
      if (!bestCopies) {
        ++i;
        continue;
      }
      outlineCopies(i, bestPeriod, bestCopies, symbols);
      i += bestPeriod * bestCopies;
    }
  }

  /// Outlines the runs of copies [start + c * period, +period), c < copies.
  void outlineCopies(int64_t start, int64_t period, int64_t copies,
                     SymbolTable &symbols) {
    // Runs: maximal ranges of unpinned ops; constants neither join nor end
    // one. The keys being equal, every copy has the same runs.
    SmallVector<std::pair<int64_t, int64_t>> runRanges; // offset, end
    int64_t runStart = -1;
    for (int64_t offset = 0; offset <= period; ++offset) {
      Operation *op = offset < period ? ops[start + offset] : nullptr;
      bool ends = !op || pinned.contains(op);
      if (ends) {
        if (runStart >= 0)
          runRanges.push_back({runStart, offset});
        runStart = -1;
      } else if (runStart < 0 && !isClonableConstant(op)) {
        runStart = offset;
      }
    }
    for (auto [begin, end] : runRanges) {
      SmallVector<Run> runs(copies);
      for (int64_t c = 0; c < copies; ++c)
        for (int64_t offset = begin; offset < end; ++offset) {
          Operation *op = ops[start + c * period + offset];
          if (!isClonableConstant(op))
            runs[c].ops.push_back(op);
        }
      if (static_cast<int64_t>(runs[0].ops.size()) < minRunOps)
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
        if (!inRun.contains(def) || def->getNumOperands() != 1 ||
            !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
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

  void outlineRuns(MutableArrayRef<Run> runs, SymbolTable &symbols) {
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
      bool memrefBoundary = false;
      for (Value value : reads)
        if (!isClonableConstant(value.getDefiningOp())) {
          arguments.push_back(value);
          argumentTypes.push_back(value.getType());
          memrefBoundary |= isa<BaseMemRefType>(value.getType());
        }
      exportsOf(run, set, offsets, results);
      for (Value value : results) {
        resultTypes.push_back(value.getType());
        memrefBoundary |= isa<BaseMemRefType>(value.getType());
      }
      if (memrefBoundary && !onBuffers)
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
          builder.clone(*value.getDefiningOp(), mapping);
      for (Operation *op : run.ops)
        builder.clone(*op, mapping);
      SmallVector<Value> returned;
      for (Value value : results)
        returned.push_back(mapping.lookup(value));
      func::ReturnOp::create(builder, loc, returned);

      std::string text;
      {
        llvm::raw_string_ostream os(text);
        outlined.print(os,
                       OpPrintingFlags().printGenericOpForm().useLocalScope());
      }
      auto [it, inserted] = byText.try_emplace(text);
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
    /// The first run with this text, still inline, and its results.
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
  /// from the IR now: a value the run read when it was printed may since have
  /// become another call's result (the same order and identity, so the same
  /// text).
  void replaceWithCall(Run &run, func::FuncOp callee,
                       const std::set<std::pair<int64_t, int64_t>> &offsets,
                       OpBuilder &builder) {
    llvm::DenseSet<Operation *> inRun(run.ops.begin(), run.ops.end());
    SmallVector<Value> arguments, results;
    for (Value value : captured(run, inRun))
      if (!isClonableConstant(value.getDefiningOp()))
        arguments.push_back(value);
    SmallVector<Export> exports = exportsOf(run, inRun, offsets, results);
    builder.setInsertionPointAfter(run.ops.back());
    auto call = func::CallOp::create(builder, run.ops.front()->getLoc(), callee,
                                     arguments);
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
  Block::iterator insertionPoint;
  /// Text of a run's function -> the function (or the first run with it).
  llvm::StringMap<Candidate> byText;
  int64_t calls = 0, functions = 0, outlinedOps = 0;
};

} // namespace
