// --msamp-emit-manifest=FILE (= --msamp-write-manifest="file=FILE") writes
// the JSON manifest of docs/Interfaces.md 4 that the runtime allocates, binds and
// checkpoints from; the format is documented in lib/Transforms/WriteManifest.cpp.

// RUN: rm -rf %t && split-file %s %t
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-emit-manifest=%t/o1.json -o %t/o1.ir
// RUN: FileCheck %s --check-prefix=O1 < %t/o1.json
// The file is written through FILE.tmp and a rename: no temporary is left.
// RUN: not ls %t/o1.json.tmp
// The IR is untouched.
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir -o %t/o1.ref
// RUN: diff %t/o1.ref %t/o1.ir
// Both spellings give the same bytes.
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-write-manifest="file=%t/o1-write.json" -o /dev/null
// RUN: diff %t/o1.json %t/o1-write.json
// An existing file is replaced.
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-emit-manifest=%t/o1-write.json -o /dev/null
// RUN: FileCheck %s --check-prefix=O2 < %t/o1-write.json
// "-" is stdout.
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-write-manifest=file=- -o /dev/null | FileCheck %s --check-prefix=SGD
// RUN: msamp-opt %S/Inputs/train-step-o0.mlir --msamp-emit-manifest=%t/o0.json -o /dev/null
// RUN: FileCheck %s --check-prefix=O0 < %t/o0.json
// RUN: msamp-opt %t/fallback.mlir --msamp-emit-manifest=%t/fallback.json -o /dev/null
// RUN: FileCheck %s --check-prefix=FALLBACK < %t/fallback.json

// Every manifest is valid JSON and self-consistent: each argument is bound
// exactly once, and each updated state entry and its output agree.
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-emit-manifest=%t/sgd.json -o /dev/null
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-emit-manifest=%t/o2.json -o /dev/null
// RUN: %python -c "import json, sys; \
// RUN:   ms = [json.load(open(f)) for f in sys.argv[1:]]; \
// RUN:   assert all(list(m) == ['abi_version', 'level', 'world_size', 'state', 'inputs', 'outputs'] for m in ms); \
// RUN:   assert all(m['abi_version'] == 3 and m['world_size'] == 1 for m in ms); \
// RUN:   args = lambda m: sorted(e['index'] for e in m['state'] + m['inputs']); \
// RUN:   assert all(args(m) == list(range(len(args(m)))) for m in ms); \
// RUN:   assert all(m['outputs'][0]['role'] == 'loss' and m['outputs'][0]['shape'] == [] for m in ms); \
// RUN:   same = lambda s, o: (s['name'], s['role'], s['shape'], s['dtype'], s['index']) == (o['name'], o['role'], o['shape'], o['dtype'], o['updates']); \
// RUN:   assert all(same(s, m['outputs'][s['updated_by']]) for m in ms for s in m['state'] if 'updated_by' in s); \
// RUN:   assert all(len([s for s in m['state'] if 'updated_by' in s]) == len(m['outputs']) - 1 for m in ms); \
// RUN:   print('valid', len(ms))" %t/o0.json %t/o1.json %t/o2.json %t/sgd.json %t/fallback.json | FileCheck %s --check-prefix=PY
// PY: valid 5

// Errors: a located error, no crash, no file.
// RUN: not msamp-opt %S/Inputs/train-step-o0.mlir --msamp-emit-manifest=%t/missing/dir/m.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=IOERR
// RUN: not ls %t/missing
// RUN: not msamp-opt %t/bad-role.mlir --msamp-emit-manifest=%t/bad.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-ROLE
// RUN: not msamp-opt %t/bad-updates.mlir --msamp-emit-manifest=%t/bad.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-UPDATES
// RUN: not ls %t/bad.json
// RUN: not msamp-opt %t/no-step.mlir --msamp-emit-manifest=%t/bad.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-STEP
// RUN: not msamp-opt %t/no-step.mlir --msamp-emit-manifest= -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-FILE

