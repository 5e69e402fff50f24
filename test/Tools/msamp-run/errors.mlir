// Bad data, initial-value and checkpoint files are refused with a message
// naming the file, the tensor, and what was expected and found; a run that
// fails writes no checkpoint.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/missing-y.safetensors missing-y
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/no-batch.safetensors no-batch-dim
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/f64.safetensors f64-x
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/k.safetensors k-mismatch
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/missing-y.safetensors 2>&1 | FileCheck %s --check-prefix=MISSINGY
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/no-batch.safetensors 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/f64.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/k.safetensors 2>&1 | FileCheck %s --check-prefix=KMISMATCH
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --synthetic --init %t/data.safetensors 2>&1 | FileCheck %s --check-prefix=BADINIT
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --synthetic --resume %t/data.safetensors 2>&1 | FileCheck %s --check-prefix=NOTCKPT
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/missing-y.safetensors --save %t/never.safetensors 2>&1
// RUN: not ls %t/never.safetensors %t/never.safetensors.tmp

// MISSINGY: msamp-run: error: {{.*}}missing-y.safetensors: no tensor 'y' for target 'y' (expected F32 of shape [K, 4, 2], K batches of [4, 2])
// SHAPE: msamp-run: error: {{.*}}no-batch.safetensors: tensor 'x' has shape [4, 3], expected [K, 4, 3] (K batches of input 'x' [4, 3])
// DTYPE: msamp-run: error: {{.*}}f64.safetensors: tensor 'x' has dtype F64, expected F32 (input 'x' is f32)
// KMISMATCH: msamp-run: error: {{.*}}k.safetensors: tensor 'y' holds 1 batches, but 'x' holds 2
// BADINIT: msamp-run: error: {{.*}}data.safetensors: tensor '{{x|y}}': not a param or buffer of this model
// NOTCKPT: msamp-run: error: cannot resume from '{{.*}}data.safetensors': its __metadata__ has no "graph_hash"; it is not a checkpoint written by msamp
