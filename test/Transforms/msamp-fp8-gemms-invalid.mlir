// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="fp8-format=e5m2" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="exclude=fc[" 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --msamp-synthesize-train-step --msamp-fp8-gemms="amax-history-len=0" 2>&1 | FileCheck %s --check-prefix=LEN
// RUN: not msamp-opt %S/Inputs/mlp.mlir --msamp-fp8-gemms 2>&1 | FileCheck %s --check-prefix=NOSTEP

// fp8-format is an enum option (RecipeEnums.td): the option parser refuses
// an unknown spelling before any pass runs.
// FORMAT: for the --fp8-format option: Cannot find option named 'e5m2'!
// REGEX: error: invalid msamp-fp8-gemms option exclude=fc[: expected a valid regex
// LEN: error: invalid msamp-fp8-gemms option amax-history-len=0: expected a positive length
// NOSTEP: error: --msamp-fp8-gemms needs a compiled train step

// RUN: not msamp-opt %s --msamp-fp8-gemms 2>&1 | FileCheck %s --check-prefix=NOSTEPARG
// NOSTEPARG: error: delayed scaling with warm-up or an interval needs the step counter argument (msamp.role = "step")
module {
  func.func @train_step(%x: tensor<4x4xf32> {msamp.role = "input", msamp.name = "x"}) -> (tensor<f32> {msamp.role = "loss"})
      attributes {msamp.kind = "train_step", msamp.level = "O1"} {
    %l = arith.constant dense<0.5> : tensor<f32>
    return %l : tensor<f32>
  }
}
