// A step whose state cannot fit in memory is refused when the session opens,
// naming what it needs and what is available, before anything is allocated
// (issue 16: a 2^31 dimension compiled, then the out-of-memory killer ended
// the run at 24 GB). Here: a 2^38-element param, 1 TiB per state tensor,
// counted twice (the copy a refused step is undone from).
// RUN: rm -rf %t && msamp-compile %s --opt-level O0 -o %t/model
// RUN: not msamp-run %t/model --synthetic --steps 1 2>&1 | FileCheck %s
// CHECK: msamp-run: error: {{.*}}model: the state, its copy (to undo a refused step) and the inputs need 6597069766680 bytes (6291456 MiB), but {{[0-9]+}} bytes ({{[0-9]+}} MiB) of memory are available (MemAvailable)
module attributes {msamp.optimizer = {kind = "adamw", lr = 1.0e-03 : f64}} {
  func.func @fb(%w: tensor<274877906944xf32> {msamp.role = "param", msamp.name = "w"})
      -> (tensor<f32> {msamp.role = "loss"}, tensor<274877906944xf32> {msamp.role = "grad", msamp.name = "w"})
      attributes {msamp.kind = "forward_backward"} {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<274877906944xf32>
  }
}
