// msamp-run's command line, compilation and checkpoint errors: every misuse
// is a message and a non-zero exit, never a crash, and never a partial
// checkpoint. (Errors about data files are in errors.mlir.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: printf 'garbage' > %t/garbage.safetensors
//
// The command line; conflicting options are refused before any file is read.
// RUN: not msamp-run 2>&1 | FileCheck %s --check-prefix=NOMODEL
// RUN: not msamp-run %t/nope.mlir --synthetic 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not msamp-run %s --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not msamp-run %s --steps -3 2>&1 | FileCheck %s --check-prefix=STEPS
// RUN: not msamp-run %s --steps 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not msamp-run %s %s 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: not msamp-run %s --backend cuda --cuda-chip sm_80 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not msamp-run %s --backend tpu 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not msamp-run %s --opt-level O9 2>&1 | FileCheck %s --check-prefix=O9
// RUN: not msamp-run %s --opt-level O3 --pipeline-options "world-size=3" --synthetic 2>&1 | FileCheck %s --check-prefix=O3WORLD
// RUN: not msamp-run %s --clip-grad-norm 0 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not msamp-run %s --clip-grad-norm=-1 2>&1 | FileCheck %s --check-prefix=CLIPNEG
// RUN: not msamp-run %s --data %t/data.safetensors --synthetic 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not msamp-run %s --init %t/init.safetensors --resume %t/x 2>&1 | FileCheck %s --check-prefix=INITRESUME
// RUN: not msamp-run %s --save-every 2 2>&1 | FileCheck %s --check-prefix=SAVEEVERY
// RUN: not msamp-run %s --log-step-time 2>&1 | FileCheck %s --check-prefix=STEPTIME
// RUN: not msamp-run %s --threads -1 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: msamp-run --version | FileCheck %s --check-prefix=VERSION
// RUN: msamp-run --help | FileCheck %s --check-prefix=HELP
//
// Compilation and data.
// RUN: not msamp-run %s --synthetic 2>&1 | FileCheck %s --check-prefix=NOGRAPH
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 2>&1 | FileCheck %s --check-prefix=NODATA
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/garbage.safetensors 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --data %t/nothing.safetensors 2>&1 | FileCheck %s --check-prefix=NODATAFILE
//
// Checkpoints of another level or another graph (other pipeline options) are
// refused, naming both values; a checkpoint that cannot be written fails the
// run before it trains. (The atomic write itself is tested by the unit tests
// in unittests/Session/CheckpointTest.cpp.)
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --synthetic --steps 2 --quiet --save %t/o1.safetensors
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O2 --synthetic --resume %t/o1.safetensors 2>&1 | FileCheck %s --check-prefix=LEVEL
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --pipeline-options "fp8-format=e4m3" --synthetic --resume %t/o1.safetensors 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: not msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 --synthetic --steps 1 --quiet --save %t/no-dir/ck.safetensors 2>&1 | FileCheck %s --check-prefix=SAVEDIR
// RUN: not ls %t/no-dir
//
// --threads reaches the runtime's knob (results never depend on it).
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --synthetic --steps 3 --threads 1 --quiet --log-json %t/t1.jsonl
// RUN: msamp-run %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 --synthetic --steps 3 --threads 2 --quiet --log-json %t/t2.jsonl
// RUN: diff %t/t1.jsonl %t/t2.jsonl

// NOMODEL: msamp-run: error: no model given
// MISSING: msamp-run: error: cannot read model '{{.*}}nope.mlir': No such file or directory
// UNKNOWN: msamp-run: error: unknown option '--frobnicate' (see --help)
// STEPS: msamp-run: error: invalid value '-3' for --steps: expected a non-negative integer
// NOVALUE: msamp-run: error: option '--steps' needs a value
// TWO: msamp-run: error: unexpected argument
// CUDA: msamp-run: error: --cuda-chip must be sm_90 or sm_89, got 'sm_80'
// BACKEND: msamp-run: error: unknown backend 'tpu' (expected cpu or cuda)
// O9: msamp-run: error: --opt-level must be O0, O1, O2, O3, amp-bf16, amp-fp16 or te, got 'O9'
// O3WORLD: msamp-run: error: --pipeline-options asks for world-size=3, but the launcher started 1 rank(s)
// CLIP: msamp-run: error: invalid value '0' for --clip-grad-norm: expected a positive number
// CLIPNEG: msamp-run: error: invalid value '-1' for --clip-grad-norm: expected a positive number
// BOTH: msamp-run: error: --data and --synthetic exclude each other
// INITRESUME: msamp-run: error: --init and --resume exclude each other
// SAVEEVERY: msamp-run: error: --save-every needs --save FILE
// STEPTIME: msamp-run: error: --log-step-time needs --log-json FILE
// THREADS: msamp-run: error: invalid value '-1' for --threads: expected a non-negative integer
// VERSION: msamp-run (msamp 0.1.0, runtime ABI 5)
// HELP: usage: msamp-run MODEL [options]
// NOGRAPH: has neither a forward_backward graph nor a compiled train_step
// NOGRAPH: msamp-run: error: compiling '{{.*}}cli-errors.mlir' at O2 failed (msamp-compile exited with status 1)
// NODATA: msamp-run: error: the model reads 'x', 'y': give --data FILE.safetensors or --synthetic
// GARBAGE: msamp-run: error: {{.*}}garbage.safetensors: not a safetensors file: 7 bytes, fewer than the 8-byte header length
// NODATAFILE: msamp-run: error: cannot open '{{.*}}nothing.safetensors': No such file or directory
// LEVEL: msamp-run: error: cannot resume from '{{.*}}o1.safetensors': the checkpoint was written at level O1, this run is at level O2
// GRAPH: msamp-run: error: cannot resume from '{{.*}}o1.safetensors': the checkpoint was written for graph sha256:{{[0-9a-f]+}}, this run is for graph sha256:{{[0-9a-f]+}} (a different model or different compile options)
// SAVEDIR: msamp-run: error: --save {{.*}}no-dir/ck.safetensors: cannot write to '{{.*}}no-dir': No such file or directory

func.func @not_a_graph() {
  return
}
