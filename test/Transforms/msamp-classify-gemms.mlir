// --msamp-classify-gemms: every GEMM gets msamp.gemm = {kind, layer,
// weight?, operand_roles} (docs/TrainStep.md 1) from dataflow alone, and
// every parameter used as a GEMM weight gets msamp.gemm_weight.
//
// The shared MLP example (fc1/fc2 fprop, fc2 wgrad and dgrad, fc1 wgrad).
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms | FileCheck %s --check-prefix=MLP
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=MLP-REMARK
// A compiled O0 train step is classified through its optimizer ops' grads:
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-synthesize-train-step --msamp-classify-gemms | FileCheck %s --check-prefix=STEP
//
// The graphs below: the attributes, the "why not a Linear GEMM" remarks
// (-verify-diagnostics), and the matcher's canonical form of each GEMM.
// RUN: msamp-opt %s -split-input-file --msamp-classify-gemms | FileCheck %s
// RUN: msamp-opt %s -split-input-file --msamp-classify-gemms --remarks-filter-missed=msamp -verify-diagnostics -o /dev/null
// RUN: msamp-opt %s -split-input-file --msamp-classify-gemms --remarks-filter-analyse=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORM
//
// Remarks are opt-in: a plain run prints nothing but the IR (the split-file
// driver still echoes this file's unmatched expected-remark lines, so the
// in-file graphs are checked for remark output only).
// RUN: msamp-opt %S/Inputs/mlp.mlir --msamp-classify-gemms -o /dev/null 2>&1 | count 0
// RUN: msamp-opt %s -split-input-file --msamp-classify-gemms -o /dev/null 2>&1 | not grep "remark: \["
//
// Pass statistics (num-gemms, ...) are compiled out of release builds of
// LLVM, Debian's included, so the counts are checked through the
// gemm-summary remark instead.

// MLP-LABEL: func.func @fwd_bwd(
// MLP-SAME:    %arg0: tensor<5x3xf32> {msamp.gemm_weight, msamp.name = "fc1.weight", msamp.role = "param"}
// MLP-SAME:    %arg1: tensor<5xf32> {msamp.name = "fc1.bias", msamp.role = "param"}
// MLP-SAME:    %arg2: tensor<2x5xf32> {msamp.gemm_weight, msamp.name = "fc2.weight", msamp.role = "param"}
// MLP-SAME:    %arg3: tensor<2xf32> {msamp.name = "fc2.bias", msamp.role = "param"}
// MLP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "fc1", operand_roles = ["activation", "weight"], weight = "fc1.weight"}} ins(%arg4, %arg0
// MLP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "fc2", operand_roles = ["activation", "weight"], weight = "fc2.weight"}}
// MLP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "fc2", operand_roles = ["grad_output", "activation"]}}
// MLP:         linalg.matmul {msamp.gemm = {kind = "dgrad", layer = "fc2", operand_roles = ["grad_output", "weight"], weight = "fc2.weight"}}
// MLP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "fc1", operand_roles = ["grad_output", "activation"]}} ins({{.*}}, %arg4

// Every MLP GEMM is a Linear GEMM: no missed remark, five analysis remarks.
// MLP-REMARK-NOT: [Missed]
// MLP-REMARK: mlp.mlir:31:11: remark: [Analysis] gemm | Category:msamp:classify-gemms | Function=fwd_bwd | Remark="fprop layer fc1", batched=false, form="lhs x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// MLP-REMARK: mlp.mlir:52:11: remark: [Analysis] gemm | {{.*}} | Remark="fprop layer fc2", batched=false, form="lhs x rhs^T"
// MLP-REMARK: mlp.mlir:109:12: remark: [Analysis] gemm | {{.*}} | Remark="wgrad layer fc2", batched=false, form="lhs^T x rhs"
// MLP-REMARK: mlp.mlir:116:12: remark: [Analysis] gemm | {{.*}} | Remark="dgrad layer fc2", batched=false, form="lhs x rhs"
// MLP-REMARK: mlp.mlir:140:12: remark: [Analysis] gemm | {{.*}} | Remark="wgrad layer fc1", batched=false, form="lhs^T x rhs"
// MLP-REMARK: mlp.mlir:11:3: remark: [Analysis] gemm-summary | Category:msamp:classify-gemms | Function=fwd_bwd | num-attention=0, num-dgrad=1, num-fprop=2, num-gemms=5, num-wgrad=2
// MLP-REMARK-NOT: [Missed]

