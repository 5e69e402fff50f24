// The reference test: the reference MLP example (docs/Inputs.md 3) at
// O0, initial values through --init and the batch through --data (K = 1),
// both written by the `safetensors` package. The losses of steps 1..3 and
// fc2.weight after 3 steps (read back from --save with the same package)
// must match the README's f64 reference to 1e-5.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --log-every 1 --log-json %t/log.jsonl --save %t/ck.safetensors \
// RUN:   | FileCheck %s
// RUN: %st_python %S/Inputs/check.py losses %t/log.jsonl 1.023226 0.939916 0.861571 --tol 1e-5
// RUN: %st_python %S/Inputs/check.py tensor %t/ck.safetensors fc2.weight \
// RUN:   "[[0.27087, -0.129981, 0.229978, 0.370056, -0.229931], [-0.470005, 0.229943, 0.129935, -0.270031, 0.629811]]" --tol 1e-5
// RUN: %st_python %S/Inputs/check.py metadata %t/ck.safetensors level=O0 \
// RUN:   abi_version=3 world_size=1 rank=0 step=3 msamp_version=0.1.0
// The log is one JSON object per step with the loss to 9 digits, and the
// gradient norm the step reports (--msamp-grad-stats).
// RUN: FileCheck %s --check-prefix=JSON < %t/log.jsonl

// CHECK: msamp-run: initial values of 4 of 4 params from {{.*}}init.safetensors
// CHECK: msamp-run: level O0, training steps 1..3, lr 1.00e-02 (constant)
// CHECK: step 1/3  loss 1.0232  lr 1.00e-02  {{[0-9.]+}} steps/s
// CHECK: step 2/3  loss 0.9399  lr 1.00e-02
// CHECK: step 3/3  loss 0.8616  lr 1.00e-02
// CHECK: msamp-run: 3 steps in {{.*}}, final loss 0.8616
// CHECK: msamp-run: saved {{.*}}ck.safetensors (step 3)
// CHECK: memory: state allocated by the session, level O0, 32 params
// CHECK: category        dtype             bytes   bytes/param
// CHECK: weights         f32                 128        4.0000
// CHECK: master_weights  none                  0        0.0000
// CHECK: weight_grads    f32                 128        4.0000
// CHECK: optimizer_m     f32                 128        4.0000
// CHECK: optimizer_v     f32                 128        4.0000
// CHECK: scaling_state   none                  0        0.0000
// CHECK: other_state     i64                   8        0.2500
// CHECK: total                               520       16.2500
// The measured step heap also holds each aligned buffer's alignment slack
// (64 bytes, which the plan does not count): visible only on a model this
// small (test_compiler_reports.py compares the two on real sizes).
// CHECK-NEXT: peak: planned 1.16 KiB, measured {{[0-9.]+}} KiB (session 492 B + step {{[0-9.]+}} KiB)

// JSON: {"step": 1, "loss": 1.0232{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.9956{{[0-9]+}}}
// JSON: {"step": 2, "loss": 0.9399{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.8715{{[0-9]+}}}
// The last step's line also has the planned and the measured peak.
// JSON: {"step": 3, "loss": 0.8615{{[0-9]+}}, "lr": 0.01, "nonfinite": false, "grad_norm": 1.7540{{[0-9]+}}, "planned_peak_bytes": {{[0-9]+}}, "peak_bytes": {{[0-9]+}}}
