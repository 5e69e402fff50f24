// msamp.optimizer adam_mode = 1 (ONNX Runtime's AdamWOptimizer mode 1, the
// Hugging Face AdamW) is carried from the module declaration to every
// msamp.adam_update, through the O1/O2 rewrites of the update (FP16 weights,
// FP8 weight gradients, low-precision moments), and into the runtime call's
// flags (MSAMP_RT_ADAM_DECOUPLED | MSAMP_RT_ADAM_MODE1 = 3). adam_mode = 0
// prints no attribute and keeps flags 1.
// RUN: msamp-opt %s --msamp-o0 | FileCheck %s --check-prefix=O0
// RUN: msamp-opt %s --msamp-o2 | FileCheck %s --check-prefix=O2
// RUN: msamp-opt %s --msamp-o2 --convert-msamp-to-runtime | FileCheck %s --check-prefix=RT
// RUN: sed -e 's/adam_mode = 1/adam_mode = 0/' %s | msamp-opt --msamp-o0 --convert-msamp-to-runtime | FileCheck %s --check-prefix=MODE0

// O0: func.func @train_step(
// O0-SAME: msamp.optimizer = {adam_mode = 1 : i64,
// O0-COUNT-2: msamp.adam_update param %{{.+}} : tensor<{{.+}}xf32>, {{.*}} {adam_mode = 1 : i64, beta1 = 9.000000e-01 : f64, beta2 = {{.+}} : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}

// The GEMM weight: FP16 + scale, FP8 gradient, E4M3 m and FP16 v.
// O2: msamp.adam_update param %{{.+}} scale %{{.+}} : tensor<8x4xf16>, grad %{{.+}} scale_inv %{{.+}} : tensor<8x4xf8E4M3FN>, exp_avg %{{.+}} scale %{{.+}} : tensor<8x4xf8E4M3FN>, exp_avg_sq %{{.+}} scale %{{.+}} : tensor<8x4xf16>, {{.*}} {adam_mode = 1 : i64,
// The bias: f32 param and gradient, low-precision moments.
// O2: msamp.adam_update param %{{.+}} : tensor<8xf32>, grad %{{.+}} : tensor<8xf32>, exp_avg %{{.+}} scale %{{.+}} : tensor<8xf8E4M3FN>, {{.*}} {adam_mode = 1 : i64,

// RT-COUNT-2: call @msamp_rt_adam_update__{{[0-9]+}}({{.*}}, %c3_i32{{[_0-9]*}}){{( {msamp.in_place_args = .*})?}} :
// RT-NOT: msamp.adam_update

// MODE0-NOT: adam_mode = 1
// MODE0-COUNT-2: call @msamp_rt_adam_update__{{[0-9]+}}({{.*}}, %c1_i32{{[_0-9]*}}){{( {msamp.in_place_args = .*})?}} :

module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e-02 : f64,
                                      weight_decay = 1.0e-02 : f64,
                                      adam_mode = 1 : i64}} {
  func.func @fwd_bwd(
      %w: tensor<8x4xf32> {msamp.role = "param", msamp.name = "fc.weight"},
      %b: tensor<8xf32> {msamp.role = "param", msamp.name = "fc.bias"},
      %x: tensor<2x4xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<8x4xf32> {msamp.role = "grad", msamp.name = "fc.weight"},
          tensor<8xf32> {msamp.role = "grad", msamp.name = "fc.bias"})
      attributes {msamp.kind = "forward_backward"} {
    %zero = arith.constant 0.0 : f32
    // y = x w^T + b; loss = sum(y) (so dy = 1).
    %e = tensor.empty() : tensor<2x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
    %y = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                         affine_map<(m, n, k) -> (n, k)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : tensor<2x4xf32>, tensor<8x4xf32>)
        outs(%f : tensor<2x8xf32>) -> tensor<2x8xf32>
    %l0 = tensor.empty() : tensor<f32>
    %l1 = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.reduce ins(%y : tensor<2x8xf32>) outs(%l1 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    // dW = dy^T x with dy = ones: the wgrad GEMM.
    %one = arith.constant 1.0 : f32
    %dye = tensor.empty() : tensor<2x8xf32>
    %dy = linalg.fill ins(%one : f32) outs(%dye : tensor<2x8xf32>) -> tensor<2x8xf32>
    %ge = tensor.empty() : tensor<8x4xf32>
    %gf = linalg.fill ins(%zero : f32) outs(%ge : tensor<8x4xf32>) -> tensor<8x4xf32>
    %gw = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                         affine_map<(m, n, k) -> (k, n)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%dy, %x : tensor<2x8xf32>, tensor<2x4xf32>)
        outs(%gf : tensor<8x4xf32>) -> tensor<8x4xf32>
    %gb0 = tensor.empty() : tensor<8xf32>
    %gb = linalg.fill ins(%one : f32) outs(%gb0 : tensor<8xf32>) -> tensor<8xf32>
    return %loss, %gw, %gb : tensor<f32>, tensor<8x4xf32>, tensor<8xf32>
  }
}
