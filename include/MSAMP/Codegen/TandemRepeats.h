//===- TandemRepeats.h - runs of ops that repeat back to back ---*- C++ -*-===//
//
// Part of the msamp project.
//
// An N-layer model's step holds N copies of each layer's forward, backward
// and optimizer ops, one after the other. The CPU outliner
// (msamp-outline-repeated-blocks) compiles each copy as a call of one
// function. Where ops are grouped instead, the groups must not straddle
// copies, or the copies stop being equal and their code depends on the
// depth (issue 19): the GPU kernel merges keep every merged kernel inside
// one copy (RepeatGroups.h), and msamp-split-shared-inits cuts chains of
// in-place writes at copy boundaries.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_TANDEMREPEATS_H
#define MSAMP_CODEGEN_TANDEMREPEATS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir::msamp {

/// Fewest ops a repeated block has where a pass groups ops by copy: below
/// it, a run of a few equal independent ops (the clipping of same-shaped
/// gradients, one kernel each) would count as a repeat, and its ops would
/// no longer be grouped with each other.
constexpr int64_t kMinRepeatPeriod = 16;

/// `copies` back-to-back copies of the keys [start, start + period).
struct TandemRepeat {
  int64_t start = 0;
  int64_t period = 0;
  int64_t copies = 0;
};

/// A key of `op` that ignores which values it reads: its name, attributes,
/// properties, operand and result types, and those of every op nested in
/// it. msamp.in_place_args is left out: it names a different step argument
/// in every layer. With `constantOperands`, the constant that each integer
/// operand is (or is computed from by pure ops) counts too: a loop's
/// bounds, defined outside it; without them, the kernels of differently
/// sized parameters have one key.
uint64_t structuralKey(Operation *op, bool constantOperands = false);

/// Bytes that are equal for two isolated ops (an outlined function) exactly
/// when they are the same IR up to value names and locations: each op's
/// name, attributes (inherent and discardable), result types, operands as
/// the numbers of the values they read (in order of definition), regions,
/// blocks, block arguments and successors, pre-order. What comparing their
/// generic printed form with local scope decided, without printing:
/// attributes and types are uniqued, so their pointers compare them.
/// Only meaningful within one MLIRContext and one process.
std::string structuralFingerprint(Operation *op);

/// The tandem repeats of `keys`, scanned left to right: at each position
/// the period (at least `minPeriod`) that covers the most keys with copies
/// after the first; the scan resumes after the last copy. Periods are
/// found from later occurrences of the window of keys that starts a copy
/// (prefix hashes, binary search for how far two positions agree): linear
/// in the keys apart from logarithmic factors. The repeats do not overlap
/// and come in increasing `start`; equal keys in a copy are only a
/// candidate, callers that need more check it.
SmallVector<TandemRepeat> findTandemRepeats(ArrayRef<uint64_t> keys,
                                            int64_t minPeriod);

/// The shortest period of the keys of `repeat`'s first copy that divides
/// its period: less than the period where a copy is itself copies of a
/// shorter block (a chain of equal ops, a few per layer, found as copies of
/// at least `minPeriod` ops: how many layers a copy has then depends on the
/// depth).
int64_t primitivePeriod(ArrayRef<uint64_t> keys, TandemRepeat repeat);

/// The repeats of findTandemRepeats whose copies are not copies of a
/// shorter block (primitivePeriod is the period): the blocks of layers that
/// msamp-outline-repeated-blocks outlines and msamp-gpu-group-adam-updates
/// groups per copy, so that both agree. A copy made of copies of a shorter
/// block (a chain of equal ops, a few per layer) holds a number of layers
/// that depends on the depth.
SmallVector<TandemRepeat> findLayerRepeats(ArrayRef<uint64_t> keys,
                                           int64_t minPeriod);

/// What BlockSegments makes of a repeat whose copies are copies of a block
/// of fewer than 4 ops (a run of equal ops: the calls of one layer function
/// in a row, a chain of equal sums).
enum class ShortRepeats {
  /// Copies of the period found: each a segment.
  Copies,
  /// No repeat: the run stays in the stretch around it. Whether such a
  /// run is a repeat, and of which period, depends on its length (32 equal
  /// calls in a row can be two copies of 16; 24 are none at
  /// kMinRepeatPeriod), so its boundaries would move with depth.
  Ignore,
};

/// Which segment each op of a block is in. The ops `counted` accepts are
/// keyed (structuralKey with constant operands); each copy of a tandem
/// repeat of those keys (periods of at least kMinRepeatPeriod; a copy that
/// is copies of a shorter block of at least 4 ops counts as those; one of
/// a shorter block as `shortRepeats` says), and each stretch between
/// repeats, is one segment, numbered from 0 in order. Ops in equal copies
/// get the same offsets from their segment's start. Built once: later
/// changes to the block are not seen.
class BlockSegments {
public:
  /// `block` may be null: then no op has a segment.
  BlockSegments(Block *block, llvm::function_ref<bool(Operation &)> counted,
                ShortRepeats shortRepeats = ShortRepeats::Copies);

  /// The segment of `op`, or of its ancestor in the block; -1 for an op
  /// that was not counted, is not in the block, or was created since.
  int64_t of(Operation *op) const;

private:
  Block *block;
  llvm::DenseMap<Operation *, int64_t> segments;
};

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_TANDEMREPEATS_H
