// Host code with a vector transfer, for msamp-gpu-host-to-llvm.test: the
// transfer needs gpu-to-llvm's greedy lowering before the conversion.
func.func @read(%m: memref<4xf32>) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<4xf32>, vector<4xf32>
  return %v : vector<4xf32>
}
