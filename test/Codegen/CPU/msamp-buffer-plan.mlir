// RUN: msamp-opt %s --split-input-file --msamp-buffer-plan --verify-diagnostics --mlir-print-local-scope | FileCheck %s

// The high-water mark of live allocations in program order: a buffer is live
// from its alloc to the dealloc of it or of a view of it (the base buffer of
// extract_strided_metadata, under an scf.if too); one nothing frees is live
// to the end. Arguments: 4 x f32 + 2x8 x f32 = 80 bytes.
// live: 64, 80, 16, 96 (the peak, at "worst"), 16, 48 (in the if), 16, 32.
// The static arena counts lifetimes to the last use, which a dealloc or a
// view is not: nothing here uses its buffer, so all five share one
// 256-byte slot (the last case below has uses).
// CHECK-LABEL: module attributes
// CHECK-SAME: msamp.buffer_plan = {arena_buffers = 5 : i64, arena_bytes = 256 : i64, arena_peak_bytes = 256 : i64, at = loc("worst"), buffers = 5 : i64, peak_bytes = 176 : i64, session_bytes = 80 : i64, step_bytes = 96 : i64}
module {
  func.func @train_step(%a: memref<4xf32>, %b: memref<2x8xf32>, %c: i1)
      attributes {msamp.kind = "train_step"} {
    %0 = memref.alloc() : memref<16xf32>
    %1 = memref.alloc() : memref<8xf16>
    memref.dealloc %0 : memref<16xf32>
    %2 = memref.alloc() {alignment = 64 : i64} : memref<2x5xi64> loc("worst")
    %view = memref.collapse_shape %2 [[0, 1]] : memref<2x5xi64> into memref<10xi64>
    %base, %off, %size, %stride = memref.extract_strided_metadata %view : memref<10xi64> -> memref<i64>, index, index, index
    memref.dealloc %base : memref<i64>
    scf.if %c {
      %3 = memref.alloc() : memref<32xi8>
      memref.dealloc %3 : memref<32xi8>
    }
    %4 = memref.alloc() : memref<4xf32>
    scf.if %c {
      memref.dealloc %1 : memref<8xf16>
    }
    return
  }
}

// -----

// No train step: nothing to plan, nothing recorded.
// CHECK-LABEL: module {
// CHECK-NOT: msamp.buffer_plan
module {
  func.func @other(%n: index) {
    %0 = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %0 : memref<?xf32>
    return
  }
}

// -----

module {
  func.func @train_step(%n: index) attributes {msamp.kind = "train_step"} {
    // expected-error @+1 {{msamp-buffer-plan: cannot size the allocation of 'memref<?xf32>' (expected a static shape)}}
    %0 = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %0 : memref<?xf32>
    return
  }
}

// -----

// Calls of the module's functions are walked in place, each call its own
// instance of the callee's buffers: @layer allocates 64 bytes it frees and
// returns 16 it allocated, which the step frees after the next call (a
// returned buffer is the caller's). Live: 16 (%in); call 1: 80, 96, 32;
// call 2: 96, 112 (the peak, at "result": %in, %r0, the scratch, %r1), 48;
// %r0 freed: 32; call 3: 96, 112 (not higher: without %r0's free it would
// be 128), 48. Buffers: %in + 2 per call = 7. In the arena only %in: the
// callee's buffers have one alloc op for three instances.
// CHECK-LABEL: module attributes
// CHECK-SAME: msamp.buffer_plan = {arena_buffers = 1 : i64, arena_bytes = 256 : i64, arena_peak_bytes = 256 : i64, at = loc("result"), buffers = 7 : i64, peak_bytes = 112 : i64, session_bytes = 0 : i64, step_bytes = 112 : i64}
module {
  func.func private @layer(%x: memref<4xf32>) -> memref<4xf32> {
    %s = memref.alloc() : memref<16xf32> loc("scratch")
    %r = memref.alloc() : memref<4xf32> loc("result")
    memref.dealloc %s : memref<16xf32>
    return %r : memref<4xf32>
  }
  func.func @train_step() attributes {msamp.kind = "train_step"} {
    %in = memref.alloc() : memref<4xf32>
    %r0 = func.call @layer(%in) : (memref<4xf32>) -> memref<4xf32>
    %r1 = func.call @layer(%r0) : (memref<4xf32>) -> memref<4xf32>
    memref.dealloc %r0 : memref<4xf32>
    %r2 = func.call @layer(%r1) : (memref<4xf32>) -> memref<4xf32>
    memref.dealloc %r1 : memref<4xf32>
    memref.dealloc %r2 : memref<4xf32>
    memref.dealloc %in : memref<4xf32>
    return
  }
}

// -----

// Not placed in the arena: %loop's alloc runs once per iteration, %out
// escapes into scf.for's iteration argument (its uses there are not
// followed), %c and %sel0 through a select. %a is used inside the loop, so
// it is live to the loop's end, together with %b; %d, allocated after the
// last use of both, shares their bytes: two 256-byte slots, 3 buffers.
// CHECK-LABEL: module attributes
// CHECK-SAME: msamp.buffer_plan = {arena_buffers = 3 : i64, arena_bytes = 512 : i64, arena_peak_bytes = 512 : i64
module {
  func.func @train_step(%n: index, %cond: i1) attributes {msamp.kind = "train_step"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<4xf32>
    %b = memref.alloc() : memref<4xf32>
    %out = memref.alloc() : memref<4xf32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<4xf32>) {
      %loop = memref.alloc() : memref<4xf32>
      memref.store %f, %a[%c0] : memref<4xf32>
      memref.dealloc %loop : memref<4xf32>
      scf.yield %acc : memref<4xf32>
    }
    memref.store %f, %b[%c0] : memref<4xf32>
    %d = memref.alloc() : memref<4xf32>
    memref.store %f, %d[%c0] : memref<4xf32>
    %c = memref.alloc() : memref<4xf32>
    %sel0 = memref.alloc() : memref<4xf32>
    %sel = arith.select %cond, %sel0, %c : memref<4xf32>
    memref.store %f, %sel[%c0] : memref<4xf32>
    return
  }
}