// O1:      {
// O1-NEXT:   "abi_version": 3,
// O1-NEXT:   "level": "O1",
// O1-NEXT:   "world_size": 1,
// O1-NEXT:   "state": [
// O1-NEXT:     {"name":"fc1.weight","role":"param","shape":[64,32],"dtype":"f16","init":"normal(0,0.02)","index":0,"updated_by":1},
// O1-NEXT:     {"name":"fc2.weight","role":"param","shape":[16,64],"dtype":"f16","init":"normal(0,0.02)","index":1,"updated_by":2},
// O1-NEXT:     {"name":"fc1.weight.exp_avg","role":"opt_state","shape":[64,32],"dtype":"f32","init":"zeros","index":2,"updated_by":3},
// O1-NEXT:     {"name":"fc1.weight.exp_avg_sq","role":"opt_state","shape":[64,32],"dtype":"f32","init":"zeros","index":3,"updated_by":4},
// O1-NEXT:     {"name":"fc2.weight.exp_avg","role":"opt_state","shape":[16,64],"dtype":"f32","init":"zeros","index":4,"updated_by":5},
// O1-NEXT:     {"name":"fc2.weight.exp_avg_sq","role":"opt_state","shape":[16,64],"dtype":"f32","init":"zeros","index":5,"updated_by":6},
// O1-NEXT:     {"name":"step","role":"step","shape":[],"dtype":"i64","init":"zeros","index":6,"updated_by":7},
// O1-NEXT:     {"name":"fc1.weight.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"from_param","index":10,"updated_by":8},
// O1-NEXT:     {"name":"fc2.weight.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"from_param","index":11,"updated_by":9},
// O1-NEXT:     {"name":"fc1.fprop.input.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":12,"updated_by":10},
// O1-NEXT:     {"name":"fc1.fprop.input.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","init":"zeros","index":13,"updated_by":11},
// O1-NEXT:     {"name":"fc2.fprop.input.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":14,"updated_by":12},
// O1-NEXT:     {"name":"fc2.fprop.input.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","init":"zeros","index":15,"updated_by":13},
// O1-NEXT:     {"name":"fc2.dgrad.grad_output.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":16,"updated_by":14},
// O1-NEXT:     {"name":"fc2.dgrad.grad_output.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","init":"zeros","index":17,"updated_by":15},
// O1-NEXT:     {"name":"fc1.wgrad.grad_output.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":18,"updated_by":16},
// O1-NEXT:     {"name":"fc1.wgrad.grad_output.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","init":"zeros","index":19,"updated_by":17}
// O1-NEXT:   ],
// O1-NEXT:   "inputs": [
// O1-NEXT:     {"name":"lr","role":"hyperparam","shape":[],"dtype":"f32","index":7},
// O1-NEXT:     {"name":"x","role":"input","shape":[4,32],"dtype":"f32","index":8},
// O1-NEXT:     {"name":"y","role":"target","shape":[4,16],"dtype":"f32","index":9}
// O1-NEXT:   ],
// O1-NEXT:   "outputs": [
// O1-NEXT:     {"name":"loss","role":"loss","shape":[],"dtype":"f32","index":0},
// O1-NEXT:     {"name":"fc1.weight","role":"param","shape":[64,32],"dtype":"f16","index":1,"updates":0},
// O1-NEXT:     {"name":"fc2.weight","role":"param","shape":[16,64],"dtype":"f16","index":2,"updates":1},
// O1-NEXT:     {"name":"fc1.weight.exp_avg","role":"opt_state","shape":[64,32],"dtype":"f32","index":3,"updates":2},
// O1-NEXT:     {"name":"fc1.weight.exp_avg_sq","role":"opt_state","shape":[64,32],"dtype":"f32","index":4,"updates":3},
// O1-NEXT:     {"name":"fc2.weight.exp_avg","role":"opt_state","shape":[16,64],"dtype":"f32","index":5,"updates":4},
// O1-NEXT:     {"name":"fc2.weight.exp_avg_sq","role":"opt_state","shape":[16,64],"dtype":"f32","index":6,"updates":5},
// O1-NEXT:     {"name":"step","role":"step","shape":[],"dtype":"i64","index":7,"updates":6},
// O1-NEXT:     {"name":"fc1.weight.scale","role":"scaling_state","shape":[],"dtype":"f32","index":8,"updates":10},
// O1-NEXT:     {"name":"fc2.weight.scale","role":"scaling_state","shape":[],"dtype":"f32","index":9,"updates":11},
// O1-NEXT:     {"name":"fc1.fprop.input.scale","role":"scaling_state","shape":[],"dtype":"f32","index":10,"updates":12},
// O1-NEXT:     {"name":"fc1.fprop.input.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","index":11,"updates":13},
// O1-NEXT:     {"name":"fc2.fprop.input.scale","role":"scaling_state","shape":[],"dtype":"f32","index":12,"updates":14},
// O1-NEXT:     {"name":"fc2.fprop.input.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","index":13,"updates":15},
// O1-NEXT:     {"name":"fc2.dgrad.grad_output.scale","role":"scaling_state","shape":[],"dtype":"f32","index":14,"updates":16},
// O1-NEXT:     {"name":"fc2.dgrad.grad_output.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","index":15,"updates":17},
// O1-NEXT:     {"name":"fc1.wgrad.grad_output.scale","role":"scaling_state","shape":[],"dtype":"f32","index":16,"updates":18},
// O1-NEXT:     {"name":"fc1.wgrad.grad_output.amax_history","role":"scaling_state","shape":[16],"dtype":"f32","index":17,"updates":19}
// O1-NEXT:   ]
// O1-NEXT: }
// O1-NOT: {{.}}

