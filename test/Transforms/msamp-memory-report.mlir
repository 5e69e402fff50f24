// --msamp-memory-report holds the hand-written train steps to the level table
// of docs/Architecture.md 4 (16 / ~11 / ~6 bytes per param for a model whose params
// are all GEMM weights), from the IR alone, in both formats. The model has
// 3072 params; the O1 scaling state is 2 weight scales (8 bytes) and 4
// delayed-scaled tensors with a scale and a 16-entry amax history (4 * 68
// bytes); O2 adds 4 moment scales (16 bytes). The step counter is 8 bytes.

// RUN: msamp-opt %S/Inputs/train-step-o0.mlir --msamp-memory-report=format=json -o %t.ir | FileCheck %s --check-prefix=O0-JSON
// RUN: FileCheck %s --check-prefix=IR < %t.ir
// RUN: msamp-opt %S/Inputs/train-step-o0.mlir --msamp-memory-report -o /dev/null | FileCheck %s --check-prefix=O0-TABLE
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-memory-report="format=json" -o /dev/null | FileCheck %s --check-prefix=O1-JSON
// RUN: msamp-opt %S/Inputs/train-step-o1.mlir --msamp-memory-report="format=table" -o /dev/null | FileCheck %s --check-prefix=O1-TABLE
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=O2-JSON
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-memory-report -o /dev/null | FileCheck %s --check-prefix=O2-TABLE
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=SGD-JSON
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-memory-report -o /dev/null | FileCheck %s --check-prefix=SGD-TABLE

// The JSON is valid, has the keys of docs/Interfaces.md 4 in order, and its
// figures add up.
// RUN: msamp-opt %S/Inputs/train-step-o2.mlir --msamp-memory-report=format=json -o /dev/null > %t.o2.json
// RUN: msamp-opt %S/Inputs/train-step-sgd.mlir --msamp-memory-report=format=json -o /dev/null > %t.sgd.json
// RUN: %python -c "import json, sys; \
// RUN:   keys = ['weights', 'master_weights', 'weight_grads', 'optimizer_m', 'optimizer_v', 'scaling_state', 'other_state']; \
// RUN:   reports = [json.load(open(f)) for f in sys.argv[1:]]; \
// RUN:   assert all(list(r) == ['level', 'params', 'bytes_per_param', 'categories'] for r in reports); \
// RUN:   assert all(list(r['categories']) == keys for r in reports); \
// RUN:   assert all(list(c) == ['dtype', 'bytes', 'bytes_per_param'] for r in reports for c in r['categories'].values()); \
// RUN:   total = lambda r: sum(c['bytes'] for c in r['categories'].values()); \
// RUN:   assert all(abs(total(r) / r['params'] - r['bytes_per_param']) < 1e-12 for r in reports); \
// RUN:   print('valid', len(reports))" %t.o2.json %t.sgd.json | FileCheck %s --check-prefix=PY
// PY: valid 2

// Errors.
// RUN: not msamp-opt %S/Inputs/train-step-o0.mlir --msamp-memory-report=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-FORMAT
// RUN: not msamp-opt %s --msamp-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-STEP

// The report goes to stdout, the IR to -o, untouched.
// IR: func.func @train_step
// IR-SAME: msamp.level = "O0"

// O0: f32 weights, gradients and moments: 4 + 4 + 4 + 4.
// O0-JSON:      {
// O0-JSON-NEXT:   "level": "O0",
// O0-JSON-NEXT:   "params": 3072,
// O0-JSON-NEXT:   "bytes_per_param": 16.002604166666668,
// O0-JSON-NEXT:   "categories": {
// O0-JSON-NEXT:     "weights": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O0-JSON-NEXT:     "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// O0-JSON-NEXT:     "weight_grads": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O0-JSON-NEXT:     "optimizer_m": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O0-JSON-NEXT:     "optimizer_v": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O0-JSON-NEXT:     "scaling_state": {"dtype":"none","bytes":0,"bytes_per_param":0},
// O0-JSON-NEXT:     "other_state": {"dtype":"i64","bytes":8,"bytes_per_param":0.0026041666666666665}
// O0-JSON-NEXT:   }
// O0-JSON-NEXT: }
// O0-JSON-NOT: {{.}}

// O0-TABLE:      msamp memory report: @train_step, level O0, 3072 params
// O0-TABLE-NEXT: category       dtype     bytes  bytes/param
// O0-TABLE-NEXT: weights        f32       12288       4.0000
// O0-TABLE-NEXT: master_weights none          0       0.0000
// O0-TABLE-NEXT: weight_grads   f32       12288       4.0000
// O0-TABLE-NEXT: optimizer_m    f32       12288       4.0000
// O0-TABLE-NEXT: optimizer_v    f32       12288       4.0000
// O0-TABLE-NEXT: scaling_state  none          0       0.0000
// O0-TABLE-NEXT: other_state    i64           8       0.0026
// O0-TABLE-NEXT: total                    49160      16.0026
// O0-TABLE-NOT: {{.}}

