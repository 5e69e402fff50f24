//===- SingleThreadKernels.h - facts about single-thread kernels -*- C++
//-*-===//
//
// Part of the msamp project.
//
// msamp-gpu-scalar-kernels makes the host's 0-d arithmetic single-thread
// kernels; msamp-gpu-merge-scalar-kernels merges them. What both must agree
// on is written here once.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_SINGLETHREADKERNELS_H
#define MSAMP_CODEGEN_GPU_SINGLETHREADKERNELS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::msamp {

/// The buffers one merged kernel may take (kKernelBufferParamBytes each),
/// well under the 4,352 bytes of kernel parameters PTX ISA 8.0 allows, with
/// room for its scalar arguments.
constexpr int64_t kMaxSingleThreadParamBytes = 3072;

/// The bytes of kernel parameters a buffer takes once outlined, whatever
/// its type: one pointer. Kernels take their buffers as bare pointers
/// (gpu-to-llvm's and convert-gpu-to-nvvm's bare-pointer convention,
/// Pipeline.cpp); the static shape, strides and offset are the kernel's
/// constants. (A whole descriptor was 8 x (3 + 2 x rank) bytes.)
constexpr int64_t kKernelBufferParamBytes = 8;

/// Whether a kernel taking `buffers` distinct buffers fits the budget.
inline bool buffersFitKernelParameters(int64_t buffers) {
  return buffers * kKernelBufferParamBytes <= kMaxSingleThreadParamBytes;
}

/// The buffer `value` views (through casts, reshapes and views), or
/// `value` itself.
Value rootBuffer(Value value);

/// The location of a single-thread kernel made of `ops` (not empty): the
/// first op's, fused with its cost (op "scalar", gpucost::scalarKernelCost),
/// which travels to the launch as for the kernels of linalg ops
/// (KernelCosts.cpp). Fails (with a located error) as the cost does.
FailureOr<Location> singleThreadKernelLoc(ArrayRef<Operation *> ops);

/// The inner 1 x 1 scf.parallel of a single-thread kernel that
/// msamp-gpu-scalar-kernels made (a 1 x 1 scf.parallel directly holding a
/// 1 x 1 scf.parallel, with the cost of op "scalar" on its location), or
/// null when `op` is not one.
scf::ParallelOp singleThreadBody(Operation *op);

/// Whether `buffer` is a 0-d allocation used (besides its deallocations)
/// only by loads and stores directly in `bodies`, the bodies of
/// single-thread kernels in the order their ops run once merged, the first
/// of those accesses a store. Such a buffer holds a value of one kernel
/// only: msamp-gpu-kernel-local-scalars makes it a value of the merged
/// kernel, so it takes no kernel parameter, and the merges do not count it
/// against kMaxSingleThreadParamBytes.
bool isKernelLocalScalar(Value buffer, ArrayRef<Block *> bodies);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_SINGLETHREADKERNELS_H