// At O2 the first moments are FP8 and the second FP16, with their scales as
// state.
// O2: "level": "O2",
// O2: {"name":"fc1.weight.exp_avg","role":"opt_state","shape":[64,32],"dtype":"f8E4M3FN","init":"zeros","index":2,"updated_by":3},
// O2-NEXT: {"name":"fc1.weight.exp_avg_sq","role":"opt_state","shape":[64,32],"dtype":"f16","init":"zeros","index":3,"updated_by":4},
// O2: {"name":"fc1.weight.exp_avg.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":20,"updated_by":18},
// O2-NEXT: {"name":"fc1.weight.exp_avg_sq.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":21,"updated_by":19},
// O2-NEXT: {"name":"fc2.weight.exp_avg.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":22,"updated_by":20},
// O2-NEXT: {"name":"fc2.weight.exp_avg_sq.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"ones","index":23,"updated_by":21}
// O2-NEXT: ],
// O2: "outputs": [
// O2: {"name":"fc2.weight.exp_avg_sq.scale","role":"scaling_state","shape":[],"dtype":"f32","index":21,"updates":23}
// O2-NEXT: ]

// SGD: "level": "O1",
// SGD: "state": [
// SGD-NEXT: {"name":"fc.weight","role":"param","shape":[8,4],"dtype":"f16","init":"normal(0,0.02)","index":0,"updated_by":1},
// SGD-NEXT: {"name":"fc.bias","role":"param","shape":[8],"dtype":"f32","init":"zeros","index":1,"updated_by":2},
// SGD-NEXT: {"name":"norm.running_mean","role":"buffer","shape":[8],"dtype":"f32","init":"zeros","index":2,"updated_by":3},
// SGD-NEXT: {"name":"fc.weight.momentum_buffer","role":"opt_state","shape":[8,4],"dtype":"f32","init":"zeros","index":3,"updated_by":4},
// SGD-NEXT: {"name":"fc.bias.momentum_buffer","role":"opt_state","shape":[8],"dtype":"f32","init":"zeros","index":4,"updated_by":5},
// SGD-NEXT: {"name":"step","role":"step","shape":[],"dtype":"i64","init":"zeros","index":5,"updated_by":6},
// SGD-NEXT: {"name":"fc.weight.scale","role":"scaling_state","shape":[],"dtype":"f32","init":"from_param","index":9,"updated_by":7}
// SGD-NEXT: ],
// SGD-NEXT: "inputs": [
// SGD-NEXT: {"name":"lr","role":"hyperparam","shape":[],"dtype":"f32","index":6},
// SGD-NEXT: {"name":"x","role":"input","shape":[2,4],"dtype":"f32","index":7},
// SGD-NEXT: {"name":"labels","role":"target","shape":[2],"dtype":"i64","index":8}
// SGD-NEXT: ],

// O0: "level": "O0",
// O0: {"name":"fc1.weight","role":"param","shape":[64,32],"dtype":"f32","init":"normal(0,0.02)","index":0,"updated_by":1},

// No msamp.init: "zeros". State that is not updated has no "updated_by"; an
// output without msamp.name takes the name of the state it updates, and the
// loss without one is named "loss".
// FALLBACK:      "state": [
// FALLBACK-NEXT: {"name":"w","role":"param","shape":[4],"dtype":"f32","init":"zeros","index":0,"updated_by":1},
// FALLBACK-NEXT: {"name":"frozen","role":"buffer","shape":[2,2],"dtype":"bf16","init":"ones","index":1}
// FALLBACK-NEXT: ],
// FALLBACK-NEXT: "inputs": [
// FALLBACK-NEXT: {"name":"rank","role":"rank","shape":[],"dtype":"i32","index":2}
// FALLBACK-NEXT: ],
// FALLBACK-NEXT: "outputs": [
// FALLBACK-NEXT: {"name":"loss","role":"loss","shape":[],"dtype":"f32","index":0},
// FALLBACK-NEXT: {"name":"w","role":"param","shape":[4],"dtype":"f32","index":1,"updates":0}
// FALLBACK-NEXT: ]

// IOERR: error: --msamp-write-manifest: cannot open '{{.*}}missing/dir/m.json.tmp':
// BAD-ROLE: bad-role.mlir:3:5: error: --msamp-write-manifest: argument #1 has unknown msamp.role "weights"; the runtime cannot bind it
// BAD-UPDATES: error: --msamp-write-manifest: result #1 has msamp.updates = 5, out of range
// NO-STEP: error: --msamp-write-manifest needs a compiled train step
// NO-FILE: --msamp-emit-manifest needs a file name: --msamp-emit-manifest=FILE

//--- fallback.mlir
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
    %frozen: tensor<2x2xbf16> {msamp.role = "buffer", msamp.name = "frozen", msamp.init = "ones"},
    %rank: tensor<i32> {msamp.role = "rank", msamp.name = "rank"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.updates = 0 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

//--- bad-role.mlir
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
    %v: tensor<4xf32> {msamp.role = "weights", msamp.name = "v"})
    -> (tensor<f32> {msamp.role = "loss"})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

//--- bad-updates.mlir
func.func @train_step(
    %w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"})
    -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.updates = 5 : i64})
    attributes {msamp.kind = "train_step", msamp.level = "O0"} {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

//--- no-step.mlir
func.func @f() {
  return
}
