//===- TandemRepeats.cpp - runs of ops that repeat back to back -----------===//
//
// Part of the msamp project.
//
// See TandemRepeats.h.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/TandemRepeats.h"
#include "MSAMP/Conversion/RuntimeSymbols.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include <vector>

using namespace mlir;

namespace {

/// How many keys a window has: candidate periods come from later
/// occurrences of the window that starts a copy.
constexpr int64_t kWindow = 16;
/// At most this many later occurrences of a window are tried per position.
constexpr int64_t kMaxCandidates = 1024;

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

/// How many pure ops deep constantKey looks.
constexpr int kConstantDepth = 4;

/// A key of the constant an integer `value` is, or is computed from by
/// pure ops (a tiled kernel's bounds are products of constants until a
/// canonicalization folds them); 0 where it depends on anything else.
llvm::hash_code constantKey(Value value, int depth = kConstantDepth) {
  if (Attribute attr; matchPattern(value, m_Constant(&attr)))
    return hash_value(attr);
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0 || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return llvm::hash_value(0);
  llvm::hash_code hash =
      llvm::hash_combine(def->getName(), def->hashProperties(),
                         cast<OpResult>(value).getResultNumber());
  for (Value operand : def->getOperands())
    hash = llvm::hash_combine(hash, constantKey(operand, depth - 1));
  return hash;
}

/// Fewest ops of a segment that BlockSegments makes of a copy.
constexpr int64_t kMinCopyOps = 4;

} // namespace

int64_t msamp::primitivePeriod(ArrayRef<uint64_t> keys, TandemRepeat repeat) {
  ArrayRef<uint64_t> copy = keys.slice(repeat.start, repeat.period);
  for (int64_t q = 1; q < repeat.period; ++q)
    if (repeat.period % q == 0 && copy.drop_front(q) == copy.drop_back(q))
      return q;
  return repeat.period;
}

SmallVector<msamp::TandemRepeat>
msamp::findLayerRepeats(ArrayRef<uint64_t> keys, int64_t minPeriod) {
  SmallVector<TandemRepeat> repeats = findTandemRepeats(keys, minPeriod);
  llvm::erase_if(repeats, [&](TandemRepeat repeat) {
    return primitivePeriod(keys, repeat) < repeat.period;
  });
  return repeats;
}

uint64_t msamp::structuralKey(Operation *op, bool constantOperands) {
  llvm::hash_code hash = llvm::hash_value(0);
  op->walk([&](Operation *nested) {
    if (constantOperands)
      for (Value operand : nested->getOperands())
        if (operand.getType().isIntOrIndex())
          hash = llvm::hash_combine(hash, constantKey(operand));
    // As OperationEquivalence::computeHash, without the operands' values.
    llvm::hash_code attributes = llvm::hash_value(0);
    for (NamedAttribute attr : nested->getDiscardableAttrs())
      if (attr.getName() != kInPlaceArgsAttr)
        attributes = llvm::hash_combine(attributes, attr);
    hash = llvm::hash_combine(
        hash, nested->getName(), attributes, nested->hashProperties(),
        llvm::hash_combine_range(nested->getResultTypes().begin(),
                                 nested->getResultTypes().end()),
        llvm::hash_combine_range(nested->getOperandTypes().begin(),
                                 nested->getOperandTypes().end()),
        nested->getNumRegions());
  });
  return static_cast<uint64_t>(hash);
}

namespace {
/// Appends the words of structuralFingerprint.
class Fingerprinter {
public:
  explicit Fingerprinter(std::string &out) : out(out) {}

