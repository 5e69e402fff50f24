//===- MSAMPDialect.td - msamp dialect definition ----------*- tablegen -*-===//
//
// The msamp dialect: FP8 mixed-precision training primitives (MS-AMP's recipe).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_DIALECT_MSAMPDIALECT_TD
#define MSAMP_DIALECT_MSAMPDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def MSAMP_Dialect : Dialect {
  let name = "msamp";
  let cppNamespace = "::mlir::msamp";
  let summary = "FP8 mixed-precision training: scaled casts, FP8 GEMMs, "
                "collectives and low-precision optimizers";
  let description = [{
    The `msamp` dialect holds the primitives of MS-AMP-style FP8 training on
    tensors. It uses MLIR's builtin `f8E4M3FN`, `f8E5M2` and `f16` element
    types for low-precision data; scaling factors are 0-d `tensor<f32>` values
    threaded explicitly through the IR, so every FP8 value's scale is visible
    and checkable.

    Conventions used by every op:
    * A *scale* `s` maps real values to stored values: `stored = Q(real * s)`.
    * An *inverse scale* `s_inv` maps back: `real = stored * s_inv`.
    * `Q` for FP8 is round-to-nearest-even with saturation to the format's
      largest finite value (448 for E4M3, 57344 for E5M2); NaN stays NaN and
      infinities saturate. For `f16` it is IEEE round-to-nearest-even without
      saturation (the scale keeps values in range).
    * Amax histories are 1-d `tensor<Lxf32>` with element 0 the most recent.

    The numerics of these ops are implemented once, in the header-only core
    `MSAMP/Numerics/FP8.h` and `MSAMP/Numerics/Scaling.h`, which the constant
    folders, the CPU runtime and the CUDA kernels share.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
}

class MSAMP_Op<string mnemonic, list<Trait> traits = []>
    : Op<MSAMP_Dialect, mnemonic, traits>;

#endif // MSAMP_DIALECT_MSAMPDIALECT_TD