// STEP-LABEL: func.func @train_step(
// STEP-SAME:    %arg0: tensor<5x3xf32> {msamp.gemm_weight,
// STEP-SAME:    %arg1: tensor<5xf32> {msamp.init
// STEP-SAME:    %arg2: tensor<2x5xf32> {msamp.gemm_weight,
// STEP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "fc1", operand_roles = ["activation", "weight"], weight = "fc1.weight"}}
// STEP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "fc2", operand_roles = ["activation", "weight"], weight = "fc2.weight"}}
// STEP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "fc2", operand_roles = ["grad_output", "activation"]}}
// STEP:         linalg.matmul {msamp.gemm = {kind = "dgrad", layer = "fc2", operand_roles = ["grad_output", "weight"], weight = "fc2.weight"}}
// STEP:         linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "fc1", operand_roles = ["grad_output", "activation"]}}

// Transposed operands everywhere: a JAX-layout first layer ([in, out]
// weight) written feature-major, and a second layer whose GEMMs all read
// both operands transposed, including weight-first operand orders.
func.func @transposed(
    %x: tensor<4x3xf32>  {msamp.role = "input", msamp.name = "x"},
    %w1: tensor<3x5xf32> {msamp.role = "param", msamp.name = "l1.weight"},
    %w2: tensor<2x5xf32> {msamp.role = "param", msamp.name = "l2.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<3x5xf32> {msamp.role = "grad", msamp.name = "l1.weight"},
        tensor<2x5xf32> {msamp.role = "grad", msamp.name = "l2.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.125 : f32
  // ht[i, b] = sum_k w1[k, i] x[b, k]: A = w1 as (k, m), B = x as (n, k).
  %e54 = tensor.empty() : tensor<5x4xf32>
  %f54 = linalg.fill ins(%zero : f32) outs(%e54 : tensor<5x4xf32>) -> tensor<5x4xf32>
  %ht = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%w1, %x : tensor<3x5xf32>, tensor<4x3xf32>)
      outs(%f54 : tensor<5x4xf32>) -> tensor<5x4xf32>
  // z[b, o] = sum_i ht[i, b] w2[o, i]
  %e42 = tensor.empty() : tensor<4x2xf32>
  %f42 = linalg.fill ins(%zero : f32) outs(%e42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%ht, %w2 : tensor<5x4xf32>, tensor<2x5xf32>)
      outs(%f42 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.reduce ins(%z : tensor<4x2xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
    }
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                          iterator_types = []}
      ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
  } -> tensor<f32>
  // dz = z / 4
  %dz = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x2xf32>) outs(%e42 : tensor<4x2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
  } -> tensor<4x2xf32>
  // gw2[o, i] = sum_b dz[b, o] ht[i, b]
  %e25 = tensor.empty() : tensor<2x5xf32>
  %f25 = linalg.fill ins(%zero : f32) outs(%e25 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %gw2 = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dz, %ht : tensor<4x2xf32>, tensor<5x4xf32>)
      outs(%f25 : tensor<2x5xf32>) -> tensor<2x5xf32>
  // dht[i, b] = sum_o w2[o, i] dz[b, o]
  %dht = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%w2, %dz : tensor<2x5xf32>, tensor<4x2xf32>)
      outs(%f54 : tensor<5x4xf32>) -> tensor<5x4xf32>
  // gw1[k, i] = sum_b x[b, k] dht[i, b]
  %e35 = tensor.empty() : tensor<3x5xf32>
  %f35 = linalg.fill ins(%zero : f32) outs(%e35 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %gw1 = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dht : tensor<4x3xf32>, tensor<5x4xf32>)
      outs(%f35 : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %loss, %gw1, %gw2 : tensor<f32>, tensor<3x5xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @transposed(
// CHECK-SAME:    %arg0: tensor<4x3xf32> {msamp.name = "x", msamp.role = "input"}
// CHECK-SAME:    %arg1: tensor<3x5xf32> {msamp.gemm_weight, msamp.name = "l1.weight"
// CHECK-SAME:    %arg2: tensor<2x5xf32> {msamp.gemm_weight, msamp.name = "l2.weight"
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "l1", operand_roles = ["weight", "activation"], weight = "l1.weight"}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "l2", operand_roles = ["activation", "weight"], weight = "l2.weight"}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "l2", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "dgrad", layer = "l2", operand_roles = ["weight", "grad_output"], weight = "l2.weight"}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "l1", operand_roles = ["activation", "grad_output"]}}

