// Calls the runtime from code that MLIR itself lowered (one-shot
// bufferization, finalize-memref-to-llvm, func-to-llvm with
// llvm.emit_c_interface) and run by mlir-runner, to pin the descriptor layout
// the runtime assumes to the one MLIR 22 produces. Buffers are erased to
// memref<*xi8> exactly as convert-msamp-to-runtime does.
//
// Run by run-mlir-interop.sh; CHECK lines are FileCheck's.

module {
  func.func private @msamp_rt_quantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @msamp_rt_dequantize(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @msamp_rt_compute_scale(memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @msamp_rt_gemm(memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) attributes {llvm.emit_c_interface}
  func.func private @msamp_rt_get_last_error() -> i32
  func.func private @printMemrefF32(memref<*xf32>)

  func.func @main() {
    %c0 = arith.constant 0 : i32
    %c3 = arith.constant 3 : i32
    %one = arith.constant 1.0 : f32

    // 0-d scale and the input.
    %s = memref.alloc() : memref<f32>
    memref.store %one, %s[] : memref<f32>
    %su = memref.cast %s : memref<f32> to memref<*xf32>
    %se = builtin.unrealized_conversion_cast %su : memref<*xf32> to memref<*xi8>
    %x = arith.constant dense<[[1.0, -2.5, 448.0], [1000.0, 0.3, 0.0]]> : tensor<2x3xf32>
    %xb = bufferization.to_buffer %x : tensor<2x3xf32> to memref<2x3xf32>
    %xu = memref.cast %xb : memref<2x3xf32> to memref<*xf32>
    %xe = builtin.unrealized_conversion_cast %xu : memref<*xf32> to memref<*xi8>

    // E4M3 round trip: 1000 saturates to 448, 0.3 rounds to 0.3125.
    %q = memref.alloc() : memref<2x3xf8E4M3FN>
    %qu = memref.cast %q : memref<2x3xf8E4M3FN> to memref<*xf8E4M3FN>
    %qe = builtin.unrealized_conversion_cast %qu : memref<*xf8E4M3FN> to memref<*xi8>
    %d = memref.alloc() : memref<2x3xf32>
    %du = memref.cast %d : memref<2x3xf32> to memref<*xf32>
    %de = builtin.unrealized_conversion_cast %du : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_quantize(%xe, %se, %qe, %c0, %c3) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    func.call @msamp_rt_dequantize(%qe, %se, %de, %c3, %c0) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    call @printMemrefF32(%du) : (memref<*xf32>) -> ()
    // CHECK: sizes = [2, 3]
    // CHECK-NEXT: [1, -2.5, 448]
    // CHECK-NEXT: [448, 0.3125, 0]

    // y = q . q^T (transpose_b | write_amax = 10).
    %y = memref.alloc() : memref<2x2xf32>
    %yu = memref.cast %y : memref<2x2xf32> to memref<*xf32>
    %ye = builtin.unrealized_conversion_cast %yu : memref<*xf32> to memref<*xi8>
    %am = memref.alloc() : memref<f32>
    %amu = memref.cast %am : memref<f32> to memref<*xf32>
    %ame = builtin.unrealized_conversion_cast %amu : memref<*xf32> to memref<*xi8>
    %flags = arith.constant 10 : i32
    func.call @msamp_rt_gemm(%qe, %se, %qe, %se, %ye, %ame, %c3, %c3, %c0, %flags) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) -> ()
    call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
    // CHECK: sizes = [2, 2]
    // CHECK-NEXT: [200711, 447.219]
    // CHECK-NEXT: [447.219, 200704]
    call @printMemrefF32(%amu) : (memref<*xf32>) -> ()
    // CHECK: rank = 0
    // CHECK-NEXT: [200711]

    // A 1-d history through compute_scale (pow2, max, E4M3): amax 10 -> 32.
    %h = arith.constant dense<[10.0, 2.0]> : tensor<2xf32>
    %hb = bufferization.to_buffer %h : tensor<2xf32> to memref<2xf32>
    %hu = memref.cast %hb : memref<2xf32> to memref<*xf32>
    %he = builtin.unrealized_conversion_cast %hu : memref<*xf32> to memref<*xi8>
    func.call @msamp_rt_compute_scale(%he, %se, %ame, %c0, %c0, %c3, %c0) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32, i32, i32) -> ()
    call @printMemrefF32(%amu) : (memref<*xf32>) -> ()
    // CHECK: rank = 0
    // CHECK-NEXT: [32]

    // A transposed view is not contiguous: nothing is written and the sticky
    // error is MSAMP_RT_ERROR_NON_CONTIGUOUS (4).
    %t = memref.transpose %xb (i, j) -> (j, i) : memref<2x3xf32> to memref<3x2xf32, strided<[1, 3]>>
    %tu = memref.cast %t : memref<3x2xf32, strided<[1, 3]>> to memref<*xf32>
    %te = builtin.unrealized_conversion_cast %tu : memref<*xf32> to memref<*xi8>
    %q2 = memref.alloc() : memref<3x2xf8E4M3FN>
    %q2u = memref.cast %q2 : memref<3x2xf8E4M3FN> to memref<*xf8E4M3FN>
    %q2e = builtin.unrealized_conversion_cast %q2u : memref<*xf8E4M3FN> to memref<*xi8>
    func.call @msamp_rt_quantize(%te, %se, %q2e, %c0, %c3) : (memref<*xi8>, memref<*xi8>, memref<*xi8>, i32, i32) -> ()
    %err = func.call @msamp_rt_get_last_error() : () -> i32
    %errf = arith.sitofp %err : i32 to f32
    memref.store %errf, %am[] : memref<f32>
    call @printMemrefF32(%amu) : (memref<*xf32>) -> ()
    // CHECK: rank = 0
    // CHECK-NEXT: [4]
    return
  }
}
