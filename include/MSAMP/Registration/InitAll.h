//===- InitAll.h - what msamp tools register ---------------------*- C++
//-*-===//

#ifndef MSAMP_REGISTRATION_INITALL_H
#define MSAMP_REGISTRATION_INITALL_H

namespace mlir {
class DialectRegistry;
namespace msamp {
/// Registers msamp plus the upstream dialects (and the interface models they
/// promise) that an input graph, a pipeline or a lowering of ours may contain:
/// func, linalg, tensor, arith, math, scf, cf, affine, vector, bufferization,
/// memref, shard, ml_program, gpu, nvvm, llvm.
void registerAllMSAMPDialects(DialectRegistry &registry);

/// Registers the upstream passes and the msamp passes and pipelines.
void registerAllMSAMPPasses();
} // namespace msamp
} // namespace mlir

#endif // MSAMP_REGISTRATION_INITALL_H
