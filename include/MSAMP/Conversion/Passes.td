//===- Passes.td - msamp lowering passes ---------------------*- tablegen -*-===//

#ifndef MSAMP_CONVERSION_PASSES_TD
#define MSAMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MSAMPLowerRandomUniform
    : Pass<"msamp-lower-random-uniform", "::mlir::func::FuncOp"> {
  let summary = "msamp.random_uniform -> a linalg.generic computing Philox4x32-10";
  let description = [{
    On tensors, first in the lowering of both targets (--msamp-lower-to-llvm
    and --msamp-lower-to-gpu), so that the CPU loops and the GPU kernels
    compute the numbers from the same integer arithmetic: each element runs
    the ten Philox rounds of include/MSAMP/Numerics/Philox.h on its counter
    (element index, op id, step, rank) under the key `rng.seed` (32x32->64
    multiplications as i64 products), and turns the first two output words
    into (bits >> 11) * 2^-53, exact in f64. The seed, step and rank are
    0-d inputs of the generic (read inside the loop nest, so that no host
    code reads device memory).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPNormalizeContractions
    : Pass<"msamp-normalize-contractions", "::mlir::func::FuncOp"> {
  let summary = "contractions in any layout -> one (batched) GEMM generic";
  let description = [{
    On tensors, after elementwise fusion, before convert-msamp-to-runtime
    (both targets). Every multiply-accumulate linalg.generic with a zero
    init that GemmMatcher does not accept (any number of batch, M, N and K
    dimensions, operands in any order) becomes a generic over (batch?, m,
    n, k) that it does accept: each operand is viewed as one (batched)
    matrix by a tensor.collapse_shape of its batch, M/N and K dimensions,
    after one linalg.transpose only when its dimensions are not already
    ordered [batch..., X..., Y...] in either orientation; the result is
    expanded back (and transposed back likewise). The group orders are
    chosen to copy the fewest elements. Contractions with a non-zero init
    stay loop nests (counted). GPU.md, "Contractions as library GEMMs".
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numNormalized", "num-normalized",
              "contractions rewritten as one (batched) GEMM">,
    Statistic<"numTransposes", "num-transposes",
              "operands made contiguous by one transpose">,
    Statistic<"numLeft", "num-left",
              "multiply-accumulate reductions left as loop nests">
  ];
}

def MSAMPSplitColumnReductions
    : Pass<"msamp-split-column-reductions", "::mlir::func::FuncOp"> {
  let summary = "column reductions over many rows -> two stages over row chunks";
  let description = [{
    On buffers, after one-shot bufferization and before the buffer
    deallocation pipeline (both targets). A column reduction (a bias or
    LayerNorm gradient: one reduction dimension of R rows that is not the
    innermost in memory of any input, its outputs P < `threads` elements)
    runs on the GPU as one thread per output walking all R rows. Its rows
    are split into C chunks of S = R / C (C divides R): stage 1, a generic
    over (c, the original dimensions with the rows replaced by S), reduces
    each chunk into a fresh `[C, output...]` buffer of partials
    (memref.alloc, not filled: at a chunk's first row the body yields the
    row's term instead of combining it), its inputs viewed `[.., C, S, ..]`
    by memref.expand_shape; stage 2, a generic over the original dimensions
    with the rows replaced by c, combines the C partials into the original
    accumulator, in chunk order, so its initial value is kept. C is the
    smallest divisor of R with C >= max(ceil(threads / P), ceil(sqrt R))
    and S >= `min-rows` (else the largest divisor with S >= `min-rows`);
    an op with C < 2 or C x P > `max-partials` is left alone. Combiners:
    arith.addf, maximumf, maxnumf, minimumf, minnumf of the accumulator
    (used once) and a value that does not depend on any accumulator.
    Bodies with linalg.index or arith.cmpi (the one-hot embedding
    gradient) are left alone. Each output's sum is reassociated from R
    sequential terms to C sequential sums of S terms each; both targets
    run the pass with the same options, so they keep one order.
    GPU.md, "Column reductions".
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "split only reductions with fewer outputs; aim for C x outputs "
           ">= threads">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"64",
           "fewest rows per chunk (S)">,
    Option<"maxPartials", "max-partials", "int64_t", /*default=*/"16777216",
           "most elements of the partials buffer (C x outputs)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numSplit", "num-split",
              "column reductions split into two stages">
  ];
}

def ConvertMSAMPToRuntime : Pass<"convert-msamp-to-runtime", "::mlir::ModuleOp"> {
  let summary = "lower msamp ops and GEMMs of @train_step to runtime calls";
  let description = [{
    Runs on tensors, before one-shot bufferization. Every msamp op and every
    GEMM (linalg.matmul / batch_matmul / contraction generic, so that f32
    GEMMs also use the runtime's BLAS path) becomes a call to a runtime
    function of the table in RuntimeSymbols.h: operands are handed over with
    `bufferization.to_buffer`, results are fresh buffers wrapped back with
    `bufferization.to_tensor restrict`. An optimizer op that is the last
    reader of its state arguments writes them in place. Every updated state
    argument is then written back with `bufferization.materialize_in_destination`,
    the loss and the metric results are written into trailing output
    arguments, and the train step returns nothing: the runtime owns the state
    buffers and sees them updated in place. Run it immediately before one-shot
    bufferization: `to_buffer` is Pure, and CSE would merge a later read into
    an earlier `to_buffer` of the same tensor.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"fuseCasts", "fuse-casts", "bool", "true",
           "lower each just-in-time cast chain (msamp.amax -> compute_scale "
           "most_recent -> quantize of one tensor) to one "
           "msamp_rt_quantize_jit call">
  ];
  let statistics = [
    Statistic<"numCalls", "num-runtime-calls", "runtime calls emitted">,
    Statistic<"numInPlace", "num-in-place-updates",
              "optimizer outputs written in place into state arguments">,
    Statistic<"numFusedCasts", "num-fused-casts",
              "just-in-time cast chains lowered to one msamp_rt_quantize_jit">
  ];
}

def MSAMPFinalizeRuntimeCalls
    : Pass<"msamp-finalize-runtime-calls", "::mlir::ModuleOp"> {
  let summary = "retype runtime calls to the canonical C-interface declarations";
  let description = [{
    After bufferization and buffer deallocation, every call to a typed runtime
    declaration (`msamp.runtime_symbol`) is redirected to the one declaration
    of RuntimeSymbols.cpp whose memref parameters are `memref<*xi8>`: each
    unranked operand gets an `unrealized_conversion_cast` to `memref<*xi8>`,
    which vanishes in the LLVM lowering where every unranked memref is the
    same {rank, descriptor*} pair. This must not run earlier: buffer
    deallocation does not see through the cast and would free a buffer
    before the call that reads it.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MSAMPEmitEntryPoint : Pass<"msamp-emit-entry-point", "::mlir::ModuleOp"> {
  let summary = "add the packed C entry point of the train step (LLVM dialect)";
  let description = [{
    After conversion to the LLVM dialect, adds
    `void msamp_train_step_packed(void **descriptors)` which calls
    `_mlir_ciface_train_step` with the descriptor pointers (the manifest's
    arguments, then the loss and metric outputs), plus
    `int64_t msamp_train_step_abi_version()` and `msamp_train_step_num_args()`.
    The runtime calls this one uniform signature for any graph.
  }];
}


def MSAMPLegalizeMath : Pass<"msamp-legalize-math", "::mlir::func::FuncOp"> {
  let summary = "rewrite the math ops no target library provides";
  let description = [{
    Both lowerings, on tensors (after convert-elementwise-to-linalg, so that
    math ops are scalars in linalg bodies). The CPU target lowers math ops to
    libm calls and LLVM intrinsics, the GPU target to libdevice and NVVM;
    some ops have neither and are rewritten here, the same way for both
    targets: `math.rsqrt` -> 1 / sqrt (libm has no `rsqrtf`: the step would
    fail to load), `math.clampf` -> minimumf / maximumf, `math.fpowi` ->
    `math.powf` of the converted exponent, `math.ipowi` -> square-and-multiply
    over the exponent's bits (a negative exponent gives the integer part of
    the reciprocal; 0 for a zero base), `math.sincos` -> sin and cos,
    `math.isnan` / `isinf` / `isfinite` / `isnormal` -> comparisons of |x|.
    The test python/tests/test_math_ops.py compiles and runs every math op
    of MLIR 22 on both targets.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}


def MSAMPMathToLibmOrLLVM
    : Pass<"msamp-math-to-libm-or-llvm", "::mlir::ModuleOp"> {
  let summary = "host math ops -> libm calls or LLVM intrinsics, none left";
  let description = [{
    The host tail of both lowerings. One conversion with both upstream
    pattern sets: libm calls where libm has the function (benefit 2:
    `expm1f` and `log1pf` rather than LLVM's exp(x) - 1 and log(1 + x)),
    LLVM intrinsics for the rest and for the exact operations (absf,
    copysign, fma, sqrt, floor, ceil, trunc, round, roundeven: instructions,
    not scalar calls, so loops around them still vectorize). Upstream's
    convert-math-to-libm alone fails on every op it has no function for
    (copysign, ctlz, absi, ...). A math op that neither set lowers is a
    located error. Run msamp-legalize-math first (rsqrt: libm has no
    `rsqrtf`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect"];
}


def MSAMPSplitSharedInits
    : Pass<"msamp-split-shared-inits", "::mlir::func::FuncOp"> {
  let summary = "one tensor.empty (and one linalg.fill of it) per destination";
  let description = [{
    Right before one-shot bufferization. CSE merges every `tensor.empty` of
    one type into one value, and every `linalg.fill` of the same constant
    into one empty: at 24 layers of the issue-19 LM one 0-d empty was the
    destination of 300 writes (linalg outs, operands of the outlined
    blocks' calls) and one fill the init of 100 reductions. One-shot
    bufferization's conflict analysis checks every in-place write of an
    alias set against every read of it, once per write it decides: cubic
    in the size of such a set, and the set grows with depth (issue 19).
    This pass gives each destination (DPS init) use of a `linalg.fill`
    whose init is a `tensor.empty` its own clone of the fill (a reduction
    reads its init, so a second in-place write of that buffer was an
    allocation and a copy of the fill anyway; at O0 the 2-layer benchmark
    LM's `memref.copy` count fell from 50 to 10), and splits the uses of a
    `tensor.empty` into groups of at most `max-uses` consecutive uses in IR
    order, each with its own empty; a group also ends where the uses enter
    another segment of the function (a copy of a repeated block, or a
    stretch between repeats, of its top-level ops: TandemRepeats.h), so
    that every layer's buffers are shared alike whatever the depth (issue
    19). Writes into one empty share a buffer
    where bufferization proves them disjoint in time: groups keep most of
    that reuse (the planned peak of the issue's LM within 1% of before,
    where one empty per use cost 12%) and bound each alias set, so the
    analysis is linear in depth. Each clone is inserted before the first
    user's ancestor in the op's block (a use inside a loop does not
    allocate per iteration, and no buffer is allocated long before its
    first write); the original is erased once unused. Values are unchanged:
    an empty has no contents, a fill's clone computes the same splat.

    Last, chains of in-place writes are bounded: an op whose destination is
    the only use of an earlier destination-style op's result writes into
    that result's buffer, and bufferization keeps the whole chain in one
    alias set. The gradient norm is such a chain, one sum of squares per
    parameter into one f64 accumulator (536 ops at 24 layers on
    `--target cuda`, which outlines nothing on tensors): the analysis was
    cubic in it (6.8 s of a 17.5 s compile). A chain is cut at the first
    op of another segment when its value is small (at most 4,096
    elements) or the chain has `max-chain` ops, and at `2 x max-chain` ops
    anywhere: the destination becomes a `linalg.copy` of the chain's value
    into a fresh `tensor.empty` (static shapes), which starts a new chain
    and alias set: the same values in the same order. The gradient norm's
    accumulator is copied once per layer; cut every `max-chain` ops, the
    copy fell in a different layer at every depth, and the GPU kernels
    merged per layer differed between layers.
  }];
  let options = [
    Option<"maxUses", "max-uses", "unsigned", /*default=*/"16",
           "most uses one tensor.empty keeps (consecutive in IR order)">,
    Option<"maxChain", "max-chain", "unsigned", /*default=*/"128",
           "ops in a chain of in-place writes after which its destination "
           "is copied at the next segment boundary, and twice that anywhere "
           "(0: no cuts)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MSAMPSplitFreshDeallocs
    : Pass<"msamp-split-fresh-deallocs", "::mlir::func::FuncOp"> {
  let summary = "split a bufferization.dealloc of distinct fresh "
                "allocations into one dealloc per buffer";
  let description = [{
    Between ownership-based-buffer-deallocation and
    buffer-deallocation-simplification. The ownership-based pass frees
    what a function still owns at its end in one `bufferization.dealloc`:
    in @train_step, every buffer of the step's straight line (about 1,660
    at 12 layers). The simplification then proves pairwise that none of
    them alias before it splits them, quadratic in that count (the largest
    part of the lowering at 24 layers, issue 19). A dealloc whose memrefs
    are all results of distinct `memref.alloc` ops, whose conditions are all
    the constant true and which retains nothing needs no such proof: no two
    allocations alias. This pass splits it into one single-buffer dealloc
    per memref, in order, as the simplification's split would; the IR that
    the deallocation pipeline produces is unchanged.
  }];
}

def MSAMPCheckInPlaceStates
    : Pass<"msamp-check-in-place-states", "::mlir::func::FuncOp"> {
  let summary = "after bufferization: state outputs written in place really "
                "are the state arguments, else copy them back";
  let description = [{
    Runtime calls that update a state argument in place (convert-msamp-to-
    runtime: optimizer and broadcast outputs of a state's last reader) carry
    `msamp.in_place_args` = (operand index, argument number) pairs. After
    one-shot bufferization each such operand should be the argument's
    buffer (through casts); where bufferization wrote a copy instead (the
    old value is still read after the call), this pass copies that buffer
    into the argument at the end of the function. It then drops the
    attribute.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numCopiedBack", "num-copied-back",
              "in-place state outputs bufferized out of place and copied back">
  ];
}

#endif // MSAMP_CONVERSION_PASSES_TD
