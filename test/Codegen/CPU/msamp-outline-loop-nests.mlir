// RUN: msamp-opt %s --msamp-outline-loop-nests | FileCheck %s
// RUN: msamp-opt %s --msamp-outline-loop-nests --remarks-filter=msamp -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: msamp-opt %s --msamp-outline-loop-nests=dedupe=false | FileCheck %s --check-prefix=NODEDUPE
// Executed before and after outlining: the same printed values.
// RUN: msamp-opt %s --msamp-outline-loop-nests | mlir-opt --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC
// RUN: mlir-opt %s --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | FileCheck %s --check-prefix=EXEC

// @layers has five nests: two "layers" (scale by 2 then add 1, on other
// buffers), a scale by 3 (another constant: another function), a scale of
// another shape (another function) and a sum with a loop-carried result,
// which the function returns. The two layers' nests share two functions.
// A buffer used twice is one argument.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4xf32>, %[[C:[a-z0-9]+]]: memref<4xf32>, %[[D:[a-z0-9]+]]: memref<8xf32>
// CHECK-NOT: scf.for
// CHECK: call @layers_nest_0(%[[A]], %[[B]])
// CHECK: call @layers_nest_1(%[[B]])
// CHECK: call @layers_nest_0(%[[B]], %[[C]])
// CHECK: call @layers_nest_1(%[[C]])
// CHECK: call @layers_nest_2(%[[C]], %[[A]])
// CHECK: call @layers_nest_3(%[[D]])
// CHECK: %[[SUM:.*]] = call @layers_nest_4(%[[C]]) : (memref<4xf32>) -> f32
// CHECK: return %[[SUM]]
// CHECK: func.func private @layers_nest_0(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: arith.constant 2.0
// CHECK: scf.for
// CHECK: func.func private @layers_nest_1(
// CHECK: func.func private @layers_nest_2(
// CHECK: arith.constant 3.0
// CHECK: func.func private @layers_nest_3(%{{.*}}: memref<8xf32>)
// CHECK: func.func private @layers_nest_4(%{{.*}}: memref<4xf32>) -> f32
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: func.func private @layers_nest_5
// CHECK-LABEL: func.func @main(

// REMARK: remark: [Passed] loop-nests-outlined | Category:msamp:outline-loop-nests | Remark="7 loop nests of @layers outlined as 5 functions (2 deduplicated: structurally identical to an earlier nest)"

// NODEDUPE: call @layers_nest_0(
// NODEDUPE: call @layers_nest_1(
// NODEDUPE: call @layers_nest_2(
// NODEDUPE: call @layers_nest_3(
// NODEDUPE: func.func private @layers_nest_6(

// a = [0, 1, 2, 3]: b = 2a + 1 = [1, 3, 5, 7], c = 2b + 1 = [3, 7, 11, 15],
// a = 3c = [9, 21, 33, 45], sum(c) = 36.
// EXEC: [9,  21,  33,  45]
// EXEC: 36

func.func @layers(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>,
                  %d: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %c[%i] : memref<4xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %c[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %c[%i] : memref<4xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %d[%i] : memref<8xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %d[%i] : memref<8xf32>
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %c[%i] : memref<4xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  return %sum : f32
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printF32(f32)
func.func private @printNewline()

func.func @main() {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %d = memref.alloc() : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %a[%i] : memref<4xf32>
  }
  %sum = call @layers(%a, %b, %c, %d)
      : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<8xf32>) -> f32
  %u = memref.cast %a : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  call @printF32(%sum) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}
