// Outputs that would lose work are refused before the first step, and every
// write error is an error (issue 16): --save naming a directory, --save over a
// file the run reads (the compiled step's train_step.so, --data), --log-json on
// a full disk (exit 0 with an empty log before).
// RUN: rm -rf %t && mkdir -p %t/ckdir
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 -o %t/model
// RUN: cp %t/model/train_step.so %t/train_step.so.orig
//
// RUN: not msamp-run %t/model --synthetic --steps 2 --save %t/ckdir 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: msamp-run: error: --save {{.*}}ckdir is a directory; it names the checkpoint file
// DIR-NOT: step 1/
//
// RUN: not msamp-run %t/model --synthetic --steps 2 --save %t/model/train_step.so 2>&1 | FileCheck %s --check-prefix=SO
// RUN: cmp %t/model/train_step.so %t/train_step.so.orig
// SO: msamp-run: error: --save {{.*}}model/train_step.so would overwrite '{{.*}}model/train_step.so', which this run reads
// SO-NOT: step 1/
//
// RUN: msamp-run %t/model --synthetic --steps 1 --quiet --save %t/data.safetensors
// RUN: not msamp-run %t/model --data %t/data.safetensors --steps 1 --save %t/data.safetensors 2>&1 | FileCheck %s --check-prefix=DATA
// DATA: msamp-run: error: --save {{.*}}data.safetensors would overwrite '{{.*}}data.safetensors', which this run reads
//
// Resuming from and saving to one file is allowed (it continues a run).
// RUN: msamp-run %t/model --synthetic --steps 2 --quiet --resume %t/data.safetensors --save %t/data.safetensors
//
// RUN: not msamp-run %t/model --synthetic --steps 2 --log-json /dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: msamp-run: error: cannot write --log-json '/dev/full': No space left on device
// FULL-NOT: step 2/
//
// A FILE.tmp left by a killed save is removed at start-up.
// RUN: printf 'partial' > %t/ck.safetensors.tmp
// RUN: msamp-run %t/model --synthetic --steps 1 --save %t/ck.safetensors | FileCheck %s --check-prefix=STALE
// STALE: msamp-run: removed '{{.*}}ck.safetensors.tmp', left by a save that did not finish
// STALE: step 1/1