// FORM: Function=transposed | Remark="fprop layer l1", batched=false, form="lhs^T x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=transposed | Remark="fprop layer l2", batched=false, form="lhs^T x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=transposed | Remark="wgrad layer l2", batched=false, form="lhs^T x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=transposed | Remark="dgrad layer l2", batched=false, form="lhs^T x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=transposed | Remark="wgrad layer l1", batched=false, form="lhs^T x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: gemm-summary | Category:msamp:classify-gemms | Function=transposed | num-attention=0, num-dgrad=1, num-fprop=2, num-gemms=5, num-wgrad=2

// -----

// A linalg.generic contraction that writes its result transposed: the
// output map is (n, m), so the canonical form swaps lhs and rhs and flips
// both transposes. The body multiplies in the other order and accumulates
// with the output first.
func.func @generic_nm(
    %x: tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"},
    %w: tensor<2x3xf32> {msamp.role = "param", msamp.name = "proj.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<2x3xf32> {msamp.role = "grad", msamp.name = "proj.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.125 : f32
  %e24 = tensor.empty() : tensor<2x4xf32>
  %f24 = linalg.fill ins(%zero : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // zt[o, b] = sum_i x[b, i] w[o, i]
  %zt = linalg.generic {
      indexing_maps = [affine_map<(b, o, i) -> (b, i)>, affine_map<(b, o, i) -> (o, i)>,
                       affine_map<(b, o, i) -> (o, b)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x3xf32>, tensor<2x3xf32>) outs(%f24 : tensor<2x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %b, %a : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%zt : tensor<2x4xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  // d(loss)/d(zt) is a constant here.
  %dzt = linalg.fill ins(%c : f32) outs(%e24 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // gw[o, i] = sum_b dzt[o, b] x[b, i], a generic in the standard orientation.
  %e23 = tensor.empty() : tensor<2x3xf32>
  %f23 = linalg.fill ins(%zero : f32) outs(%e23 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %gw = linalg.generic {
      indexing_maps = [affine_map<(o, i, b) -> (o, b)>, affine_map<(o, i, b) -> (b, i)>,
                       affine_map<(o, i, b) -> (o, i)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dzt, %x : tensor<2x4xf32>, tensor<4x3xf32>) outs(%f23 : tensor<2x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2x3xf32>
  return %loss, %gw : tensor<f32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @generic_nm(
// CHECK-SAME:    %arg1: tensor<2x3xf32> {msamp.gemm_weight, msamp.name = "proj.weight"
// CHECK: linalg.generic {{.*}} attrs = {msamp.gemm = {kind = "fprop", layer = "proj", operand_roles = ["activation", "weight"], weight = "proj.weight"}}
// CHECK: linalg.generic {{.*}} attrs = {msamp.gemm = {kind = "wgrad", layer = "proj", operand_roles = ["grad_output", "activation"]}}

// The (n, m) output: lhs is the op's input 1 (the weight), rhs its input 0.
// FORM: Function=generic_nm | Remark="fprop layer proj", batched=false, form="lhs x rhs^T", lhs="input 1", rhs="input 0", zero_init=true
// FORM: Function=generic_nm | Remark="wgrad layer proj", batched=false, form="lhs x rhs", lhs="input 0", rhs="input 1", zero_init=true

// -----

// Operands produced by transposes: a linalg.transpose of the weight, and a
// generic that transposes the output gradient. The matcher reads through
// both (flipping the transpose flag) and the weight is still the weight.
func.func @transpose_producers(
    %x: tensor<4x3xf32> {msamp.role = "input", msamp.name = "x"},
    %w: tensor<5x3xf32> {msamp.role = "param", msamp.name = "fc.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<5x3xf32> {msamp.role = "grad", msamp.name = "fc.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.05 : f32
  %e35 = tensor.empty() : tensor<3x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x3xf32>) outs(%e35 : tensor<3x5xf32>) permutation = [1, 0]
  %e45 = tensor.empty() : tensor<4x5xf32>
  %f45 = linalg.fill ins(%zero : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %z = linalg.matmul ins(%x, %wt : tensor<4x3xf32>, tensor<3x5xf32>)
                     outs(%f45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%z : tensor<4x5xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %dz = linalg.fill ins(%c : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e54 = tensor.empty() : tensor<5x4xf32>
  %dzt = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%dz : tensor<4x5xf32>) outs(%e54 : tensor<5x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
  } -> tensor<5x4xf32>
  %e53 = tensor.empty() : tensor<5x3xf32>
  %f53 = linalg.fill ins(%zero : f32) outs(%e53 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %gw = linalg.matmul ins(%dzt, %x : tensor<5x4xf32>, tensor<4x3xf32>)
                      outs(%f53 : tensor<5x3xf32>) -> tensor<5x3xf32>
  // dx = dz @ w: through the transpose twice is no transpose.
  %e43 = tensor.empty() : tensor<4x3xf32>
  %f43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e53b = tensor.empty() : tensor<5x3xf32>
  %wtt = linalg.transpose ins(%wt : tensor<3x5xf32>) outs(%e53b : tensor<5x3xf32>) permutation = [1, 0]
  %dx = linalg.matmul ins(%dz, %wtt : tensor<4x5xf32>, tensor<5x3xf32>)
                      outs(%f43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %loss, %gw : tensor<f32>, tensor<5x3xf32>
}

// CHECK-LABEL: func.func @transpose_producers(
// CHECK-SAME:    %arg1: tensor<5x3xf32> {msamp.gemm_weight, msamp.name = "fc.weight"
// CHECK: linalg.matmul {msamp.gemm = {kind = "fprop", layer = "fc", operand_roles = ["activation", "weight"], weight = "fc.weight"}}
// CHECK: linalg.matmul {msamp.gemm = {kind = "wgrad", layer = "fc", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.matmul {msamp.gemm = {kind = "dgrad", layer = "fc", operand_roles = ["grad_output", "weight"], weight = "fc.weight"}}

// FORM: Function=transpose_producers | Remark="fprop layer fc", batched=false, form="lhs x rhs^T", lhs="input 0", rhs="input 1 via transpose", zero_init=true
// FORM: Function=transpose_producers | Remark="wgrad layer fc", batched=false, form="lhs^T x rhs", lhs="input 0 via transpose", rhs="input 1", zero_init=true
// FORM: Function=transpose_producers | Remark="dgrad layer fc", batched=false, form="lhs x rhs", lhs="input 0", rhs="input 1 via transpose", zero_init=true

// -----

// Attention-like batch GEMMs. The q and k projections are batch_matmuls
// with a broadcast weight (fprop); scores = q k^T (through a batched
// linalg.transpose) and context = p v are activation x activation
// (attention_fwd). Backward: dp, dq and dk reach the projection weights'
// gradients only through the projections' GEMMs (attention_bwd); dv feeds
// no gradient since v is the input itself (other). The q projection's weight
// gradient is a 2-d GEMM on collapsed tensors, the k projection's a batched
// GEMM summed over the batch (both wgrad).
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bkm = affine_map<(b, m, n, k) -> (b, k, m)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
func.func @attention(
    %x: tensor<2x3x4xf32>  {msamp.role = "input", msamp.name = "x"},
    %wq: tensor<4x4xf32>   {msamp.role = "param", msamp.name = "attn.q.weight"},
    %wk: tensor<4x4xf32>   {msamp.role = "param", msamp.name = "attn.k.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x4xf32> {msamp.role = "grad", msamp.name = "attn.q.weight"},
        tensor<4x4xf32> {msamp.role = "grad", msamp.name = "attn.k.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.04 : f32
  %e244 = tensor.empty() : tensor<2x4x4xf32>
  %e234 = tensor.empty() : tensor<2x3x4xf32>
  %f234 = linalg.fill ins(%zero : f32) outs(%e234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %e233 = tensor.empty() : tensor<2x3x3xf32>
  %f233 = linalg.fill ins(%zero : f32) outs(%e233 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  // q = x wq^T, k = x wk^T
  %wqb = linalg.broadcast ins(%wq : tensor<4x4xf32>) outs(%e244 : tensor<2x4x4xf32>) dimensions = [0]
  %q = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
      ins(%x, %wqb : tensor<2x3x4xf32>, tensor<2x4x4xf32>) outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %wkb = linalg.broadcast ins(%wk : tensor<4x4xf32>) outs(%e244 : tensor<2x4x4xf32>) dimensions = [0]
  %k = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
      ins(%x, %wkb : tensor<2x3x4xf32>, tensor<2x4x4xf32>) outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // s = q k^T, p = exp(s), ctx = p x
  %e243 = tensor.empty() : tensor<2x4x3xf32>
  %kt = linalg.transpose ins(%k : tensor<2x3x4xf32>) outs(%e243 : tensor<2x4x3xf32>) permutation = [0, 2, 1]
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="activation x activation GEMM (attention): no operand is a parameter; kept in high precision unless fp8-attention=true", Remark="GEMM gemm2 classified attention_fwd"}}
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x3x4xf32>, tensor<2x4x3xf32>)
      outs(%f233 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x3xf32>) outs(%e233 : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.exp %a : f32
      linalg.yield %r : f32
  } -> tensor<2x3x3xf32>
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="activation x activation GEMM (attention): no operand is a parameter; kept in high precision unless fp8-attention=true", Remark="GEMM gemm3 classified attention_fwd"}}
  %ctx = linalg.batch_matmul ins(%p, %x : tensor<2x3x3xf32>, tensor<2x3x4xf32>)
      outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%ctx : tensor<2x3x4xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1, 2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  // Backward.
  %dctx = linalg.fill ins(%c : f32) outs(%e234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="activation x activation GEMM (attention backward): no operand is a parameter and the result reaches parameter gradients only through other GEMMs; kept in high precision unless fp8-attention=true", Remark="GEMM gemm4 classified attention_bwd"}}
  %dp = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
      ins(%dctx, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%f233 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="backward GEMM with no parameter operand that reaches no parameter gradient: not a Linear GEMM; kept in high precision", Remark="GEMM gemm5 classified other"}}
  %dv = linalg.batch_matmul indexing_maps = [#bkm, #bkn, #bmn]
      ins(%p, %dctx : tensor<2x3x3xf32>, tensor<2x3x4xf32>) outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %ds = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dp, %p : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e233 : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<2x3x3xf32>
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="activation x activation GEMM (attention backward): no operand is a parameter and the result reaches parameter gradients only through other GEMMs; kept in high precision unless fp8-attention=true", Remark="GEMM gemm6 classified attention_bwd"}}
  %dq = linalg.batch_matmul ins(%ds, %k : tensor<2x3x3xf32>, tensor<2x3x4xf32>)
      outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=attention | Reason="activation x activation GEMM (attention backward): no operand is a parameter and the result reaches parameter gradients only through other GEMMs; kept in high precision unless fp8-attention=true", Remark="GEMM gemm7 classified attention_bwd"}}
  %dk = linalg.batch_matmul indexing_maps = [#bkm, #bkn, #bmn]
      ins(%ds, %q : tensor<2x3x3xf32>, tensor<2x3x4xf32>) outs(%f234 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // gwq = dq2^T x2 on [batch * seq, 4] views
  %dq2 = tensor.collapse_shape %dq [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %f44 = linalg.fill ins(%zero : f32) outs(%e44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %gwq = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dq2, %x2 : tensor<6x4xf32>, tensor<6x4xf32>) outs(%f44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  // gwk = sum_b dk[b]^T x[b]
  %f244 = linalg.fill ins(%zero : f32) outs(%e244 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %gwkb = linalg.batch_matmul indexing_maps = [#bkm, #bkn, #bmn]
      ins(%dk, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%f244 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %gwk = linalg.reduce ins(%gwkb : tensor<2x4x4xf32>) outs(%f44 : tensor<4x4xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %loss, %gwq, %gwk : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %arg1: tensor<4x4xf32> {msamp.gemm_weight, msamp.name = "attn.q.weight"
// CHECK-SAME:    %arg2: tensor<4x4xf32> {msamp.gemm_weight, msamp.name = "attn.k.weight"
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "attn.q", operand_roles = ["activation", "weight"], weight = "attn.q.weight"}}
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "attn.k", operand_roles = ["activation", "weight"], weight = "attn.k.weight"}}
// CHECK: linalg.batch_matmul {msamp.gemm = {kind = "attention_fwd", layer = "gemm2", operand_roles = ["activation", "activation"]}}
// CHECK: linalg.batch_matmul {msamp.gemm = {kind = "attention_fwd", layer = "gemm3", operand_roles = ["activation", "activation"]}}
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "attention_bwd", layer = "gemm4", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "other", layer = "gemm5", operand_roles = ["activation", "grad_output"]}}
// CHECK: linalg.batch_matmul {msamp.gemm = {kind = "attention_bwd", layer = "gemm6", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "attention_bwd", layer = "gemm7", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "attn.q", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.batch_matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "attn.k", operand_roles = ["grad_output", "activation"]}}

// FORM: Function=attention | Remark="fprop layer attn.q", batched=true, form="lhs x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=attention | Remark="fprop layer attn.k", batched=true, form="lhs x rhs^T"
// FORM: Function=attention | Remark="attention_fwd layer gemm2", batched=true, form="lhs x rhs^T", lhs="input 0", rhs="input 1 via transpose", zero_init=true
// FORM: Function=attention | Remark="attention_fwd layer gemm3", batched=true, form="lhs x rhs"
// FORM: Function=attention | Remark="attention_bwd layer gemm4", batched=true, form="lhs x rhs^T"
// FORM: Function=attention | Remark="other layer gemm5", batched=true, form="lhs^T x rhs"
// FORM: Function=attention | Remark="attention_bwd layer gemm6", batched=true, form="lhs x rhs"
// FORM: Function=attention | Remark="attention_bwd layer gemm7", batched=true, form="lhs^T x rhs"
// FORM: Function=attention | Remark="wgrad layer attn.q", batched=false, form="lhs^T x rhs"
// FORM: Function=attention | Remark="wgrad layer attn.k", batched=true, form="lhs^T x rhs"
// FORM: Function=attention | num-attention=5, num-dgrad=0, num-fprop=2, num-gemms=10, num-wgrad=2

// -----

// Inits: a bias folded into the fprop's init (not zero), a weight gradient
// accumulated into a zero constant (zero), and a dgrad whose fill is 1.0
// (not zero). Mixed precision: bf16 operands with an f32 accumulator.
func.func @inits(
    %x: tensor<4x3xf32>  {msamp.role = "input", msamp.name = "x"},
    %w: tensor<5x3xf32>  {msamp.role = "param", msamp.name = "fc.weight"},
    %b: tensor<5xf32>    {msamp.role = "param", msamp.name = "fc.bias"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<5x3xf32> {msamp.role = "grad", msamp.name = "fc.weight"},
        tensor<5xf32>   {msamp.role = "grad", msamp.name = "fc.bias"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.05 : f32
  %e45 = tensor.empty() : tensor<4x5xf32>
  %bias = linalg.broadcast ins(%b : tensor<5xf32>) outs(%e45 : tensor<4x5xf32>) dimensions = [0]
  %e43h = tensor.empty() : tensor<4x3xbf16>
  %xh = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e43h : tensor<4x3xbf16>) {
    ^bb0(%a: f32, %o: bf16):
      %t = arith.truncf %a : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<4x3xbf16>
  %e53h = tensor.empty() : tensor<5x3xbf16>
  %wh = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x3xf32>) outs(%e53h : tensor<5x3xbf16>) {
    ^bb0(%a: f32, %o: bf16):
      %t = arith.truncf %a : f32 to bf16
      linalg.yield %t : bf16
  } -> tensor<5x3xbf16>
  %z = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%xh, %wh : tensor<4x3xbf16>, tensor<5x3xbf16>) outs(%bias : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%z : tensor<4x5xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %dz = linalg.fill ins(%c : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %zeros = arith.constant dense<0.0> : tensor<5x3xf32>
  %gw = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dz, %x : tensor<4x5xf32>, tensor<4x3xf32>) outs(%zeros : tensor<5x3xf32>) -> tensor<5x3xf32>
  %e43 = tensor.empty() : tensor<4x3xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %dx = linalg.matmul ins(%dz, %w : tensor<4x5xf32>, tensor<5x3xf32>)
                      outs(%ones : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e5 = tensor.empty() : tensor<5xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<5xf32>) -> tensor<5xf32>
  %gb = linalg.reduce ins(%dz : tensor<4x5xf32>) outs(%f5 : tensor<5xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %loss, %gw, %gb : tensor<f32>, tensor<5x3xf32>, tensor<5xf32>
}

// CHECK-LABEL: func.func @inits(
// CHECK-SAME:    %arg1: tensor<5x3xf32> {msamp.gemm_weight, msamp.name = "fc.weight"
// CHECK-SAME:    %arg2: tensor<5xf32> {msamp.name = "fc.bias"
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "fc", operand_roles = ["activation", "weight"], weight = "fc.weight"}} ins({{.*}} : tensor<4x3xbf16>, tensor<5x3xbf16>) outs(%broadcasted
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "fc", operand_roles = ["grad_output", "activation"]}}
// CHECK: linalg.matmul {msamp.gemm = {kind = "dgrad", layer = "fc", operand_roles = ["grad_output", "weight"], weight = "fc.weight"}}

// FORM: Function=inits | Remark="fprop layer fc", batched=false, form="lhs x rhs^T", lhs="input 0", rhs="input 1", zero_init=false
// FORM: Function=inits | Remark="wgrad layer fc", batched=false, form="lhs^T x rhs", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=inits | Remark="dgrad layer fc", batched=false, form="lhs x rhs", lhs="input 0", rhs="input 1", zero_init=false

// -----

// Contractions that are not GEMMs msamp.gemm can run, and a GEMM of two
// parameters: each gets a remark saying why.
func.func @not_gemms(
    %x: tensor<2x3x4xf32> {msamp.role = "input", msamp.name = "x"},
    %v: tensor<4xf32>     {msamp.role = "input", msamp.name = "v"},
    %t: tensor<4x4xi32>   {msamp.role = "input", msamp.name = "tokens"},
    %w1: tensor<4x4xf32>  {msamp.role = "param", msamp.name = "a.weight"},
    %w2: tensor<4x4xf32>  {msamp.role = "param", msamp.name = "b.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<4x4xf32> {msamp.role = "grad", msamp.name = "a.weight"},
        tensor<4x4xf32> {msamp.role = "grad", msamp.name = "b.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %e44 = tensor.empty() : tensor<4x4xf32>
  %f44 = linalg.fill ins(%zero : f32) outs(%e44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  // Two reduction dimensions (JAX's dot_general over batch and sequence).
  // expected-remark @+1 {{[Missed] not-a-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="'linalg.generic' has 2 reduction dimensions; a GEMM has exactly one (K)", Remark="contraction not classified as a GEMM; it stays in high precision"}}
  %g = linalg.generic {
      indexing_maps = [affine_map<(i, j, b, s) -> (b, s, i)>, affine_map<(i, j, b, s) -> (b, s, j)>,
                       affine_map<(i, j, b, s) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %x : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%f44 : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<4x4xf32>
  // A matrix-vector product.
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{[Missed] not-a-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="'linalg.matvec' is a contraction but not a matrix-matrix product", Remark="contraction not classified as a GEMM; it stays in high precision"}}
  %mv = linalg.matvec ins(%w1, %v : tensor<4x4xf32>, tensor<4xf32>) outs(%f4 : tensor<4xf32>) -> tensor<4xf32>
  // A matmul with a broadcast operand.
  // expected-remark @+1 {{[Missed] not-a-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="'linalg.matmul' has a broadcast or a rank mismatch: every operand must have rank 2", Remark="contraction not classified as a GEMM; it stays in high precision"}}
  %bc = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%w1, %v : tensor<4x4xf32>, tensor<4xf32>) outs(%f44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  // Integer operands.
  %ei = tensor.empty() : tensor<4x4xi32>
  // expected-remark @+1 {{[Missed] not-a-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="element types i32 x i32 -> i32 are not f32, bf16 or f16", Remark="contraction not classified as a GEMM; it stays in high precision"}}
  %ti = linalg.matmul ins(%t, %t : tensor<4x4xi32>, tensor<4x4xi32>) outs(%ei : tensor<4x4xi32>) -> tensor<4x4xi32>
  // GEMM maps but a scaled product.
  %c2 = arith.constant 2.0 : f32
  // expected-remark @+1 {{[Missed] not-a-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="'linalg.generic' has GEMM indexing maps but the body is not one arith.mulf followed by one arith.addf", Remark="contraction not classified as a GEMM; it stays in high precision"}}
  %sc = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w1, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f44 : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %q = arith.mulf %p, %c2 : f32
      %s = arith.addf %acc, %q : f32
      linalg.yield %s : f32
  } -> tensor<4x4xf32>
  // Parameter x parameter.
  // expected-remark @+1 {{[Missed] not-a-linear-gemm | Category:msamp:classify-gemms | Function=not_gemms | Reason="both operands are parameters ("a.weight", "b.weight"): not a Linear GEMM; kept in high precision", Remark="GEMM gemm0 classified other"}}
  %ww = linalg.matmul ins(%w1, %w2 : tensor<4x4xf32>, tensor<4x4xf32>)
                      outs(%f44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%ww : tensor<4x4xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %loss, %w1, %w2 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @not_gemms(
// CHECK-NOT:     msamp.gemm_weight
// CHECK: linalg.generic
// CHECK-NOT:     msamp.gemm =
// CHECK: linalg.matmul {msamp.gemm = {kind = "other", layer = "gemm0", operand_roles = ["weight", "weight"]}}

// FORM: Function=not_gemms | Remark="other layer gemm0"
// FORM: Function=not_gemms | num-attention=0, num-dgrad=0, num-fprop=0, num-gemms=1, num-wgrad=0

// -----

// No forward_backward function: nothing to classify, nothing changes.
func.func @plain(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                     outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     msamp.gemm
// CHECK:         return

// -----

// One weight-gradient GEMM that reaches two gradients (tied weights): the
// layer is that of the first gradient in result order.
func.func @tied(
    %x: tensor<4x3xf32>   {msamp.role = "input", msamp.name = "x"},
    %enc: tensor<5x3xf32> {msamp.role = "param", msamp.name = "enc.weight"},
    %dec: tensor<5x3xf32> {msamp.role = "param", msamp.name = "dec.weight"})
    -> (tensor<f32> {msamp.role = "loss"},
        tensor<5x3xf32> {msamp.role = "grad", msamp.name = "dec.weight"},
        tensor<5x3xf32> {msamp.role = "grad", msamp.name = "enc.weight"})
    attributes {msamp.kind = "forward_backward"} {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.05 : f32
  %e45 = tensor.empty() : tensor<4x5xf32>
  %f45 = linalg.fill ins(%zero : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %a = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %enc : tensor<4x3xf32>, tensor<5x3xf32>) outs(%f45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %b = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %dec : tensor<4x3xf32>, tensor<5x3xf32>) outs(%a : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%b : tensor<4x5xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %dz = linalg.fill ins(%c : f32) outs(%e45 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e53 = tensor.empty() : tensor<5x3xf32>
  %f53 = linalg.fill ins(%zero : f32) outs(%e53 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %gw = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dz, %x : tensor<4x5xf32>, tensor<4x3xf32>) outs(%f53 : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %loss, %gw, %gw : tensor<f32>, tensor<5x3xf32>, tensor<5x3xf32>
}

// The second fprop accumulates into the first (a non-zero init).
// CHECK-LABEL: func.func @tied(
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "enc", operand_roles = ["activation", "weight"], weight = "enc.weight"}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "fprop", layer = "dec", operand_roles = ["activation", "weight"], weight = "dec.weight"}}
// CHECK: linalg.matmul {{.*}}{msamp.gemm = {kind = "wgrad", layer = "dec", operand_roles = ["grad_output", "activation"]}}

// FORM: Function=tied | Remark="fprop layer enc", batched=false, form="lhs x rhs^T", lhs="input 0", rhs="input 1", zero_init=true
// FORM: Function=tied | Remark="fprop layer dec", batched=false, form="lhs x rhs^T", lhs="input 0", rhs="input 1", zero_init=false
