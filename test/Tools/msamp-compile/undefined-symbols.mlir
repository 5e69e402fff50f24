// msamp-compile refuses to link a step that would not load: an undefined
// symbol outside the runtime ABI, libc and libm is reported at the op that
// calls it, and no train_step.so is written. The contract rejects calls to
// declared functions, so the call is put into the compiled step (a
// train_step is accepted as input as it is); the lowering itself leaves no
// such symbol (test/Tools/msamp-run/fused-projection-split.test, every math
// op in python/tests/test_math_ops.py).
// RUN: rm -rf %t && mkdir -p %t
// RUN: msamp-opt %s --msamp-o0 -o %t/step.mlir
// RUN: sed -e 's/math.exp \(%[a-z0-9_]*\) : f32/func.call @rsqrtf(\1) : (f32) -> f32/' \
// RUN:     -e 's/^}$/func.func private @rsqrtf(f32) -> f32 }/' %t/step.mlir > %t/calls.mlir
// RUN: not msamp-compile %t/calls.mlir -o %t/out 2>&1 | FileCheck %s
// RUN: not test -e %t/out/train_step.so
// The unmodified step links.
// RUN: msamp-compile %t/step.mlir -o %t/ok | FileCheck %s --check-prefix=OK

// CHECK: calls.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the compiled step would call `rsqrtf`, neither an msamp runtime entry point (docs/RuntimeABI.md) nor a function of libc or libm: train_step.so could not be loaded
// CHECK: msamp-compile: error: not linking {{.*}}train_step.so: it has symbols nothing provides at load time (above)
// OK: msamp-compile: wrote {{.*}}train_step.so

module {
  func.func @fwd_bwd(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"},
                     %x: tensor<4xf32> {msamp.role = "input", msamp.name = "x"})
      -> (tensor<f32> {msamp.role = "loss"},
          tensor<4xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
        ^bb0(%a: f32, %o: f32):
          %r = math.exp %a : f32
          linalg.yield %r : f32
    } -> tensor<4xf32>
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                          affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}
        ins(%w, %y : tensor<4xf32>, tensor<4xf32>) outs(%f0 : tensor<f32>) {
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %t = arith.addf %m, %acc : f32
          linalg.yield %t : f32
    } -> tensor<f32>
    return %s, %y : tensor<f32>, tensor<4xf32>
  }
}
