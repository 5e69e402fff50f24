// msamp-gpu-lower-fp8-casts: FP8 casts inside kernels become NVVM cvt ops
// with round-to-nearest-even and satfinite (upstream's convert-gpu-to-nvvm
// leaves arith.truncf to f8 unconverted and the translation to LLVM IR
// fails). The PTX is then assembled for both targets.
// RUN: msamp-opt %s --msamp-gpu-lower-fp8-casts | FileCheck %s
// RUN: msamp-opt %s --pass-pipeline='builtin.module(nvvm-attach-target{chip=sm_90 features=+ptx80},gpu.module(msamp-gpu-lower-fp8-casts,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX -DVERSION=8.0 -DCHIP=sm_90
// RUN: msamp-opt %s --pass-pipeline='builtin.module(nvvm-attach-target{chip=sm_89 features=+ptx81},gpu.module(msamp-gpu-lower-fp8-casts,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})' | FileCheck %s --check-prefix=PTX -DVERSION=8.1 -DCHIP=sm_89

// CHECK-LABEL: gpu.func @casts(
// f32 -> E4M3: one cvt, the low byte of the pair.
// CHECK: %[[X:.+]] = memref.load %arg0
// CHECK: %[[P:.+]] = nvvm.convert.f32x2.to.f8x2 %[[X]], %[[X]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: %[[B:.+]] = arith.trunci %[[P]] : i16 to i8
// CHECK: %[[Q:.+]] = arith.bitcast %[[B]] : i8 to f8E4M3FN
// CHECK: memref.store %[[Q]], %arg2
// f16 -> E5M2: widened to f32 first (exact).
// CHECK: %[[H:.+]] = memref.load %arg1
// CHECK: %[[HF:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[HF]], %[[HF]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E5M2)
// E4M3 -> f32 through the exact f8x2 -> f16x2 cvt.
// CHECK: %[[QB:.+]] = arith.bitcast %[[Q]] : f8E4M3FN to i8
// CHECK: %[[V:.+]] = vector.broadcast %[[QB]] : i8 to vector<2xi8>
// CHECK: %[[HV:.+]] = nvvm.convert.f8x2.to.f16x2 %[[V]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: %[[E:.+]] = vector.extract %[[HV]][0] : f16 from vector<2xf16>
// CHECK: arith.extf %[[E]] : f16 to f32
// CHECK-NOT: arith.truncf {{.*}} to f8
// Host code is left alone.
// CHECK-LABEL: func.func @host(
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN

// PTX: .version [[VERSION]]
// PTX: .target [[CHIP]]
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: cvt.rn.satfinite.e5m2x2.f32
// PTX: cvt.rn.f16x2.e4m3x2
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @casts(%in: memref<?xf32>, %h: memref<?xf16>,
                    %out: memref<?xf8E4M3FN>, %out2: memref<?xf8E5M2>,
                    %back: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<?xf32>
      %q = arith.truncf %x : f32 to f8E4M3FN
      memref.store %q, %out[%i] : memref<?xf8E4M3FN>
      %y = memref.load %h[%i] : memref<?xf16>
      %q2 = arith.truncf %y : f16 to f8E5M2
      memref.store %q2, %out2[%i] : memref<?xf8E5M2>
      %d = arith.extf %q : f8E4M3FN to f32
      memref.store %d, %back[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @host(%x: f32) -> f8E4M3FN {
    %q = arith.truncf %x : f32 to f8E4M3FN
    return %q : f8E4M3FN
  }
}