// O1: FP16 + scale weights, FP8 E4M3 gradients, f32 moments: 2 + 1 + 4 + 4.
// O1-JSON:      "level": "O1",
// O1-JSON-NEXT: "params": 3072,
// O1-JSON-NEXT: "bytes_per_param": 11.09375,
// O1-JSON:      "weights": {"dtype":"f16","bytes":6144,"bytes_per_param":2},
// O1-JSON-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// O1-JSON-NEXT: "weight_grads": {"dtype":"f8E4M3FN","bytes":3072,"bytes_per_param":1},
// O1-JSON-NEXT: "optimizer_m": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O1-JSON-NEXT: "optimizer_v": {"dtype":"f32","bytes":12288,"bytes_per_param":4},
// O1-JSON-NEXT: "scaling_state": {"dtype":"f32","bytes":280,"bytes_per_param":0.09114583333333333},
// O1-JSON-NEXT: "other_state": {"dtype":"i64","bytes":8,"bytes_per_param":0.0026041666666666665}

// O1-TABLE:      level O1, 3072 params
// O1-TABLE:      weights        f16        6144       2.0000
// O1-TABLE-NEXT: master_weights none          0       0.0000
// O1-TABLE-NEXT: weight_grads   f8E4M3FN   3072       1.0000
// O1-TABLE-NEXT: optimizer_m    f32       12288       4.0000
// O1-TABLE-NEXT: optimizer_v    f32       12288       4.0000
// O1-TABLE-NEXT: scaling_state  f32         280       0.0911
// O1-TABLE-NEXT: other_state    i64           8       0.0026
// O1-TABLE-NEXT: total                    34080      11.0938

// O2: O1 plus FP8 E4M3 first and FP16 second moments: 2 + 1 + 1 + 2.
// O2-JSON:      "level": "O2",
// O2-JSON-NEXT: "params": 3072,
// O2-JSON-NEXT: "bytes_per_param": 6.098958333333333,
// O2-JSON:      "weights": {"dtype":"f16","bytes":6144,"bytes_per_param":2},
// O2-JSON-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// O2-JSON-NEXT: "weight_grads": {"dtype":"f8E4M3FN","bytes":3072,"bytes_per_param":1},
// O2-JSON-NEXT: "optimizer_m": {"dtype":"f8E4M3FN","bytes":3072,"bytes_per_param":1},
// O2-JSON-NEXT: "optimizer_v": {"dtype":"f16","bytes":6144,"bytes_per_param":2},
// O2-JSON-NEXT: "scaling_state": {"dtype":"f32","bytes":296,"bytes_per_param":0.09635416666666667},
// O2-JSON-NEXT: "other_state": {"dtype":"i64","bytes":8,"bytes_per_param":0.0026041666666666665}

// O2-TABLE:      level O2, 3072 params
// O2-TABLE:      weights        f16        6144       2.0000
// O2-TABLE-NEXT: master_weights none          0       0.0000
// O2-TABLE-NEXT: weight_grads   f8E4M3FN   3072       1.0000
// O2-TABLE-NEXT: optimizer_m    f8E4M3FN   3072       1.0000
// O2-TABLE-NEXT: optimizer_v    f16        6144       2.0000
// O2-TABLE-NEXT: scaling_state  f32         296       0.0964
// O2-TABLE-NEXT: other_state    i64           8       0.0026
// O2-TABLE-NEXT: total                    18736       6.0990

// SGD + momentum, 40 params: FP16 weight (64 bytes) + f32 bias (32), FP8
// weight gradient (32) + f32 bias gradient (32), f32 momentum buffers (160),
// one weight scale (4), the step (8) and an f32 buffer (32).
// SGD-JSON:      "level": "O1",
// SGD-JSON-NEXT: "params": 40,
// SGD-JSON-NEXT: "bytes_per_param": 9.1,
// SGD-JSON:      "weights": {"dtype":"mixed","bytes":96,"bytes_per_param":2.4},
// SGD-JSON-NEXT: "master_weights": {"dtype":"none","bytes":0,"bytes_per_param":0},
// SGD-JSON-NEXT: "weight_grads": {"dtype":"mixed","bytes":64,"bytes_per_param":1.6},
// SGD-JSON-NEXT: "optimizer_m": {"dtype":"f32","bytes":160,"bytes_per_param":4},
// SGD-JSON-NEXT: "optimizer_v": {"dtype":"none","bytes":0,"bytes_per_param":0},
// SGD-JSON-NEXT: "scaling_state": {"dtype":"f32","bytes":4,"bytes_per_param":0.1},
// SGD-JSON-NEXT: "other_state": {"dtype":"mixed","bytes":40,"bytes_per_param":1}

// SGD-TABLE:      level O1, 40 params
// SGD-TABLE:      weights        mixed        96       2.4000
// SGD-TABLE:      weight_grads   mixed        64       1.6000
// SGD-TABLE-NEXT: optimizer_m    f32         160       4.0000
// SGD-TABLE-NEXT: optimizer_v    none          0       0.0000
// SGD-TABLE:      other_state    mixed        40       1.0000
// SGD-TABLE-NEXT: total                      364       9.1000

// BAD-FORMAT: for the --format option: Cannot find option named 'xml'!
// NO-STEP: error: --msamp-memory-report needs a compiled train step
