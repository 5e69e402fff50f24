// msamp-compile records the size and sha256 of train_step.so in
// manifest.json ("object"); a session checks them before loading the object
// (issue 16: a truncated train_step.so was a SIGBUS at the first step).
// RUN: rm -rf %t && msamp-compile %S/../../Transforms/Inputs/mlp.mlir --opt-level O0 -o %t/model
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/model/manifest.json
// MANIFEST: "object": {"file": "train_step.so", "bytes": {{[0-9]+}}, "sha256": "{{[0-9a-f]+}}"}
//
// RUN: msamp-run %t/model --synthetic --steps 1 --quiet
//
// RUN: cp -r %t/model %t/truncated && %python -c "import os; os.truncate('%t/truncated/train_step.so', 4096)"
// RUN: not msamp-run %t/truncated --synthetic --steps 1 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: msamp-run: error: '{{.*}}truncated/train_step.so' has 4096 bytes, but manifest.json records {{[0-9]+}} (truncated or replaced: compile the model again)
//
// RUN: cp -r %t/model %t/modified && %python -c "f = open('%t/modified/train_step.so', 'r+b'); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 1]))"
// RUN: not msamp-run %t/modified --synthetic --steps 1 2>&1 | FileCheck %s --check-prefix=MODIFIED
// MODIFIED: msamp-run: error: '{{.*}}modified/train_step.so' does not match the sha256 manifest.json records (modified or replaced: compile the model again)
