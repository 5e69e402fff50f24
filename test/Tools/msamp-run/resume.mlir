// Resuming is bit-identical to not stopping: 6 steps straight vs 3 steps,
// a checkpoint, and 3 more steps from it give the same logged losses and a
// byte-identical final checkpoint. At O2, so that FP8/FP16 moments, scales
// and amax histories all go through the checkpoint; with two batches (K = 2),
// so that the data position must come back from the step counter.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors two
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 --quiet \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 6 \
// RUN:   --lr-schedule cosine --warmup 2 --schedule-steps 6 \
// RUN:   --log-json %t/straight.jsonl --save %t/straight.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 --quiet \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --lr-schedule cosine --warmup 2 --schedule-steps 6 \
// RUN:   --log-json %t/first.jsonl --save %t/half.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 \
// RUN:   --resume %t/half.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --lr-schedule cosine --warmup 2 --schedule-steps 6 --log-every 1 \
// RUN:   --log-json %t/second.jsonl --save %t/resumed.safetensors | FileCheck %s
// The first run's last line has its peaks, which the straight run has
// only on its last step: without them, the split log is the straight one.
// RUN: %strip-peaks %t/first.jsonl | cat - %t/second.jsonl > %t/split.jsonl
// RUN: diff %t/straight.jsonl %t/split.jsonl
// RUN: cmp %t/straight.safetensors %t/resumed.safetensors
// RUN: %st_python %S/Inputs/check.py same-state %t/straight.safetensors %t/resumed.safetensors
// RUN: %st_python %S/Inputs/check.py metadata %t/half.safetensors step=3 level=O2
//
// --save-every writes the same file along the way: after 4 of 6 steps it
// holds step 4; the final save overwrites it with step 6.
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 --quiet \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 4 \
// RUN:   --lr-schedule cosine --warmup 2 --schedule-steps 6 \
// RUN:   --save %t/every.safetensors --save-every 2
// RUN: %st_python %S/Inputs/check.py metadata %t/every.safetensors step=4
// RUN: not ls %t/every.safetensors.tmp

// CHECK: msamp-run: level O2, training steps 4..6
// CHECK: step 4/6  loss
// CHECK: step 5/6  loss
// CHECK: step 6/6  loss
// CHECK: msamp-run: saved {{.*}}resumed.safetensors (step 6)
