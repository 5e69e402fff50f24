// Randomness that is not torch-mlir's spelling (docs/Interfaces.md 1,
// docs/Randomness.md) is a located error of --msamp-verify-contract: other
// ml_program globals, a seed read or advanced differently, the seed mixed
// into anything but a uniform draw. One case per chunk; the first is the
// accepted form.
// RUN: msamp-opt %s -split-input-file --msamp-verify-contract -verify-diagnostics

// Accepted: one seed load, advance and store, one uniform draw in [0, 1).
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Another global: only the seed may live in ml_program.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  // expected-error @+1 {{ml_program.global @counter: the contract accepts ml_program only as torch-mlir's dropout seed}}
  ml_program.global private mutable @counter(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The seed global must be a mutable tensor<i64>.
module {
  // expected-error @+1 {{ml_program.global @global_seed: the contract accepts ml_program only as torch-mlir's dropout seed, a mutable tensor<i64> global named @global_seed}}
  ml_program.global private mutable @global_seed(dense<0.0> : tensor<f32>) : tensor<f32>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A seed advanced by another generator.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    // expected-error @+1 {{torch-mlir seed: expected the seed to be advanced as seed * 6364136223846793005 + 1442695040888963407}}
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c1 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The advanced seed used outside a draw.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    // expected-error @+1 {{torch-mlir seed: the advanced seed is used by arith.xori outside a random-number linalg.generic}}
    %leak = arith.xori %a, %c0 : i64
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A draw that also reads data.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    // expected-error @+1 {{random-number linalg.generic: expected no inputs and one output}}
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%e : tensor<4xf64>) {
    ^bb0(%in: f32, %out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A draw converted with a signed conversion.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    // expected-error @+1 {{random-number linalg.generic: unexpected arith.sitofp in its body}}
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.sitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %h : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A draw that yields the raw conversion, not uitofp * SCALE + LOW.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %c0 = arith.constant 6364136223846793005 : i64
    %c1 = arith.constant 1442695040888963407 : i64
    %scale = arith.constant 5.4210107999999998E-20 : f64
    %low = arith.constant 0.0 : f64
    %t = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %t[] : tensor<i64>
    %m = arith.muli %s, %c0 : i64
    %a = arith.addi %m, %c1 : i64
    %i = tensor.insert %a into %t[] : tensor<i64>
    ml_program.global_store @global_seed = %i : tensor<i64>
    %e = tensor.empty() : tensor<4xf64>
    // expected-error @+1 {{random-number linalg.generic: expected it to yield uitofp(64 random bits) * SCALE + LOW}}
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf64>) {
    ^bb0(%out: f64):
      %k = linalg.index 0 : index
      %k64 = arith.index_cast %k : index to i64
      %x = arith.muli %k64, %a : i64
      %f = arith.uitofp %x : i64 to f64
      %g = arith.mulf %f, %scale : f64
      %h = arith.addf %g, %low : f64
      linalg.yield %f : f64
    } -> tensor<4xf64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A store that is not the end of a seed advance.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @g(%w: tensor<4xf32> {msamp.role = "param", msamp.name = "w"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4xf32> {msamp.role = "grad", msamp.name = "w"}) attributes {msamp.kind = "forward_backward"} {
    %z = arith.constant dense<0> : tensor<i64>
    // expected-error @+1 {{unexpected ml_program.global_store (not part of a seed load, advance and store)}}
    ml_program.global_store @global_seed = %z : tensor<i64>
    %loss = arith.constant dense<0.0> : tensor<f32>
    return %loss, %w : tensor<f32>, tensor<4xf32>
  }
}
