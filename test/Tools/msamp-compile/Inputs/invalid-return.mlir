// Input of verify-each.test: parses, but the verifier rejects it.
module {
  func.func @forward_backward(%x: f32) -> i32 attributes {msamp.kind = "forward_backward"} {
  return %x : f32
  }
}
