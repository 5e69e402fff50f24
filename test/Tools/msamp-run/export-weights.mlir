// --export-weights FILE: the trained weights as a PyTorch state_dict, from
// the same libmsamp_session code as Python's msamp.state_dict
// (python/tests/test_weights.py covers tied names, buffers, loading into
// torch and O3 under mpirun). Here, without msamp.export's layout: every
// param under its graph name, f32, at O1 the f16 weights decoded with their
// scales exactly as the checkpoint stores them.
// REQUIRES: safetensors-python
// RUN: rm -rf %t && mkdir -p %t
// RUN: %st_python %S/Inputs/mlp_inputs.py init %t/init.safetensors
// RUN: %st_python %S/Inputs/mlp_inputs.py data %t/data.safetensors two
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 \
// RUN:   --init %t/init.safetensors --data %t/data.safetensors --steps 3 \
// RUN:   --save %t/ck.safetensors --export-weights %t/w.safetensors | FileCheck %s
// RUN: %st_python %S/Inputs/check.py weights %t/w.safetensors %t/ck.safetensors \
// RUN:   fc1.weight fc1.bias fc2.weight fc2.bias
// RUN: %st_python %S/Inputs/check.py metadata %t/w.safetensors format=pt level=O1 step=3
//
// A checkpoint converts with --steps 0 (no data needed): the same bytes.
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --quiet \
// RUN:   --resume %t/ck.safetensors --steps 0 --export-weights %t/again.safetensors
// RUN: cmp %t/w.safetensors %t/again.safetensors
//
// Refused: an output that cannot be written (before the first step), and
// --eval, which trains nothing.
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --synthetic \
// RUN:   --steps 1 --export-weights %t/no-dir/w.safetensors 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --synthetic \
// RUN:   --eval --export-weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=EVAL

// CHECK: msamp-run: level O1, training steps 1..3
// CHECK: msamp-run: exported the weights to {{.*}}w.safetensors

// UNWRITABLE-NOT: step 1/1
// UNWRITABLE: msamp-run: error: --export-weights {{.*}}no-dir/w.safetensors: cannot write to '{{.*}}no-dir': No such file or directory
// UNWRITABLE-NOT: step 1/1

// EVAL: msamp-run: error: --export-weights writes trained weights and --eval trains nothing
