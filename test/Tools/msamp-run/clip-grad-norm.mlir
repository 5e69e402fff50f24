// --clip-grad-norm: the global norm of the all-reduced, dequantized
// gradients is clipped inside the compiled step (--msamp-grad-stats) with
// PyTorch's coefficient min(1, X / (norm + 1e-6)), and every step logs the
// norm before clipping as "grad_norm".
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
//
// (a) A threshold far above the norm changes no bit: the coefficient is
// exactly 1.0, and so are the products, in f32 (O0) as in FP8 inverse
// scales (O1). Same losses, same norms, same checkpoint.
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --log-json %t/o0.jsonl --save %t/o0.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --clip-grad-norm 1e9 --log-json %t/o0-huge.jsonl --save %t/o0-huge.safetensors
// RUN: diff %t/o0.jsonl %t/o0-huge.jsonl
// RUN: %st_python %S/Inputs/check.py same-state %t/o0.safetensors %t/o0-huge.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --log-json %t/o1.jsonl --save %t/o1.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --clip-grad-norm 1e9 --log-json %t/o1-huge.jsonl --save %t/o1-huge.safetensors
// RUN: diff %t/o1.jsonl %t/o1-huge.jsonl
// RUN: %st_python %S/Inputs/check.py same-state %t/o1.safetensors %t/o1-huge.safetensors
//
// (b) Clipping to 0.1 (the norm is about 2): losses, norms and every param
// after 3 steps match the f64 numpy reference of clip_grad_norm_ + AdamW to
// 1e-5; the unclipped run matches the unclipped reference and not the
// clipped one (the check can tell them apart).
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --clip-grad-norm 0.1 --log-every 1 --log-json %t/clip.jsonl \
// RUN:   --save %t/clip.safetensors | FileCheck %s
// RUN: %st_python %S/Inputs/clip_reference.py check %t/clip.jsonl %t/clip.safetensors --max-norm 0.1 --steps 3 --tol 1e-5
// RUN: %st_python %S/Inputs/clip_reference.py check %t/o0.jsonl %t/o0.safetensors --max-norm 0 --steps 3 --tol 1e-5
// RUN: not %st_python %S/Inputs/clip_reference.py check %t/o0.jsonl %t/o0.safetensors --max-norm 0.1 --steps 3 --tol 1e-5
// RUN: FileCheck %s --check-prefix=JSON < %t/clip.jsonl
//
// A step compiled before msamp had clipping (here: synthesis without
// --msamp-grad-stats) has no max_grad_norm input and no metrics: it still
// runs, logs no grad_norm, and refuses --clip-grad-norm instead of silently
// training unclipped.
// RUN: msamp-opt %S/../../Transforms/Inputs/mlp.mlir --msamp-verify-contract --inline \
// RUN:   --msamp-classify-gemms --msamp-synthesize-train-step -o %t/old.mlir
// RUN: msamp-compile %t/old.mlir -o %t/old > /dev/null
// RUN: msamp-run %t/old --init %t/init.safetensors --data %t/data.safetensors \
// RUN:   --steps 3 --quiet --log-json %t/old.jsonl
// RUN: FileCheck %s --check-prefix=OLDLOG < %t/old.jsonl
// RUN: %st_python %S/Inputs/check.py losses %t/old.jsonl 1.023226 0.939916 0.861571 --tol 1e-5
// RUN: not msamp-run %t/old --init %t/init.safetensors --data %t/data.safetensors \
// RUN:   --steps 3 --clip-grad-norm 1 2>&1 | FileCheck %s --check-prefix=OLD

// CHECK: msamp-run: level O0, training steps 1..3, lr 1.00e-02 (constant)
// CHECK: step 1/3  loss 1.0232
// CHECK: step 2/3  loss 0.9399
// CHECK: step 3/3  loss 0.8614
// CHECK-NOT: skipped

// JSON: {"step": 1, "loss": 1.0232{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.9956{{[0-9]+}}}
// JSON-NEXT: {"step": 2, "loss": 0.9399{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.8715{{[0-9]+}}}
// JSON-NEXT: {"step": 3, "loss": 0.8614{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.7536{{[0-9]+}}, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}

// OLDLOG: {"step": 1, "loss": 1.0232{{[0-9]+}}, "lr": 0.01, "nonfinite": false}
// OLDLOG-NEXT: {"step": 2, "loss": 0.9399{{[0-9]+}}, "lr": 0.01, "nonfinite": false}
// OLDLOG-NEXT: {"step": 3, "loss": 0.8615{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}
// OLD: msamp-run: error: --clip-grad-norm: this compiled step has no max_grad_norm input; recompile it with this msamp (msamp-compile) to clip gradients
