// Non-finite gradients with a finite loss. An input column of 3e38 that the
// forward pass ignores (its fc1.weight column is 0) overflows only in the
// backward pass, in fc1's weight gradient (clip_reference.py poison-*):
// batch 1 is clean, batch 2 poisoned, so step 2 has a loss of about 1e4 and
// an Inf gradient. The run stops naming the step, the log marks the step
// non-finite with the (finite) loss and a null grad_norm, and no checkpoint
// is written; with --skip-nonfinite the step is undone like a step with a
// non-finite loss.
//
// At O1 and O2 that gradient is FP8: the cast saturates the Inf to 448, so
// the dequantized gradient is finite (its norm would be about 651) and only
// the amax recorded before the cast shows the overflow.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/clip_reference.py poison-init %t/init.safetensors
// RUN: %st_python %S/Inputs/clip_reference.py poison-data %t/data.safetensors
//
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --log-json %t/stop.jsonl --save %t/stop.safetensors 2>&1 | FileCheck %s --check-prefix=STOP
// RUN: FileCheck %s --check-prefix=STOPLOG < %t/stop.jsonl
// RUN: not ls %t/stop.safetensors
// The same at O0 (f32 gradients: the Inf is in the gradient itself) and at
// O2, with clipping on.
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   2>&1 | FileCheck %s --check-prefix=STOP
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 --quiet \
// RUN:   --clip-grad-norm 1 2>&1 | FileCheck %s --check-prefix=STOP
//
// --skip-nonfinite: step 2 is undone, the counter still advances, the step
// is counted. After `--steps 2` the state is exactly that of one step.
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --skip-nonfinite --log-every 1 --log-json %t/skip.jsonl | FileCheck %s --check-prefix=SKIP
// RUN: FileCheck %s --check-prefix=SKIPLOG < %t/skip.jsonl
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 1 --quiet \
// RUN:   --save %t/one.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 2 --quiet \
// RUN:   --skip-nonfinite --save %t/skipped.safetensors
// RUN: %st_python %S/Inputs/check.py metadata %t/skipped.safetensors step=2
// RUN: %st_python %S/Inputs/check.py close %t/one.safetensors %t/skipped.safetensors fc1.weight --tol 0
// RUN: %st_python %S/Inputs/check.py close %t/one.safetensors %t/skipped.safetensors fc2.weight --tol 0
// RUN: %st_python %S/Inputs/check.py close %t/one.safetensors %t/skipped.safetensors fc1.weight.exp_avg_sq --tol 0
// RUN: %st_python %S/Inputs/check.py close %t/one.safetensors %t/skipped.safetensors fc1.fprop.input.amax_history --tol 0

// STOP: msamp-run: error: non-finite gradients (detected from amax) at step 2 (grad norm inf); stopping without saving (--skip-nonfinite skips such steps)
// STOPLOG: {"step": 1, "loss": {{[0-9.]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": {{[0-9.]+}}}
// STOPLOG-NEXT: {"step": 2, "loss": {{[0-9]+\.[0-9]+}}, "lr": 0.01, "nonfinite": true, "grad_norm": null}
// STOPLOG-NOT: step

// SKIP: step 1/3  loss 1.0920
// SKIP-NEXT: step 2/3  loss {{[0-9]+\.[0-9]+}} {{.*}}(skipped: non-finite gradients)
// SKIP-NEXT: step 3/3  loss
// SKIP: msamp-run: skipped 1 step(s) with a non-finite loss, non-finite gradients, input or updated state
// SKIPLOG: {"step": 1, "loss": 1.0920{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": {{[0-9.]+}}}
// SKIPLOG-NEXT: {"step": 2, "loss": {{[0-9]+\.[0-9]+}}, "lr": 0.01, "nonfinite": true, "grad_norm": null}
// SKIPLOG-NEXT: {"step": 3, "loss": {{[0-9.]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": {{[0-9.]+}}, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}
