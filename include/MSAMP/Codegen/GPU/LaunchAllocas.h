//===- LaunchAllocas.h - stack slots for launch arguments ---*- C++ -*-===//
//
// The GPU dialect's LLVM IR translation of gpu.launch_func (SelectObjectAttr)
// allocates each launch's argument struct and pointer array where the launch
// is. Once the host step is cut into blocks (msamp-split-straight-lines, after
// msamp-lower-to-gpu), most launches are outside the entry block, and an
// alloca there is a dynamic stack adjustment, not a slot of the frame: at -O0
// (msamp-optnone-entry-points) each launch grew the stack until the step
// returned. hoistLaunchAllocas() moves every alloca of a constant size in an
// optnone function without cycles to the start of its entry block, as
// msamp-split-straight-lines does before translation: each ran at most once
// per call, so the same memory is reserved, now by the prologue.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_LAUNCHALLOCAS_H
#define MSAMP_CODEGEN_GPU_LAUNCHALLOCAS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::msamp {

/// Moves the constant-size allocas of `module`'s acyclic optnone functions
/// into their entry blocks, in order; returns how many moved.
unsigned hoistLaunchAllocas(llvm::Module &module);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_LAUNCHALLOCAS_H
