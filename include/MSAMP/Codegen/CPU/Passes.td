//===- Passes.td - msamp CPU code generation passes --------*- tablegen -*-===//
//
// The CPU-only passes of --msamp-lower-to-llvm (docs/Passes.md): rewrites of
// the loops the host compiles, so that they vectorize and reference nothing
// the runtime does not provide.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_CPU_PASSES_TD
#define MSAMP_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MSAMPReorderReductionLoops
    : Pass<"msamp-reorder-reduction-loops", "::mlir::func::FuncOp"> {
  let summary = "put a contiguous parallel loop innermost in buffer reductions";
  let description = [{
    After bufferization, on the linalg reductions that stay generated loops
    (the attention einsums and batched products that are not runtime GEMMs):
    convert-linalg-to-loops nests the loops in iteration-domain order, so
    the reduction loop is innermost and every iteration loads and stores the
    output element (LLVM cannot keep it in a register without alias
    information) and nothing vectorizes. This pass interchanges the loops so
    that a parallel dimension along which the output is contiguous becomes
    the innermost loop, preceded by the reduction loops in their original
    order. Each output element still sees its reduction terms in the same
    order, so results are bit-identical; the innermost loop is now
    elementwise over contiguous memory and LLVM vectorizes it. An input that
    would be read with a stride along that dimension is first copied into a
    transposed buffer (linalg.transpose into a new allocation), when the
    reduction reuses it enough to pay for the copy. When that innermost
    extent is a multiple of 16, the body is pure f32 arith and no input is
    a view of the output, the reordered op is lowered right away to scf
    loops over vector<16xf32>: each chunk of up to 8 vectors of an output
    row is loaded once, carried through the reduction loops as iter_args
    (the same mulf/addf per lane, in the same order) and stored once.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numReordered", "num-reordered", "reductions reordered">,
    Statistic<"numVectorized", "num-vectorized",
              "reordered reductions lowered to vector accumulators">,
    Statistic<"numTransposed", "num-transposed-inputs",
              "inputs copied into a transposed buffer">
  ];
}


def MSAMPStridedCopiesToLoops
    : Pass<"msamp-strided-copies-to-loops", "::mlir::func::FuncOp"> {
  let summary = "lower memref.copy of non-contiguous buffers to loops";
  let description = [{
    CPU lowering, after bufferization. finalize-memref-to-llvm turns a copy
    between two contiguous buffers into `llvm.memcpy` but any other copy into
    a call of `memrefCopy`, a function of MLIR's C runner utilities that the
    msamp runtime does not provide, so `train_step.so` would fail to load.
    Strided copies arise from views along an inner dimension: a fused
    projection split into q, k and v (GPT-2's `c_attn`, ViT's `qkv`), the
    concatenation of their gradients, a transpose-split of heads. Each such
    copy becomes a nest of `scf.for` loops (outermost dimension first) of
    `memref.load` / `memref.store`; contiguous copies are left to memcpy.
    A strided copy of unranked buffers is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}


def MSAMPApproximateTanh
    : Pass<"msamp-approximate-tanh", "::mlir::func::FuncOp"> {
  let summary = "replace f32 math.tanh by a branch-free rational approximation";
  let description = [{
    CPU lowering: `math.tanh` on f32 otherwise becomes a call to libm's
    `tanhf`, which LLVM's loop vectorizer keeps as one scalar call per lane
    (LLVM's glibc vector-library table has no tanhf). GELU (tanh form)
    calls it twice per hidden activation per step, once in the forward and
    once in the backward, which made it ~18% of an O0 transformer step.
    This pass rewrites it with MLIR's polynomial approximation (clamp to
    +-7.99, a 13/6 rational in x, x itself below 4e-4): pure arith and
    fused multiply-adds (emitted as `llvm.intr.fma`, not libm `fmaf`
    calls), so the loop around it vectorizes. The result is within a
    few ulp of tanhf and the same on every x86-64 host (fma is exact
    whether the CPU has the instruction or libm emulates it).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numApproximated", "num-approximated", "math.tanh ops replaced">
  ];
}


def MSAMPOneHotReductionToScatter
    : Pass<"msamp-one-hot-reduction-to-scatter", "::mlir::func::FuncOp"> {
  let summary = "embedding gradients: one-hot reductions -> loops of row adds";
  let description = [{
    CPU lowering, on tensors before bufferization. The gradient of an
    embedding lookup (the graph generators' embedding backward, ONNX
    GatherGrad) is a linalg.generic that reduces over the ids:
    `out[.., v, ..] = sum_n (f(ids[n]) == v ? g[n, ..] : 0)` from a +0.0
    output, |out| x |ids| compare-select-adds where |g| adds are the work
    (10G instead of 0.2M for a 50k vocabulary). It becomes scf.for loops over
    the ids that add the gradient slice g[n, ..] into the output row f(ids[n])
    (skipped when out of range), through tensor.extract_slice /
    insert_slice, which one-shot bufferization updates in place.
    Bit-identical: every output element gets the same non-zero terms in the
    same order; the +0.0 terms the reduction adds for other ids change
    nothing, because a sum started at +0.0 is never -0.0.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "one-hot reductions rewritten">
  ];
}

def MSAMPOutlineLoopNests
    : Pass<"msamp-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "outline each top-level loop nest of a function as its own "
                "function, structurally identical nests once";
  let description = [{
    CPU lowering, after linalg -> loops: every outermost `scf.for` /
    `scf.parallel` in a function body becomes a call to a private
    function that takes the buffers and scalars the nest uses
    from outside it as arguments (constants are cloned in, so they are part
    of the nest's identity) and returns the loop's results.

    Nests that are structurally identical (same ops, attributes, shapes,
    layouts and element types; they differ only in the buffers they touch)
    share one function: a transformer layer's loop nests are compiled once
    for all layers. Without outlining the whole step was one LLVM function
    whose register allocation, loop strength reduction and instruction
    selection grew faster than linearly with depth (docs/Benchmarks.md).

    The functions have internal linkage and `noinline` (LLVM's inliner
    would put a function with one call site back). A remark
    (`loop-nests-outlined`) reports how many nests became how many
    functions.
  }];
  let options = [
    Option<"dedupe", "dedupe", "bool", /*default=*/"true",
           "share one function between structurally identical nests">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "loop nests outlined">,
    Statistic<"numDeduplicated", "num-deduplicated",
              "loop nests that reuse an identical nest's function">
  ];
}

def MSAMPBarePointerCalls
    : Pass<"msamp-bare-pointer-calls", "::mlir::ModuleOp"> {
  let summary = "pass the buffers of private functions with static memref "
                "types as bare pointers";
  let description = [{
    CPU lowering, right before the conversion to LLVM: gives every private
    `func.func` definition whose memref arguments all have a static shape,
    static strides and a static offset, and which returns no memref, the
    `llvm.bareptr` attribute, with which convert-func-to-llvm passes each
    buffer as one pointer (the descriptor's aligned pointer) instead of
    its 3 + 2 x rank descriptor fields, at the definition and at every
    call; the callee rebuilds the descriptor from its static type.

    The outlined blocks and loop nests (msamp-outline-repeated-blocks,
    msamp-outline-loop-nests) take every buffer they touch: with whole
    descriptors each call of a layer's block in the straight-line
    `@train_step` passed ~1,300 scalars, which every later pass paid for
    per layer (issue 19, docs/Benchmarks.md). Left alone: public functions
    (their callers outside the module build descriptors), functions with a
    C interface, functions referenced other than as the callee of a
    `func.call`, and functions that free or reallocate a buffer they did
    not allocate or return one (the bare pointer is the aligned one, not
    the one to free).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numBarePointer", "num-bare-pointer",
              "functions given the bare pointer calling convention">
  ];
}

def MSAMPInlineStepIntoEntryPoint
    : Pass<"msamp-inline-step-into-entry-point", "::mlir::ModuleOp"> {
  let summary = "move @train_step and its C interface into "
                "msamp_train_step_packed";
  let description = [{
    CPU lowering, after msamp-emit-entry-point: the bodies of
    `_mlir_ciface_train_step` and then `@train_step` replace their one call
    (in `msamp_train_step_packed`, the runtime's only way into the step,
    RuntimeABI.md 11), and the two functions are erased. Each is moved only
    if it is a definition returning nothing whose sole use is that call;
    every return becomes a branch to what followed the call.

    `@train_step` took every descriptor field of every argument as a scalar
    (11,453 parameters at 24 layers of the issue's LM), its C interface one
    pointer per descriptor, and the C interface called the step with all
    11,453. At -O0 (msamp-optnone-entry-points) LLVM lowers a function's
    stack arguments, and a call's, as one SelectionDAG whose code generation
    grew about 2.5x per doubling of their number (issue 19,
    docs/Benchmarks.md). The packed entry point takes one pointer: the same
    instructions run in the same order, without the two calls.
  }];
  let statistics = [
    Statistic<"numInlined", "num-inlined", "functions moved into the "
              "packed entry point">
  ];
}

def MSAMPOptNoneEntryPoints
    : Pass<"msamp-optnone-entry-points", "::mlir::ModuleOp"> {
  let summary = "compile the step's public LLVM functions without "
                "optimization when they have no loop";
  let description = [{
    CPU lowering, last: once the loop nests and the repeated layers are
    functions of their own, `@train_step` and its public wrappers
    (`_mlir_ciface_train_step`, `msamp_train_step_packed`,
    `msamp_train_step_check_inputs`, ...) are straight lines of calls,
    allocations and runtime calls whose length grows with depth. LLVM -O3
    buys nothing there (the work is in the callees) but was the largest
    part of the compile at depth: it inlined the 1,300-parameter step into
    its C-interface wrapper and optimized both (docs/Benchmarks.md, issue
    19). This pass gives every public `llvm.func` definition whose control
    flow has no cycle the `optimize_none` and `no_inline` attributes: LLVM's
    optimizer skips it and its code generator selects it at -O0 (fast
    instruction selection). A function with a loop keeps -O3. Private
    functions (the loop nests and blocks) are left alone. Numbers do not
    change: the step's own arithmetic is a few scalar operations without
    fast-math flags, which -O0 and -O3 evaluate alike.
  }];
  let statistics = [
    Statistic<"numMarked", "num-marked", "functions marked optnone">
  ];
}

def MSAMPSplitStraightLines
    : Pass<"msamp-split-straight-lines", "::mlir::ModuleOp"> {
  let summary = "cut the blocks of the functions compiled at -O0 into blocks "
                "of a bounded number of operations";
  let description = [{
    CPU lowering, after msamp-optnone-entry-points: every `llvm.func`
    definition with `optimize_none` (the step and its public wrappers,
    straight lines of calls, allocations and descriptor fields whose
    length grows with depth) gets its blocks cut into blocks of at most
    `max-ops` operations, each ending in a branch to the next. Allocas of
    a constant size first move to the start of the entry block (with their
    size constants), so they stay static stack slots.

    At -O0 LLVM selects instructions with FastISel, which gives a block to
    SelectionDAG from its start up to any instruction it cannot select
    (aggregate loads, `insertvalue` of descriptors); SelectionDAG's
    scheduling and combining of one block of the whole step grew faster
    than the block (issue 19, docs/Benchmarks.md). Bounded blocks make the
    step's code generation linear in depth. Only control flow changes: the
    same operations run in the same order.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"256",
           "most operations per block (the branch not counted)">
  ];
  let statistics = [
    Statistic<"numSplit", "num-split", "functions whose blocks were cut">
  ];
}

def MSAMPOutlineRepeatedBlocks
    : Pass<"msamp-outline-repeated-blocks", "::mlir::ModuleOp"> {
  let summary = "outline the repeated layers of @train_step as calls of "
                "shared functions, before bufferization";
  let description = [{
    CPU lowering, between convert-msamp-to-runtime and one-shot
    bufferization: finds the tandem repeats of @train_step's top-level ops
    (a block of ops followed by copies of itself, such as a transformer's
    layers in the forward pass, the backward pass and the optimizer) and
    replaces each copy with a call of one private function. Copies must be
    structurally identical (same ops, attributes, shapes and element types,
    the same data flow inside; they differ only in the values they read from
    outside, which become arguments, and constants are cloned in): the
    check compares the candidate functions' generic-form text. Bufferization,
    deallocation and LLVM then compile each layer's code once, and the step
    is a short sequence of calls.

    In-place state updates move into the functions, but the buffers they
    write stay in @train_step: the `to_buffer` of each state argument that
    a runtime call with `msamp.in_place_args` or a
    `materialize_in_destination` writes (through a memref value), and those
    `materialize_in_destination` ops. A function takes such a buffer as a
    memref argument and its call carries `msamp.in_place_args` naming the
    call's operand (the function's copy of the runtime call has none). A
    copy's run crosses such a buffer when no other op of the copy before it
    reads the argument; otherwise the buffer splits the copy into runs, one
    function per run. Constants and static `tensor.empty` ops are cloned
    into the functions. Runs that would return a memref, or take one that
    is not such a buffer, stay inline. The functions have internal linkage
    and `noinline`. A remark (`blocks-outlined`) reports how many blocks
    became calls of how many functions.

    With `on-buffers` (after deallocation on the CPU; after the static
    arena on the GPU, msamp-gpu-outline-layers) nothing stays in the step:
    a run takes in clones of the views, casts and buffer addresses outside
    it that it reads, rebuilds after the call those used after it, and a
    run of pure ops only stays inline.
  }];
  let options = [
    Option<"minPeriod", "min-period", "int64_t", /*default=*/"16",
           "fewest top-level ops a repeated block has">,
    Option<"minRunOps", "min-run-ops", "int64_t", /*default=*/"4",
           "fewest ops a run between kept state buffers needs to be outlined">,
    Option<"onBuffers", "on-buffers", "bool", /*default=*/"false",
           "run after bufferization and deallocation: nothing is kept in the "
           "step and buffers may cross the calls">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numCalls", "num-calls", "blocks replaced with calls">,
    Statistic<"numFunctions", "num-functions", "functions the blocks share">
  ];
}

def MSAMPBufferPlan : Pass<"msamp-buffer-plan", "::mlir::ModuleOp"> {
  let summary = "record the peak of the train step's static buffer plan";
  let description = [{
    After bufferization and buffer deallocation (convert-bufferization-to-memref
    included): computes the static buffer plan of @train_step
    (include/MSAMP/Codegen/BufferPlan.h: every memref.alloc with its size and
    its lifetime up to the memref.dealloc that frees it, in program order)
    and records its high-water mark on the module as

      msamp.buffer_plan = {peak_bytes = P : i64, session_bytes = S : i64,
                           step_bytes = T : i64, buffers = N : i64,
                           at = loc(...)}

    S is the bytes of the step's memref arguments (state, inputs and outputs
    the session allocates), T the most bytes of the step's own allocations
    live at once, P = S + T, N the number of allocations and `at` the
    location of the allocation that reaches T. msamp-compile writes these
    into memory_report.json and removes the attribute. A module without a
    train step is left alone; an allocation of a dynamic size is a located
    error.
  }];
}

#endif // MSAMP_CODEGEN_CPU_PASSES_TD
