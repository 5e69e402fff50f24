//===- Passes.td - msamp GPU lowering passes -----------------*- tablegen -*-===//
//
// The passes of --msamp-lower-to-gpu (docs/Passes.md): the elementwise and
// reduction linalg of a bufferized train step become GPU kernels; the
// runtime calls (GEMMs, collectives, casts, optimizers) stay host calls.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_PASSES_TD
#define MSAMP_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MSAMPGPUStageGlobals : Pass<"msamp-gpu-stage-globals", "::mlir::ModuleOp"> {
  let summary = "copy memref.get_global constants into step-local buffers";
  let description = [{
    A `memref.global` lives in the host image of the compiled step, which a
    GPU kernel cannot read. Each `memref.get_global` inside a function body
    becomes a `memref.alloc` (device-accessible once the host allocation
    functions are the runtime's, see --msamp-lower-to-gpu) filled with a
    `memref.copy` from the global. Run it after bufferization and before
    the buffer deallocation pipeline, which then frees the copies.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MSAMPGPUCopiesToLinalg
    : Pass<"msamp-gpu-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "turn ranked memref.copy into linalg.copy";
  let description = [{
    Buffer copies of rank >= 1 between identity-layout buffers become
    `linalg.copy`, so that the GPU pipeline runs them as kernels instead of
    host loops over device-resident memory. 0-d copies stay on the host.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MSAMPGPUMarkFreshArguments
    : Pass<"msamp-gpu-mark-fresh-arguments", "::mlir::ModuleOp"> {
  let summary = "mark the arguments every call passes a buffer of its own";
  let description = [{
    On buffers, after buffer-results-to-out-params: an argument of a private
    function to which every call passes an allocation of the caller that no
    other operand of the call reaches (an out-parameter, a layer's result)
    gets the unit argument attribute `msamp.fresh`. Inside the function it
    aliases nothing else, like an allocation: msamp-gpu-reduction-inits
    starts a reduction into it from its fill's constant, and the merges'
    buffer model (BufferAccesses.h) lets kernels that touch it move past
    ones that do not (include/MSAMP/Codegen/GPU/FreshArguments.h).
  }];
  let statistics = [
    Statistic<"numFresh", "fresh-arguments", "arguments marked fresh">
  ];
}

def MSAMPGPUReductionInits
    : Pass<"msamp-gpu-reduction-inits", "::mlir::func::FuncOp"> {
  let summary = "copies of a constant-filled buffer become fills, which "
                "reductions fold into their first step";
  let description = [{
    A `linalg.copy` out of a buffer whose only write is a `linalg.fill` of
    a constant before it (bufferization's copy of a shared zero or -inf
    into each reduction's accumulator) becomes a fill of that constant,
    and the shared buffer goes when nothing copies out of it. A fill right
    before a reduction into the same buffer is then folded by
    msamp-gpu-register-accumulators and msamp-gpu-row-reductions: the
    accumulator starts from the constant (same value, same order of the
    arithmetic), and neither the copy nor the fill is a kernel.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MSAMPGPUParallelDimsOuter
    : Pass<"msamp-gpu-parallel-dims-outer", "::mlir::func::FuncOp"> {
  let summary = "move the parallel dimensions of linalg ops outermost";
  let description = [{
    A linalg op that reduces over an outer dimension (a bias gradient:
    `[batch, features] -> [features]`) becomes, in
    convert-linalg-to-parallel-loops, a sequential host loop around a
    parallel loop: one kernel launch per batch row. This pass generalizes
    such ops and interchanges their iterators so that every parallel
    dimension comes first (in its original order) and the reductions
    last: one kernel, one thread per output element, the reduction a loop
    inside it. Ops whose reductions are already innermost are untouched.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MSAMPGPUAtomicFullReductions
    : Pass<"msamp-gpu-atomic-full-reductions", "::mlir::func::FuncOp"> {
  let summary = "full f32/f64 sum reductions -> strided partial sums + atomic add";
  let description = [{
    A linalg op whose iterators are all reductions into a 0-d buffer (the
    loss, the gradient norm's sums of squares) has no parallel dimension:
    convert-linalg-to-parallel-loops would leave it a host loop, which
    pulls every page it reads from the GPU to the host each step. When the
    body is `acc + g(inputs)` (one `arith.addf` of the accumulator, f32 or
    f64, static loop ranges, no `linalg.index`), it becomes an
    `scf.parallel` of T threads, each adding its partial sum to the 0-d
    buffer with `memref.atomic_rmw addf`. A sum of at most `small-sum`
    elements: T = min(N, threads), thread t sums g over the elements t,
    t + T, ... (coalesced). A larger one: T = min(ceil(N / unroll),
    threads), and thread t keeps `unroll` accumulators, accumulator k
    summing the elements i + k T for i = t, t + unroll T, ... (the loads
    of one step issued together; the last, partial step masked), which it
    adds pairwise. An input read in loop order that is contiguous is read
    through a 1-d view (`memref.collapse_shape`) at the element's linear
    index, without delinearizing it. The result equals the sequential
    sum up to floating-point reassociation (the order of the atomic adds
    varies from run to run).
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1081344",
           "most threads (partial sums) per reduction (4 waves of an H100: "
           "4 x 132 SMs x 2,048 threads)">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"8",
           "accumulators (independent loads in flight) per thread of a sum "
           "of more than small-sum elements">,
    Option<"smallSum", "small-sum", "int64_t", /*default=*/"65536",
           "sums of at most this many elements keep one element per thread "
           "(T = min(N, threads))">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPUMergeAtomicSums
    : Pass<"msamp-gpu-merge-atomic-sums", "::mlir::func::FuncOp"> {
  let summary = "merge consecutive atomic full-sum kernels into one";
  let description = [{
    After msamp-gpu-atomic-full-reductions: two of its kernels (a 1-d
    scf.parallel of T threads, each summing a strided loop and adding the
    result to a 0-d buffer with memref.atomic_rmw addf) in one block, the
    earlier movable down to the later past ops that do not conflict with it
    (BufferAccesses.h), whose only common buffer is their accumulator,
    become one kernel of max(T) threads running both bodies (each guarded
    by its own thread count): the same partial sums and atomic adds, one
    launch (the gradient norm's sums of squares, one per parameter). Within
    the single-thread kernels' parameter budget, and within one copy of a
    repeated block of the step (RepeatGroups.h: a layer's kernels then
    merge the same way at every depth); the merged cost is the sum.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "kernels merged into the next">
  ];
}

def MSAMPGPUBlockAtomicSums
    : Pass<"msamp-gpu-block-atomic-sums", "::mlir::func::FuncOp"> {
  let summary = "atomic full-sum kernels -> a block sum in workgroup memory and one atomic add per block";
  let description = [{
    After msamp-gpu-atomic-full-reductions and msamp-gpu-merge-atomic-sums:
    an outermost 1-d `scf.parallel` from 0 to a constant T, step 1, whose
    body writes nothing but `memref.atomic_rmw addf` into 0-d f32/f64
    accumulators (each in the body or under `scf.if` guards only, nested
    when a merged kernel was merged again; at most 8 accumulators, which
    nothing else in the kernel names) becomes a
    `gpu.launch` of ceil(T / B) blocks of B threads (B = min(block-size,
    the power of two >= max(T, 32))): thread t = block * B + thread
    computes the loop body's partial sums, the atomic adds of one
    accumulator summed in their order (a guarded part, or t >= T, adds
    -0.0), every thread stores its sum to workgroup memory, a tree of
    log2(B) halving steps with barriers adds them, and thread 0 adds the
    block's sum to the accumulator with one atomic add: ceil(T / B) atomic
    adds per accumulator instead of one per thread and part. A
    reassociation of the same sum. GPU only (host emulation cannot run
    barriers; it runs the loop form, with the same partial sums).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block: a power of two in 32..1024">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "atomic-sum kernels rewritten">
  ];
}

def MSAMPGPURowReductions
    : Pass<"msamp-gpu-row-reductions", "::mlir::func::FuncOp"> {
  let summary = "f32 add/max reductions over contiguous rows -> a warp or a block per row with shuffles";
  let description = [{
    A bufferized `linalg.generic` with static shapes whose reduction
    dimensions come last (msamp-gpu-parallel-dims-outer) and are the
    innermost, unit-stride dimensions of every input that uses them (a
    row: LayerNorm's mean and variance, softmax's max and sum,
    cross-entropy over the vocabulary), and whose every output is an f32
    `acc = combine(acc, x)` with `arith.addf`, `arith.maxnumf` or
    `arith.maximumf` (optionally masked: `select(c, combine(acc, x), acc)`,
    the causal softmax), becomes one `gpu.launch` in which a warp (rows
    shorter than `block-threshold`; `warps-per-block` rows per block) or a
    block of `block-size` threads (longer rows) reduces each row: every
    lane combines a strided part of the row in a register (starting from
    the combiner's identity: -0.0 for add, NaN for maxnumf, -inf for
    maximumf), a `gpu.shuffle xor` butterfly combines the lanes (a block:
    then its warps, through workgroup memory), and one lane combines the
    total with the output's initial value, `combine(init, total)`, and
    stores it. Several outputs (reductions of the same row) are reduced
    together. The sum is reassociated (a fixed tree, no atomics: the same
    result every run); max is exact. With `chains`, the later reductions
    of the same rows and one elementwise op reading their results join the
    kernel (a block per row passes the results through workgroup memory);
    ops in between that touch the chain's buffers move after it.
    Everything else is left to the loop path. Not in host emulation (the
    host cannot run shuffles).
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"8",
           "rows (one per warp) per block, for rows shorter than "
           "block-threshold">,
    Option<"fuseChains", "chains", "bool", /*default=*/"true",
           "run a row reduction's later reductions of the same rows and "
           "the elementwise op that reads their results in its kernel">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per row for rows of at least block-threshold elements: "
           "a power of two in 64..1024">,
    Option<"blockThreshold", "block-threshold", "int64_t",
           /*default=*/"2048",
           "row length from which a block, not a warp, reduces a row">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPURegisterAccumulators
    : Pass<"msamp-gpu-register-accumulators", "::mlir::func::FuncOp"> {
  let summary = "reductions left to loops keep their accumulators in registers";
  let description = [{
    convert-linalg-to-parallel-loops loads a reduction's output element and
    stores it back in every iteration of the reduction loops: on the GPU
    one global load and store per element reduced (a bias gradient's
    thread walks all tokens that way). This pass lowers each linalg op
    with reduction iterators itself (the same loop nest:
    linalg::linalgOpToParallelLoops) and then carries every output element
    that the reduction loops load and store at loop-invariant indices
    through the loops as `scf.for` iter_args: one load before, one store
    after. The same operations in the same order: results are
    bit-identical. An output that is a view of the same buffer as another
    operand of the op (it could be read through it) is left as it is.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPUOneHotScatter
    : Pass<"msamp-gpu-one-hot-scatter", "::mlir::func::FuncOp"> {
  let summary = "embedding gradients: one-hot reductions -> a deterministic scatter kernel";
  let description = [{
    On buffers, before the linalg ops become loops. The embedding gradient
    `out[.., v, ..] = sum_n (f(ids[n]) == v ? g[n, ..] : 0)` (matched by
    MSAMP/TrainStep/OneHotReduction.h; the output a buffer that a
    `linalg.fill` of +0.0 wrote last) would run as one thread per output
    element, each testing every id: |out| x |ids| compare-select-adds. It
    becomes an `scf.parallel` over (row chunk, the output's other dims):
    the rows split into C chunks of R rows (C the fewest chunks giving at
    least `threads` threads, at most one per row), and thread (c, ..) scans
    the ids in order and adds g[n, ..] into out[f(ids[n]), ..] when f(ids[n])
    lies in its chunk [c R, min((c + 1) R, rows)). Each output element is
    owned by one thread and receives its terms in the reduction's order:
    bit-identical to the reduction and to the CPU's scatter, without
    atomics. Ids out of range fall in no chunk and are skipped; nothing is
    written out of bounds. Neighbouring threads take neighbouring elements
    of the innermost output dim (coalesced loads of g and out; one id load
    serves a warp). The kernel's cost (CostModel.h) is put on its
    location here, as msamp-gpu-kernel-costs does for linalg ops. A remark
    (`one-hot-scatter`) reports each rewrite with its chunks.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "threads to aim for per scatter (chunks x the other output dims)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "one-hot reductions rewritten">
  ];
}

def MSAMPGPUTileParallelLoops
    : Pass<"msamp-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "collapse and tile outermost scf.parallel loops into blocks x threads";
  let description = [{
    Each outermost `scf.parallel` is collapsed into one dimension (its
    iteration space linearized in row-major order, the indices recovered
    in the body), then tiled by `block-size` without min/max bounds (the
    tail is an `scf.if` inside the kernel). After `gpu-map-parallel-loops`
    the tile loop is blockIdx.x and the inner loop threadIdx.x: any tensor
    fits the 1-D grid (gridDim.y/z and blockDim.z are small), and
    neighbouring threads touch neighbouring elements.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block along the innermost dimension">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MSAMPGPUFoldArenaSubviews
    : Pass<"msamp-gpu-fold-arena-subviews", "::mlir::func::FuncOp"> {
  let summary = "contiguous static slices of arena views become arena views of their own";
  let description = [{
    After msamp-gpu-static-arena: a memref.subview with static offsets,
    sizes and strides whose elements are contiguous (row-major) and whose
    source is an arena view (memref.view of a byte buffer at a constant
    shift, identity layout) becomes a memref.view of that byte buffer at
    the parent's shift plus the slice's offset in bytes, with an identity
    layout, where every user is a load, store, copy, atomic update or
    linalg op on buffers. A kernel then takes the slice as a pointer the
    host offsets, not as the parent's pointer with the offset in its type,
    so slices at different offsets make one kernel (O3's per-tensor copies
    out of a packed buffer were a kernel per offset). Same elements, same
    order: bits unchanged.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFolded", "num-folded", "slices made arena views">
  ];
}

def MSAMPGPUStaticArena : Pass<"msamp-gpu-static-arena", "::mlir::ModuleOp"> {
  let summary = "the train step's buffers as views into a static device arena";
  let description = [{
    After msamp-gpu-tile-parallel-loops (every kernel-to-be is an
    scf.parallel nest; the rest of the step is host code): computes the
    step's static buffer plan (include/MSAMP/Codegen/BufferPlan.h) and
    places every buffer whose uses it can follow in one of two arenas:

    - the device arena: buffers that only kernels (uses inside an
      scf.parallel), runtime calls (`msamp_rt_*`, which the CUDA backend
      runs on device pointers in place) and deallocs touch;
    - the host arena: buffers host code reads or writes (the 0-d
      arithmetic between kernels). On a GPU it is pinned host memory,
      which kernels reach too.

    Each arena is laid out by lifetime (alloc to last use) at 256-byte
    aligned offsets (ArenaLayout.h); each `memref.alloc` becomes a
    `memref.view` of its arena's base at its offset and every dealloc of it
    disappears. The bases are taken once at the step's entry: by default
    from the runtime, `msamp_rt_gpu_arena(bytes)` (device memory,
    cudaMalloc) and `msamp_rt_gpu_host_arena(bytes)` (cudaMallocHost),
    which the session reserves at open and every step reuses; with
    `host-memory` (host emulation) as two `memref.alloc`s of the step,
    freed at its end. Buffers that escape the plan (through a loop's or
    an if's results, a select) or whose alloc runs more than once (in a
    loop) keep their alloc. Records the plan with both arenas' sizes as
    `msamp.buffer_plan` (msamp-compile's memory report and manifest).
  }];
  let options = [
    Option<"hostMemory", "host-memory", "bool", /*default=*/"false",
           "allocate the arenas in the step (host emulation) instead of "
           "asking the runtime for the device and pinned arenas">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numDevice", "device-buffers", "buffers in the device arena">,
    Statistic<"numHost", "host-buffers", "buffers in the host arena">,
    Statistic<"numKept", "kept-buffers", "buffers left to the allocator">
  ];
}

def MSAMPGPUScalarKernels
    : Pass<"msamp-gpu-scalar-kernels", "::mlir::func::FuncOp"> {
  let summary = "run the host's 0-d arithmetic between kernels as single-thread kernels";
  let description = [{
    After the kernels are scf.parallel nests (msamp-gpu-tile-parallel-loops):
    what has no parallel dimension is still host code between them: the
    0-d arithmetic of scales, inverse scales, the step counter, the loss
    and the gradient norm (`memref.load`, scalar `arith`/`math`,
    `memref.store`, 0-d `memref.copy`, `scf.if` on such values). Each
    maximal run of it becomes one `scf.parallel` of one block and one
    thread, which convert-parallel-loops-to-gpu makes a kernel, so the host
    never touches device memory between kernels and runtime calls and
    msamp-gpu-async-launches places no wait there.

    A 0-d copy of a constant `memref.global` becomes a store of the
    constant (a kernel cannot read the host image); any other 0-d copy a
    load and a store. Allocations, views and pure ops on host values stay
    where they are (before the kernel); a run ends at any other op (a
    call, a kernel, a deallocation, a loop or region with other ops). A run
    whose values are used after it by host code stays host code (it would
    need a wait); a remark names each such run. Each kernel carries its
    cost (msamp-gpu-cost-report): op "scalar". Bits are unchanged: the ops
    are the same, executed in the same order by one thread
    (`--target cuda-host-emulation` runs them as a one-iteration loop).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "single-thread kernels made">,
    Statistic<"numLeftOnHost", "num-left-on-host",
              "runs left on the host because host code uses their values">
  ];
}

def MSAMPGPUSplitScalarBuffers
    : Pass<"msamp-gpu-split-scalar-buffers", "::mlir::func::FuncOp"> {
  let summary = "give each value stored into a reused 0-d buffer its own buffer";
  let description = [{
    Before msamp-gpu-scalar-kernels: bufferization reuses one 0-d buffer
    for successive 0-d values (the inverse scales), which orders each store
    after the previous value's readers. Each top-level store into a 0-d
    allocation after the first starts a fresh allocation, used by that
    store and every use up to the next such store (views and casts rebuilt
    on it) and deallocated with the original; the first value keeps
    the buffer. Buffers whose address may escape (a user other than loads,
    stores, atomic updates, copies, deallocations and calls, or an address
    taken before the last store) are left alone. Every reader reads the
    value it read before: bits unchanged.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numSplit", "num-split", "0-d values given their own buffer">
  ];
}

def MSAMPGPUMergeScalarKernels
    : Pass<"msamp-gpu-merge-scalar-kernels", "::mlir::func::FuncOp"> {
  let summary = "merge single-thread kernels across the ops they do not depend on";
  let description = [{
    After msamp-gpu-scalar-kernels: each single-thread kernel moves up,
    past every op it does not depend on, into the previous single-thread
    kernel of its block (appended to its body). It does not move past an
    op that writes a buffer it reads or writes, or reads a buffer it
    writes (buffers traced through views and casts to their allocation;
    function arguments and globals may alias each other; a call with a
    table of addresses may touch anything). Allocations and pure ops that
    define values it uses move up with it. A merge that would exceed the
    kernel parameter budget of msamp-gpu-scalar-kernels is not made, nor
    one across two copies of a repeated block of the step (RepeatGroups.h:
    a layer's kernels then merge the same way at every depth). The merged
    kernel's cost (op "scalar") is recounted. Bits are unchanged: every op
    keeps its order relative to the ops it depends on.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged",
              "single-thread kernels merged into an earlier one">
  ];
}

def MSAMPGPUKernelLocalScalars
    : Pass<"msamp-gpu-kernel-local-scalars", "::mlir::func::FuncOp"> {
  let summary = "0-d buffers that one single-thread kernel alone writes and reads become its values";
  let description = [{
    After msamp-gpu-merge-scalar-kernels: a 0-d allocation whose only users
    are deallocations and loads and stores directly in the body of one
    single-thread kernel, the first of them a store, becomes a value of
    that kernel: each load reads the last value stored before it, and the
    stores, loads, deallocations and the allocation are erased. The
    gradient norm's running sum over the parameters kept each partial sum
    in a buffer of its own (msamp-gpu-split-scalar-buffers), one kernel
    parameter per parameter tensor, so that its kernel passed the
    parameter budget (kMaxSingleThreadParamBytes) with depth. The same
    values in the same order: bits unchanged.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numLocalized", "num-localized",
              "0-d buffers that became values of their kernel">
  ];
}

def MSAMPGPULinalgToParallelLoops
    : Pass<"msamp-gpu-linalg-to-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "linalg ops on buffers as scf.parallel loops, without "
                "the greedy driver's region simplification";
  let description = [{
    convert-linalg-to-parallel-loops' rewrite (each linalg op on buffers as
    scf.parallel loops over its parallel dimensions, with memref.dim of
    static buffers and trivial affine.apply folded), driven without region
    simplification: on the GPU step (one block of every layer's ops) the
    upstream pass walked every region after each round, and its cost grew
    faster than the step (issue 19: 0.68 s at 48 layers, now 0.35, the
    same train_step.so).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MSAMPGPUOutlineLayers
    : Pass<"msamp-gpu-outline-layers", "::mlir::ModuleOp"> {
  let summary = "compile each repeated layer's host code once: the step's "
                "tandem repeats as calls of shared functions, after the "
                "static arena";
  let description = [{
    After msamp-gpu-static-arena, where every buffer of the step is a view of
    an arena at a constant offset. Each view (and each reshape or cast of a
    buffer) is cloned before every top-level op that reads it, and each
    clone of an arena view takes its offset from its own `arith.index_cast`
    of a constant at the step's entry; index arithmetic on constants is
    folded. Each store into a multi-tensor call's table of buffer addresses
    (a `memref.alloca`) likewise takes its row index from a value per row.
    A layer's ops then read nothing but the arena's base, the step's
    arguments, the tables and those indices, and equal layers are equal
    text:
    msamp-outline-repeated-blocks (on buffers) replaces each copy with a call
    of one private function, whose views take their offsets as index
    arguments. The offsets then become constants again. The launches, the
    runtime calls and their order are those of the step before; only where
    the host code lives changes. The conversions after it, gpu-to-llvm and
    LLVM's code generation see each layer's host code once: a call with its
    offsets and buffers instead of every launch and runtime call of the
    layer. msamp-gpu-async-launches, msamp-gpu-graph-check and
    msamp-gpu-cost-report walk into the calls.
  }];
  let options = [
    Option<"optNone", "optnone", "bool", /*default=*/"false",
           "mark the functions optnone, as the step's entry point: their "
           "host code is glue that a CUDA graph replays, and "
           "msamp-compile then gives each launch's arguments a slot of the "
           "frame (LaunchAllocas.h)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def MSAMPGPUCheckKernelBuffers
    : Pass<"msamp-gpu-check-kernel-buffers", "::mlir::ModuleOp"> {
  let summary = "refuse a kernel buffer without a static layout, located";
  let description = [{
    After `gpu-kernel-outlining`: kernels take their buffers as bare
    pointers (convert-gpu-to-nvvm's and gpu-to-llvm's bare-pointer
    convention, docs/GPU.md "Kernel buffers as bare pointers"), the rest of
    each descriptor rebuilt from the memref type, so every memref operand of
    a `gpu.launch_func` must have a static shape, strides and offset. One
    that has not is an error at the launch naming the kernel, the argument
    and its type (gpu-to-llvm would only fail to legalize the launch).
  }];
}

def MSAMPGPUDedupeKernels
    : Pass<"msamp-gpu-dedupe-kernels", "::mlir::ModuleOp"> {
  let summary = "one gpu.module per structurally identical kernel";
  let description = [{
    After `gpu-kernel-outlining`, which makes one `gpu.module` per launch:
    modules whose kernels are structurally identical (same ops, attributes,
    shapes and element types: they differ only in the buffers they are
    launched on) are merged into the first, and every `gpu.launch_func`
    of the others launches that one. An N-layer transformer then compiles
    (and the driver JITs) each layer's kernels once, not N times. A remark
    (`kernels-deduplicated`) reports the counts.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numDeduplicated", "num-deduplicated",
              "gpu.modules merged into an identical one">
  ];
}

def MSAMPGPULowerFP8Casts : Pass<"msamp-gpu-lower-fp8-casts"> {
  let summary = "FP8 casts in GPU kernels -> NVVM cvt with satfinite";
  let description = [{
    Upstream's GPU-to-NVVM conversion does not lower `arith.truncf` or
    `arith.extf` to or from `f8E4M3FN` / `f8E5M2`. Inside `gpu.func`s this
    pass rewrites

    * `arith.truncf %x : f32 to f8E4M3FN|f8E5M2` (f16, bf16 and f64 sources
      go through f32 first) into `nvvm.convert.f32x2.to.f8x2` with
      `rnd = rn` and `sat = satfinite` (PTX
      `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`: round to nearest even, finite
      overflow and infinities saturate to the format's largest finite
      value, NaN stays NaN), i.e. the runtime's numerics;
    * `arith.extf %x : f8E4M3FN|f8E5M2 to f16|f32|...` into
      `nvvm.convert.f8x2.to.f16x2` (exact) followed by an exact `extf`.

    Both instructions need sm_89 (PTX 8.1) or sm_90 (PTX 8.0). Run it
    before `convert-gpu-to-nvvm`.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def MSAMPGPUStepFloor : Pass<"msamp-gpu-step-floor", "::mlir::ModuleOp"> {
  let summary = "record the tensor-level inputs of the cost report's floor";
  let description = [{
    On the tensor-level train step, before bufferization: records on it
    (`msamp.gpu_step_floor`) the bytes of its state, of its inputs (the
    batch), and of the values kept for backward: results of ops the loss
    depends on that an op the loss does not depend on (backward, optimizer)
    also reads, a reshape counted as its source. --msamp-gpu-cost-report
    turns them into `floor_ms` (docs/GPU.md "The cost report").
  }];
}

def MSAMPGPUFuseScaleUpdates
    : Pass<"msamp-gpu-fuse-scale-updates", "::mlir::func::FuncOp"> {
  let summary = "fold each FP8 cast's scaling bookkeeping into one "
                "msamp.scale_update";
  let description = [{
    On the tensor-level train step, before convert-msamp-to-runtime: the
    ops msamp-fp8-gemms writes for a delayed-scaling cast (msamp.amax, the
    optional all_reduce max, msamp.update_amax_history, the just-in-time
    msamp.compute_scale and its warm-up select, `1 / scale`, the next
    msamp.compute_scale) and for a just-in-time cast whose amax is
    all-reduced (the FP8 weight gradients) become one msamp.scale_update,
    lowered to one msamp_rt_scale_update call (docs/RuntimeABI.md 3.13): on
    the GPU an amax kernel and a one-thread kernel where there were five
    calls and a single-thread generated kernel. The same rules in the same
    order (numerics::scaleUpdate): the step's bits do not change.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numDelayed", "num-delayed",
              "delayed-scaling casts folded into one msamp.scale_update">,
    Statistic<"numJustInTime", "num-just-in-time",
              "all-reduced just-in-time casts folded into one "
              "msamp.scale_update">
  ];
}

def MSAMPGPUGroupAdamUpdates
    : Pass<"msamp-gpu-group-adam-updates", "::mlir::func::FuncOp"> {
  let summary = "group adjacent Adam updates into one multi-tensor call";
  let description = [{
    On the tensor-level train step, before convert-msamp-to-runtime: every
    maximal run of adjacent `msamp.adam_update` ops that can share one
    `msamp_rt_adam_update_multi` call (canShareAdamCall: the same lr and
    step values, hyper-parameters and dtypes) gets one group id
    (`msamp.adam_group`), which the conversion lowers to one call, so that
    the CUDA backend updates all of them in one launch per pass (per 24
    tensors) instead of one call each. A run of one is left alone. Only
    adjacent updates are grouped: no op between them can then read a state
    the call writes in place.

    With `per-copy` (the GPU pipeline's `outline-tensors`), a run whose
    updates repeat (a layer's parameters, one copy per layer, at least 16
    updates: TandemRepeats.h) is grouped within each copy, one call per
    class and layer: msamp-outline-repeated-blocks then moves each layer's
    call and its table of addresses into the layer's function, where it is
    compiled once, instead of one table in the step that grows with depth.
    A copy that is itself copies of a shorter block (layers of fewer
    updates, several per copy: how many depends on the depth) and the
    updates between repeats are grouped as without the option.
  }];
  let options = [
    Option<"perCopy", "per-copy", "bool", /*default=*/"false",
           "group within each copy of a repeated run of updates">
  ];
  let statistics = [
    Statistic<"numGroups", "num-groups", "multi-tensor Adam calls made">,
    Statistic<"numGrouped", "num-grouped", "Adam updates grouped">
  ];
}

def MSAMPGPUFusePermutes
    : Pass<"msamp-gpu-fuse-permutes", "::mlir::func::FuncOp"> {
  let summary = "fuse linalg.transpose into an elementwise neighbour";
  let description = [{
    On the tensor-level train step, after elementwise fusion: a
    linalg.transpose whose input is the one use of an all-parallel
    linalg.generic is generalized and fused into that producer, which then
    writes its result through the permuted map; otherwise one whose every
    use is an input of an all-parallel linalg.generic is fused into each
    consumer, which reads the transpose's input through the permuted map
    (linalg::fuseElementwiseOps); never into a contraction (still a generic
    here: msamp-normalize-contractions would materialize the permute again). No transpose kernel and no permuted copy
    remain: attention's head permutes after the Q, K and V bias-adds
    (issue 23). A transpose between library calls stays. GPU only: the CPU
    pipeline keeps its transposes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numIntoProducers", "num-into-producers",
              "transposes written by their producer">,
    Statistic<"numIntoConsumers", "num-into-consumers",
              "transposes read through by their consumers">
  ];
}

def MSAMPGPUFuseProducers
    : Pass<"msamp-gpu-fuse-producers", "::mlir::func::FuncOp"> {
  let summary = "recompute multi-use elementwise producers in each consumer";
  let description = [{
    On the tensor-level train step, after elementwise fusion and before
    msamp-normalize-contractions: an all-parallel linalg.generic whose
    result's every use is an input of a linalg.generic or linalg.reduce
    that indexes it by a permutation of all its loops (of a reduction: only
    a row reduction reading it in loop order, so that column and full
    reductions keep the split and summation order they have on the CPU) or,
    for a producer of at most four arith ops or square roots, by a
    broadcast (in a row reduction only of its parallel loops, next to an
    input read in loop order), is
    copied into every use and fused there (linalg::fuseElementwiseOps), when
    that moves fewer bytes than writing its result once and reading it in
    every consumer. Softmax's exp(s - max) then is never written (its row
    sum and its division each recompute it), nor its backward's dP * P
    (recomputed in the row sum), nor LayerNorm's mean and rstd (recomputed
    per element by the normalization and the backward). GPU only: the CPU
    pipeline keeps its kernels.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numProducers", "num-producers", "producers recomputed">,
    Statistic<"numFused", "num-fused", "consumers that recompute one">
  ];
}

def MSAMPGPUFuseSiblingReductions
    : Pass<"msamp-gpu-fuse-sibling-reductions", "::mlir::func::FuncOp"> {
  let summary = "merge independent row reductions that read the same tensor";
  let description = [{
    On the tensor-level train step, after msamp-gpu-fuse-producers: two row
    reductions (linalg.generic or linalg.reduce, [parallel...,
    reduction...], f32 accumulators, every input read with the reduction
    dimensions innermost in loop order) with the same static loop ranges
    that read a common input through the same map, the later one's operands
    all defined before the earlier one, become one linalg.generic with both
    outputs at the earlier one's place: the common input is read once
    (cross-entropy's row max and its target logit over the [tokens,
    vocabulary] logits). Each output keeps its body and order of terms.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "reductions merged into another">
  ];
}

def MSAMPGPUFP8OperandLayouts
    : Pass<"msamp-gpu-fp8-operand-layouts", "::mlir::func::FuncOp"> {
  let summary = "GEMMs read FP8 operands transposed from their quantize";
  let description = [{
    On the tensor-level train step, last before convert-msamp-to-runtime
    (GPU only): cuBLASLt's FP8 GEMMs take only the TN layout (both operands
    with K innermost), so msamp_rt_gemm byte-transposes an FP8 operand
    stored the other way (a with transpose_a, b without transpose_b: the
    wgrad's dY and activations, the dgrad's weight) in a pack kernel on
    every call. Where that operand is the codes of an msamp.quantize as
    [rows, cols] (its rank-2 result, or a collapse_shape of it that keeps
    its last dimension), the GEMM reads `linalg.transpose` of it instead,
    with the flag flipped; convert-msamp-to-runtime then has the quantize's
    call write those codes too (msamp_rt_quantize_transpose, or
    msamp_rt_quantize_jit's transposed layout), one kernel for both layouts.
    One transpose per quantized value serves every GEMM that needs it. A
    GEMM operand left to the pack gets a missed remark
    (-remarks-filter=msamp) saying why. The bytes are the same codes, so
    every GEMM multiplies the same values.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numOperands", "num-operands",
              "FP8 GEMM operands read from a quantize's transposed codes">,
    Statistic<"numTransposes", "num-transposes",
              "quantizes asked for their transposed codes">
  ];
}

def MSAMPGPUMergeSiblingKernels
    : Pass<"msamp-gpu-merge-sibling-kernels", "::mlir::func::FuncOp"> {
  let summary = "merge independent kernels over the same loops";
  let description = [{
    On buffers, before the linalg ops become loops: two linalg.generic ops
    of one block with at least one parallel loop, the same static loop
    ranges and iterator types (of reductions: both or neither a row
    reduction of msamp-gpu-row-reductions' form) that do not depend on each
    other become one linalg.generic with the outputs of both (one launch;
    each thread computes every output at its index, each with its own body
    and order of terms). The later one moves up to the earlier one, or the
    earlier one down to the later one, past the ops in between when none
    of them writes a buffer it reads or writes or reads a buffer it writes
    (the buffer model of msamp-gpu-merge-scalar-kernels:
    BufferAccesses.h); allocations, pure ops that define values it uses
    and the fills of its outputs move up with it. A merge whose buffers
    would pass the single-thread kernels' parameter budget is not made,
    nor one across two copies of a repeated block of the step
    (RepeatGroups.h: a layer's kernels then merge the same way at every
    depth). Bits are unchanged.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "kernels merged into another">
  ];
}

def MSAMPGPUKernelCosts
    : Pass<"msamp-gpu-kernel-costs", "::mlir::func::FuncOp"> {
  let summary = "attach each linalg op's kernel cost to its location";
  let description = [{
    Before msamp-gpu-atomic-full-reductions and
    convert-linalg-to-parallel-loops: every linalg op with a loop gets its
    cost as a kernel (MSAMP/Codegen/GPU/CostModel.h: FLOPs, bytes) as the
    metadata of a FusedLoc around its location. The passes that turn it
    into a parallel loop, a gpu.launch and a gpu.launch_func keep that
    location, so --msamp-gpu-cost-report reads each launch's cost from it.
  }];
}

def MSAMPGPUCostReport : Pass<"msamp-gpu-cost-report", "::mlir::ModuleOp"> {
  let summary = "write gpu_cost.json: per launch and library call, and totals";
  let description = [{
    After kernel outlining: reads each `gpu.launch_func`'s cost from the
    location msamp-gpu-kernel-costs tagged (a launch without one is an
    error), costs
    each runtime call (`msamp_rt_*`), counts host synchronizations per
    step, and writes the report to `file` (docs/Interfaces.md 4, docs/GPU.md
    "The cost report"). Removes what the cost passes recorded (the
    step's attribute, the locations' cost metadata).
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "where to write gpu_cost.json (empty: nowhere)">
  ];
}

def MSAMPGPUAsyncLaunches
    : Pass<"msamp-gpu-async-launches", "::mlir::ModuleOp"> {
  let summary = "launch kernels asynchronously; synchronize only before host code that touches memory";
  let description = [{
    After kernel outlining, a `gpu.launch_func` without an async token is
    lowered by gpu-to-llvm to a launch followed by a stream
    synchronization. The step's launches and its runtime calls all run on
    the session's one stream (the runtime's GPU wrappers hand out the CUDA
    backend's stream), so they are ordered without the host waiting: only
    host code that reads or writes memory (a `memref.load`, `store` or
    `copy` of the 0-d arithmetic left on the host, a call that is not one
    of the backend's stream-ordered entry points, a loop or branch, the
    return) must wait for the kernels before it. In each block, launches
    become `gpu.launch_func async` chained on one token (from `gpu.wait
    async`, i.e. the stream), and a blocking `gpu.wait` is placed only
    before the first such host op after a launch or a stream-ordered
    runtime call (which returns before its work is done when its buffers
    are device or managed memory, RuntimeABI.md 10.2), and before the
    block's terminator. Allocation and deallocation (stream-ordered reuse
    by the runtime's cache) and pure ops do not wait. A call of a function
    the module defines (a layer, msamp-gpu-outline-layers) is pending work
    like a launch; no return waits (the step's caller synchronizes, a
    callee's caller counts the call), and a callee's first host access
    waits for what its caller left on the stream.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def MSAMPGPUGraphCheck
    : Pass<"msamp-gpu-graph-check", "::mlir::ModuleOp"> {
  let summary = "record whether the step's host code can be captured as a CUDA graph";
  let description = [{
    After msamp-gpu-async-launches: a CUDA graph replays the work a step
    enqueued on the stream when it was captured, and nothing of its host
    code. The step's host code may therefore only enqueue: launches,
    stream-ordered runtime calls (none waits: the optimizers read step and
    lr on the device), the arenas' bases, arithmetic on values that do
    not change between steps, and stores into its own stack (a multi-tensor
    Adam call's table of buffer addresses). A blocking `gpu.wait`, a load or
    store of a buffer, a `memref.alloc`, another call or a host-level loop
    or branch (regions) would run at capture only, or cannot be captured.
    A call of a function the module defines (a layer that
    msamp-gpu-outline-layers outlined) is checked through the callee's
    body. The first such op of each public function is recorded, with its
    location, as the module's `msamp.cuda_graph_blocker` string (empty when
    there is none); msamp-compile exports it from `train_step.so` as
    `msamp_train_step_graph_blocker`, and the session replays the step as a
    graph only when it is empty (docs/GPU.md "The step as a CUDA graph");
    gpu_cost.json reports it as `cuda_graph_blocker`.
  }];
}

#endif // MSAMP_CODEGEN_GPU_PASSES_TD