  void op(Operation *op) {
    word(op->getName().getAsOpaquePointer());
    word(op->getAttrDictionary().getAsOpaquePointer());
    word(op->getNumResults());
    for (Type type : op->getResultTypes())
      word(type.getAsOpaquePointer());
    word(op->getNumOperands());
    for (Value operand : op->getOperands())
      word(valueNumber(operand));
    word(op->getNumSuccessors());
    for (Block *successor : op->getSuccessors())
      word(blockNumber(successor));
    word(op->getNumRegions());
    for (Region &region : op->getRegions()) {
      word(std::distance(region.begin(), region.end()));
      // Blocks first: a branch may name a later one.
      for (Block &block : region)
        blockNumber(&block);
      for (Block &block : region) {
        word(block.getNumArguments());
        for (BlockArgument argument : block.getArguments()) {
          word(argument.getType().getAsOpaquePointer());
          define(argument);
        }
        for (Operation &nested : block)
          this->op(&nested);
      }
    }
    for (Value result : op->getResults())
      define(result);
  }

private:
  void word(uint64_t value) {
    out.append(reinterpret_cast<const char *>(&value), sizeof(value));
  }
  void word(const void *pointer) {
    word(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer)));
  }
  void define(Value value) { values.try_emplace(value, values.size()); }
  /// A value defined outside the op (not expected in an isolated one) is
  /// its own address: equal only to itself.
  uint64_t valueNumber(Value value) {
    auto it = values.find(value);
    if (it != values.end())
      return it->second;
    return static_cast<uint64_t>(
               reinterpret_cast<uintptr_t>(value.getAsOpaquePointer())) |
           (uint64_t(1) << 63);
  }
  uint64_t blockNumber(Block *block) {
    return blocks.try_emplace(block, blocks.size()).first->second;
  }

  std::string &out;
  llvm::DenseMap<Value, uint64_t> values;
  llvm::DenseMap<Block *, uint64_t> blocks;
};
} // namespace

std::string msamp::structuralFingerprint(Operation *op) {
  std::string out;
  Fingerprinter(out).op(op);
  return out;
}

SmallVector<msamp::TandemRepeat>
msamp::findTandemRepeats(ArrayRef<uint64_t> keys, int64_t minPeriod) {
  SmallVector<TandemRepeat> repeats;
  int64_t n = keys.size();
  if (n < 2 * minPeriod || n < kWindow)
    return repeats;
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
    TandemRepeat best;
    int64_t bestSaving = 0, tried = 0;
    for (int64_t j : later) {
      int64_t period = j - i;
      if (period < minPeriod)
        continue;
      if (j + period > n || ++tried > kMaxCandidates)
        break;
      // A second copy needs the first period equal: one comparison of
      // hashes rejects most candidates before the binary search.
      if (hashes.range(i, period) != hashes.range(j, period))
        continue;
      int64_t copies =
          1 + static_cast<int64_t>(hashes.commonPrefix(i, j)) / period;
      int64_t saving = (copies - 1) * period;
      if (copies >= 2 && saving > bestSaving) {
        best = {i, period, copies};
        bestSaving = saving;
      }
    }
    if (!best.copies) {
      ++i;
      continue;
    }
    repeats.push_back(best);
    i += best.period * best.copies;
  }
  return repeats;
}

msamp::BlockSegments::BlockSegments(
    Block *block, llvm::function_ref<bool(Operation &)> counted,
    ShortRepeats shortRepeats)
    : block(block) {
  if (!block)
    return;
  SmallVector<Operation *> ops;
  SmallVector<uint64_t> keys;
  for (Operation &op : *block)
    if (counted(op)) {
      ops.push_back(&op);
      keys.push_back(structuralKey(&op, /*constantOperands=*/true));
    }
  int64_t next = 0, at = 0;
  // Ops [at, end) as the next segment, if any.
  auto segment = [&](int64_t end) {
    if (at == end)
      return;
    for (; at < end; ++at)
      segments[ops[at]] = next;
    ++next;
  };
  for (TandemRepeat repeat : findTandemRepeats(keys, kMinRepeatPeriod)) {
    // A copy that is itself copies of a block of at least kMinCopyOps ops
    // (two layers' clipping, where a layer's is 8 ops): each of those is
    // a segment, so that the segments do not depend on how many there
    // are. Blocks shorter than that (a few equal ops) stay in copies of
    // the period found, or are no repeat at all (ShortRepeats).
    int64_t period = primitivePeriod(keys, repeat);
    if (period < kMinCopyOps) {
      if (shortRepeats == ShortRepeats::Ignore)
        continue;
      period = repeat.period;
    }
    segment(repeat.start);
    int64_t end = repeat.start + repeat.copies * repeat.period;
    for (int64_t copyEnd = repeat.start + period; copyEnd <= end;
         copyEnd += period)
      segment(copyEnd);
  }
  segment(ops.size());
}

int64_t msamp::BlockSegments::of(Operation *op) const {
  Operation *top = block ? block->findAncestorOpInBlock(*op) : nullptr;
  return top ? segments.lookup_or(top, -1) : -1;
}
