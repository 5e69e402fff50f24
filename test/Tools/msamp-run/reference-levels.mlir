// msamp-run trains the MLP at the reference rows of MS-AMP's level table
// (--opt-level amp-bf16, amp-fp16, te; docs/Levels.md): the loss falls below
// half its first value in 30 steps and tracks the f32 (O0) run. The AMP
// levels round only the GEMM operands to 16 bits (2^-9 / 2^-12 relative
// error): measured, the largest loss deviation from O0 over the 30 steps
// is 0.29% (amp-bf16) and 0.03% (amp-fp16), bound 2%. te quantizes every
// GEMM operand to FP8 with delayed scales that start at 1 (Transformer
// Engine has no just-in-time warm-up): 6.5%, under the 15% bound that
// levels.mlir uses for O1/O2.
// The memory table shows the 16 bytes per parameter of f32 state.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --quiet \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 30 \
// RUN:   --log-json %t/o0.jsonl
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level amp-bf16 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 30 \
// RUN:   --log-json %t/bf16.jsonl --save %t/bf16.safetensors | FileCheck %s --check-prefix=BF16
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level amp-fp16 --quiet \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 30 \
// RUN:   --log-json %t/fp16.jsonl
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level te \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 30 \
// RUN:   --log-json %t/te.jsonl | FileCheck %s --check-prefix=TE
// RUN: %st_python %S/Inputs/check.py decreasing %t/bf16.jsonl
// RUN: %st_python %S/Inputs/check.py decreasing %t/fp16.jsonl
// RUN: %st_python %S/Inputs/check.py decreasing %t/te.jsonl
// RUN: %st_python %S/Inputs/check.py track %t/bf16.jsonl %t/o0.jsonl --rel 0.02
// RUN: %st_python %S/Inputs/check.py track %t/fp16.jsonl %t/o0.jsonl --rel 0.02
// RUN: %st_python %S/Inputs/check.py track %t/te.jsonl %t/o0.jsonl --rel 0.15
// RUN: %st_python %S/Inputs/check.py metadata %t/bf16.safetensors level=amp-bf16 step=30

// BF16: msamp-run: level amp-bf16, training steps 1..30
// BF16: memory: state allocated by the session, level amp-bf16, 32 params
// BF16: weights         f32                 128        4.0000
// BF16: weight_grads    f32                 128        4.0000
// BF16: optimizer_m     f32                 128        4.0000
// BF16: optimizer_v     f32                 128        4.0000
// BF16: scaling_state   none                  0        0.0000

// TE: msamp-run: level te, training steps 1..30
// TE: weights         f32                 128        4.0000
// TE: scaling_state   f32               24600      768.7500
