// libmsamp_session loaded through ctypes (RTLD_LOCAL, as the Python package
// will load it) can open and run a compiled step, and gives the same losses
// as msamp-run with the same seed and synthetic batches.
// RUN: rm -rf %t && mkdir -p %t
// RUN: msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O1 -o %t/compiled > /dev/null
// RUN: %python %S/Inputs/ctypes_session.py %msamp_lib_dir %t/compiled > %t/ctypes.txt
// RUN: FileCheck %s < %t/ctypes.txt
// RUN: msamp-run %t/compiled --synthetic --steps 3 --quiet --log-json %t/log.jsonl
// RUN: %python -c "import json; [print('step %%d loss %%.6f' %% (e['step'], e['loss'])) for e in map(json.loads, open('%t/log.jsonl'))]" > %t/run.txt
// RUN: grep '^step' %t/ctypes.txt | diff - %t/run.txt

// CHECK: level O1
// CHECK-NEXT: step 1 loss {{[0-9]+\.[0-9]+}}
// CHECK-NEXT: step 2 loss {{[0-9]+\.[0-9]+}}
// CHECK-NEXT: step 3 loss {{[0-9]+\.[0-9]+}}
