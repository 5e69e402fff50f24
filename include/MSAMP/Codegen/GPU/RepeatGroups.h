//===- RepeatGroups.h - which layer copy a kernel belongs to ----*- C++ -*-===//
//
// Part of the msamp project.
//
// The GPU target merges kernels that do not depend on each other into one
// launch (single-thread kernels, atomic sums, sibling kernels). Grouped
// greedily up to the parameter budget, a merged kernel spanned a number of
// layers that was not whole, so its members, and with them the distinct
// kernels of the step, changed with depth (issue 19: 40, 47 and 49 at 12,
// 24 and 48 layers). The merges now stay inside one group: one copy of a
// repeated block of the step (a layer's forward, backward or optimizer
// ops, found as a tandem repeat of the block's kernel-like ops,
// TandemRepeats.h), or one stretch between repeats. Every copy is then
// merged the same way: its kernels are those of any other copy and are
// compiled once.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_REPEATGROUPS_H
#define MSAMP_CODEGEN_GPU_REPEATGROUPS_H

#include "MSAMP/Codegen/TandemRepeats.h"

namespace mlir::msamp {

/// The groups of `block`'s kernels, as it is now: the segments of its ops
/// that have regions or are calls (the kernels and library calls:
/// allocations and views do not say where a layer ends). Two kernels may
/// be merged only when their groups (BlockSegments::of) are equal.
BlockSegments repeatGroups(Block &block);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_REPEATGROUPS_H
