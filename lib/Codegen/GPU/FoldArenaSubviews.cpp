//===- FoldArenaSubviews.cpp - contiguous slices as arena views -----------===//
//
// Part of the msamp project.
//
// msamp-gpu-static-arena makes each buffer of the step a view of an arena
// at a constant byte shift, with an identity layout: a kernel takes such a
// buffer as a bare pointer that the host computes (base + shift), so the
// kernels of two layers that touch buffers at different shifts are one
// kernel (msamp-gpu-dedupe-kernels). A slice of such a buffer
// (memref.subview) keeps the parent's pointer and puts its offset into its
// type, and a kernel's buffer type is its own: every offset was a kernel
// of its own. O3 copies each tensor's value out of a packed buffer this way
// (one 1-element slice per tensor), which made 233, 380 and 666 distinct
// kernels at 2, 4 and 8 layers of the benchmark LM.
//
// A reshape (collapse or expand) of an arena view is the arena view of its
// shape. And a slice with static offsets, sizes and strides that is contiguous
// (its strides are those of its shape, row-major) of an arena view becomes
// an arena view of its own, at the parent's shift plus the slice's offset
// in bytes, with an identity layout. Only slices whose users do not care
// about the layout of their operand's type (loads, stores, copies, linalg
// ops on buffers, atomic updates) are folded: the same elements, read and
// written in the same order, so the bits are unchanged.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Codegen/BufferViews.h"
#include "MSAMP/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace mlir::msamp {
#define GEN_PASS_DEF_MSAMPGPUFOLDARENASUBVIEWS
#include "MSAMP/Codegen/GPU/Passes.h.inc"
} // namespace mlir::msamp

using namespace mlir;

namespace {

/// The offset in elements of `slice` from its source's first element, when
/// its layout is static and its elements are contiguous in row-major order.
std::optional<int64_t> contiguousOffset(memref::SubViewOp slice) {
  MemRefType type = slice.getType();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  SmallVector<int64_t> rowMajor = computeSuffixProduct(type.getShape());
  for (auto [size, stride, expected] :
       llvm::zip_equal(type.getShape(), strides, rowMajor))
    if (size != 1 && stride != expected)
      return std::nullopt;
  return offset;
}

/// Whether `user` reads or writes its operand without the operand's type
/// entering a type of its own (a result, or a type it verifies).
bool layoutAgnostic(Operation *user) {
  if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, memref::AtomicRMWOp>(
          user))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
  return linalgOp && linalgOp.hasPureBufferSemantics();
}

bool isReshape(Operation *op) {
  return isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op);
}

/// Whether every use of `value` (a contiguous buffer) can take an arena
/// view of its shape instead: a layout-agnostic user, or a reshape whose
/// result can (itself contiguous, from the same first element).
bool canRebase(Value value) {
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    if (layoutAgnostic(user))
      return true;
    return isReshape(user) &&
           cast<MemRefType>(user->getResult(0).getType()).hasStaticShape() &&
           canRebase(user->getResult(0));
  });
}

struct FoldArenaSubviewsPass
    : msamp::impl::MSAMPGPUFoldArenaSubviewsBase<FoldArenaSubviewsPass> {
  void runOnOperation() override {
    // In program order, so that a reshape or slice of a folded reshape sees
    // an arena view.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<memref::SubViewOp>(op) || isReshape(op))
        ops.push_back(op);
    });
    llvm::DenseSet<Operation *> erased;
    for (Operation *op : ops) {
      if (erased.contains(op))
        continue;
      auto view = op->getOperand(0).getDefiningOp<memref::ViewOp>();
      std::optional<int64_t> shift = msamp::constantByteShift(view);
      if (!shift)
        continue;
      std::optional<int64_t> offset = 0;
      if (auto slice = dyn_cast<memref::SubViewOp>(op))
        offset = contiguousOffset(slice);
      else if (!cast<MemRefType>(op->getResult(0).getType())
                    .getLayout()
                    .isIdentity())
        continue;
      auto type = cast<MemRefType>(op->getResult(0).getType());
      int64_t bits = type.getElementTypeBitWidth();
      // A reshape's result already has an identity layout: its view is of
      // the same type, which any user takes.
      if (!offset || !type.hasStaticShape() || bits % 8 != 0 ||
          (!isReshape(op) && !canRebase(op->getResult(0))))
        continue;
      OpBuilder b(op);
      Value bytes = arith::ConstantIndexOp::create(
          b, op->getLoc(), *shift + *offset * (bits / 8));
      rebase(op, view.getSource(), bytes, erased);
    }
  }

  /// `op`'s result (a contiguous buffer starting `bytes` into `arena`) as
  /// an arena view of its shape, and so each reshape of it; `op` and those
  /// reshapes are erased.
  void rebase(Operation *op, Value arena, Value bytes,
              llvm::DenseSet<Operation *> &erased) {
    auto type = cast<MemRefType>(op->getResult(0).getType());
    OpBuilder b(op);
    auto own = memref::ViewOp::create(
        b, op->getLoc(),
        MemRefType::get(type.getShape(), type.getElementType(), AffineMap(),
                        type.getMemorySpace()),
        arena, bytes, ValueRange());
    for (OpOperand &use :
         llvm::make_early_inc_range(op->getResult(0).getUses())) {
      Operation *user = use.getOwner();
      // A reshape of a slice has the slice's offset in its type too.
      if (isReshape(user) && own.getType() != type)
        rebase(user, arena, bytes, erased);
      else
        use.set(own.getResult());
    }
    if (own->use_empty())
      own->erase(); // only reshaped
    erased.insert(op);
    op->erase();
    ++numFolded;
  }
};

} // namespace
