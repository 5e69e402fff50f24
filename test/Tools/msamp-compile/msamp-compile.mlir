// msamp-compile turns a graph into train_step.{mlir,so} + manifest.json, and
// rejects bad input with a clear message and a non-zero exit.
// RUN: rm -rf %t && msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 -o %t | FileCheck %s --check-prefix=OK
// RUN: %python -c "import json; m = json.load(open('%t/manifest.json')); print(m['level'], m['abi_version'])" | FileCheck %s --check-prefix=MANIFEST
// RUN: llvm-nm -D --defined-only %t/train_step.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: FileCheck %s --check-prefix=IR < %t/train_step.mlir
// An already compiled step is accepted as input too.
// RUN: msamp-compile %t/train_step.mlir -o %t/again | FileCheck %s --check-prefix=OK
// RUN: not msamp-compile %S/does-not-exist.mlir -o %t/x 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O7 -o %t/x 2>&1 | FileCheck %s --check-prefix=LEVEL
// O3 compiles one rank's program of a fixed group.
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O3 --pipeline-options "world-size=2 rank=1" -o %t/o3
// RUN: FileCheck %s --check-prefix=O3 < %t/o3/manifest.json
// O3: "level": "O3",
// O3-NEXT: "world_size": 2,
// O3-NEXT: "rank": 1,
// The reference rows of MS-AMP's level table are levels too; the option a
// level fixes cannot be contradicted.
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level amp-fp16 -o %t/amp
// RUN: FileCheck %s --check-prefix=AMP < %t/amp/manifest.json
// RUN: FileCheck %s --check-prefix=AMPIR < %t/amp/train_step.mlir
// AMP: "level": "amp-fp16",
// AMPIR: msamp.gemm {{.*}} : tensor<4x3xf16>, tensor<5x3xf16> -> tensor<4x5xf32>
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level te --pipeline-options "amax-history-len=8" -o %t/te
// RUN: FileCheck %s --check-prefix=TE < %t/te/manifest.json
// TE: "level": "te",
// TE: {"name":"fc1.fprop.weight.amax_history","role":"scaling_state","shape":[8],"dtype":"f32","init":"zeros"
// RUN: not msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level amp-fp16 --pipeline-options "lr=0.1 dtype=bf16" -o %t/x 2>&1 | FileCheck %s --check-prefix=FIXED
// FIXED: msamp-compile: error: --pipeline-options sets 'dtype', which --opt-level amp-fp16 fixes (dtype=fp16)
// RUN: not msamp-compile %s -o %t/x 2>&1 | FileCheck %s --check-prefix=NOGRAPH
// RUN: not msamp-compile %S/../../Transforms/Inputs/mlp.mlir --pipeline-options "fp8-format=e2m1" -o %t/x 2>&1 | FileCheck %s --check-prefix=OPTION

// OK: msamp-compile: wrote {{.*}}train_step.so, {{.*}}manifest.json, {{.*}}train_step.mlir
// MANIFEST: O2 3
// SYMBOLS-DAG: msamp_train_step_abi_version
// SYMBOLS-DAG: msamp_train_step_num_args
// SYMBOLS-DAG: msamp_train_step_packed
// IR: func.func @train_step(
// IR-SAME: msamp.level = "O2"
// MISSING: msamp-compile: error: {{.*}}does-not-exist.mlir{{.*}}No such file or directory
// LEVEL: msamp-compile: error: --opt-level must be O0, O1, O2, O3, amp-bf16, amp-fp16 or te, got 'O7'
// NOGRAPH: msamp-compile: error: {{.*}}msamp-compile.mlir has neither a forward_backward graph nor a compiled train_step
// OPTION: msamp-compile: for the --fp8-format option: 'e2m1' is not one of: hybrid, e4m3
// OPTION-NEXT: failed to add `msamp-o2` with options `fp8-format=e2m1`

func.func @not_a_graph() {
  return
}
