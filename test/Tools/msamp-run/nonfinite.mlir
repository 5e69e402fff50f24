// A step whose loss is not finite stops the run with an error naming the
// step, after logging it as null; no checkpoint is written. With
// --skip-nonfinite the step is undone (the state restored from a copy taken
// before it), the step counter still advances and the step is counted.
// (Non-finite gradients with a finite loss: nonfinite-grads.mlir.)
// A learning rate of 1e30 makes the weights explode after the first update.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --lr 1e30 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 4 --quiet \
// RUN:   --log-json %t/stop.jsonl --save %t/stop.safetensors 2>&1 | FileCheck %s --check-prefix=STOP
// RUN: FileCheck %s --check-prefix=STOPLOG < %t/stop.jsonl
// RUN: not ls %t/stop.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --lr 1e30 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 4 \
// RUN:   --skip-nonfinite --log-every 1 --log-json %t/skip.jsonl \
// RUN:   --save %t/skip.safetensors | FileCheck %s --check-prefix=SKIP
// RUN: FileCheck %s --check-prefix=SKIPLOG < %t/skip.jsonl
// The skipped steps left the state of step 1 in place, with the counter at 4.
// RUN: %st_python %S/Inputs/check.py metadata %t/skip.safetensors step=4

// STOP: msamp-run: error: non-finite loss ({{inf|nan}}) at step 2; stopping without saving (--skip-nonfinite skips such steps)
// STOPLOG: {"step": 1, "loss": 1.0232{{[0-9]+}}, "lr": 1e+30, "nonfinite": false, "grad_norm": 1.9956{{[0-9]+}}}
// STOPLOG-NEXT: {"step": 2, "loss": null, "lr": 1e+30, "nonfinite": true, "grad_norm": null}
// STOPLOG-NOT: step

// SKIP: step 1/4  loss 1.0232
// SKIP: step 2/4  loss {{inf|nan}}
// SKIP: step 3/4  loss {{inf|nan}}
// SKIP: step 4/4  loss {{inf|nan}}
// SKIP: msamp-run: skipped 3 step(s) with a non-finite loss
// SKIP: msamp-run: saved {{.*}}skip.safetensors (step 4)
// SKIPLOG: {"step": 1, "loss": 1.0232{{[0-9]+}}, "lr": 1e+30, "nonfinite": false, "grad_norm": 1.9956{{[0-9]+}}}
// SKIPLOG-NEXT: {"step": 2, "loss": null, "lr": 1e+30, "nonfinite": true, "grad_norm": null}
// SKIPLOG-NEXT: {"step": 3, "loss": null, "lr": 1e+30, "nonfinite": true, "grad_norm": null}
// SKIPLOG-NEXT: {"step": 4, "loss": null, "lr": 1e+30, "nonfinite": true, "grad_norm": null, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}
