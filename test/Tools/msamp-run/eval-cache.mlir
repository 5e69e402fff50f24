// --eval computes the loss without keeping the update: evaluating the same
// checkpoint twice gives the same loss, equal to the loss that step 4 of the
// training run reports. The compilation cache: a second run reuses it, and a
// directory written by msamp-compile runs directly.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
// RUN: env MSAMP_CACHE_DIR=%t/cache msamp-run %S/../../Transforms/Inputs/mlp.mlir \
// RUN:   --opt-level O0 --init %t/init.safetensors --data %t/data.safetensors \
// RUN:   --steps 3 --save %t/ck3.safetensors | FileCheck %s --check-prefix=COMPILE
// RUN: env MSAMP_CACHE_DIR=%t/cache msamp-run %S/../../Transforms/Inputs/mlp.mlir \
// RUN:   --opt-level O0 --resume %t/ck3.safetensors --data %t/data.safetensors \
// RUN:   --steps 1 --log-json %t/train4.jsonl | FileCheck %s --check-prefix=CACHED
// RUN: env MSAMP_CACHE_DIR=%t/cache msamp-run %S/../../Transforms/Inputs/mlp.mlir \
// RUN:   --opt-level O0 --resume %t/ck3.safetensors --data %t/data.safetensors \
// RUN:   --eval --log-json %t/eval.jsonl | FileCheck %s --check-prefix=EVAL
// RUN: env MSAMP_CACHE_DIR=%t/cache msamp-run %S/../../Transforms/Inputs/mlp.mlir \
// RUN:   --opt-level O0 --resume %t/ck3.safetensors --data %t/data.safetensors \
// RUN:   --eval --steps 3 --quiet | FileCheck %s --check-prefix=EVAL3
// RUN: FileCheck %s --check-prefix=EVALLOG < %t/eval.jsonl
// RUN: FileCheck %s --check-prefix=TRAINLOG < %t/train4.jsonl
//
// A compiled directory, with the level it was compiled at.
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 -o %t/compiled > /dev/null
// RUN: msamp-run %t/compiled --resume %t/ck3.safetensors --data %t/data.safetensors \
// RUN:   --eval | FileCheck %s --check-prefix=EVAL
// RUN: not msamp-run %t/compiled --opt-level O2 --synthetic 2>&1 | FileCheck %s --check-prefix=DIRLEVEL
// RUN: not msamp-run %t/compiled --pipeline-options "margin=1" --synthetic 2>&1 | FileCheck %s --check-prefix=DIROPTS

// COMPILE: msamp-run: compiled {{.*}}mlp.mlir at O0 in {{[0-9.]+}} s
// CACHED: msamp-run: using cached compilation ({{.*}}cache/{{[0-9a-f]+}})
// CACHED: step 4/4  loss 0.7882
// EVAL: msamp-run: level O0, evaluating steps 4..4
// EVAL: eval 4/4  loss 0.7882
// EVAL: eval loss 0.7882{{[0-9]+}} (mean of 1 batch)
// EVAL3: eval loss 0.7882{{[0-9]+}} (mean of 3 batches)
// EVALLOG: {"step": 4, "loss": [[LOSS:[0-9.]+]], "lr": 0.01, "nonfinite": false, "grad_norm": {{[0-9.]+}}, "eval": true}
// TRAINLOG: {"step": 4, "loss": [[LOSS:[0-9.]+]], "lr": 0.01, "nonfinite": false, "grad_norm": {{[0-9.]+}}, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}
// DIRLEVEL: msamp-run: error: '{{.*}}compiled' is compiled at level O0, not O2 (recompile it, or pass the .mlir file)
// DIROPTS: msamp-run: error: --pipeline-options applies when compiling a model file; '{{.*}}compiled' is already compiled
