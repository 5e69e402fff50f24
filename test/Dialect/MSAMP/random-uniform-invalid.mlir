// msamp.random_uniform's verifier: a non-empty finite interval, a 32-bit op
// id and at most 2^32 - 1 elements (the element index is one counter word).
// RUN: msamp-opt %s -split-input-file -verify-diagnostics

func.func @empty_interval(%s: tensor<i64>, %t: tensor<i64>, %r: tensor<i32>) -> tensor<4xf64> {
  // expected-error @+1 {{needs finite low < high, got [1.000000e+00, 1.000000e+00)}}
  %u = msamp.random_uniform %s, %t, %r {id = 0 : i64, low = 1.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<4xf64>
  return %u : tensor<4xf64>
}

// -----

func.func @id_too_large(%s: tensor<i64>, %t: tensor<i64>, %r: tensor<i32>) -> tensor<4xf64> {
  // expected-error @+1 {{id must fit in 32 unsigned bits, got 4294967296}}
  %u = msamp.random_uniform %s, %t, %r {id = 4294967296 : i64, low = 0.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<4xf64>
  return %u : tensor<4xf64>
}

// -----

func.func @too_many_elements(%s: tensor<i64>, %t: tensor<i64>, %r: tensor<i32>) -> tensor<65536x65536xf64> {
  // expected-error @+1 {{needs a static shape of at most 2^32 - 1 elements}}
  %u = msamp.random_uniform %s, %t, %r {id = 0 : i64, low = 0.0 : f64, high = 1.0 : f64} : tensor<i32> -> tensor<65536x65536xf64>
  return %u : tensor<65536x65536xf64>
}
