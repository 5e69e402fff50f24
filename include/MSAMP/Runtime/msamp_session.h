/*===- msamp_session.h - Training sessions over a compiled step ---*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * The public C API of libmsamp_session: everything needed to run a train step
 * that msamp-compile produced (OUTDIR/train_step.so + manifest.json +
 * train_step.mlir) without linking MLIR or LLVM. msamp-run is a thin CLI over
 * it; the Python package and tests use it through ctypes or directly.
 *
 * A session
 *   - parses and validates manifest.json (docs/Interfaces.md 4),
 *   - dlopens train_step.so (RTLD_NOW, after making libmsamp_runtime's
 *     symbols globally visible) and checks its ABI version and arity,
 *   - owns one 64-byte aligned, contiguous row-major buffer per state tensor,
 *     per input, for the loss and per metric, and the memref descriptors that
 *     point at them (the calling convention of msamp_train_step_packed,
 *     docs/RuntimeABI.md 11),
 *   - initializes state per the manifest's "init" (see msamp_session_init),
 *     loads and saves checkpoints (safetensors, written atomically),
 *   - runs steps: sets the learning rate and the gradient clipping
 *     threshold, calls the step, checks the runtime's sticky error, the loss
 *     and the step's non-finite-gradient metric.
 *
 * Plain C (C99 or C++); no MLIR, CUDA or C++ type appears here.
 *
 * Errors
 * ------
 * Every function that can fail returns msamp_status. On failure the message
 * is available from msamp_last_error_message() on the same thread until the
 * next failing call; it names the file, tensor and the expected and found
 * values where there are any. Nothing aborts and no C++ exception crosses
 * this boundary.
 *
 * Threading: a session is used by one thread at a time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_SESSION_H
#define MSAMP_RUNTIME_MSAMP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "msamp_vocabulary.h"

#if defined(_WIN32)
#define MSAMP_SESSION_EXPORT
#else
#define MSAMP_SESSION_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes. MSAMP_OK is 0; every other value names a class of failure,
 *  the message says which tensor or file and why. */
typedef enum msamp_status {
  MSAMP_OK = 0,
  /** A null pointer, a bad value, an unknown name. */
  MSAMP_ERROR_INVALID_ARGUMENT = 1,
  /** A file cannot be read or written. */
  MSAMP_ERROR_IO = 2,
  /** manifest.json is missing or invalid. */
  MSAMP_ERROR_MANIFEST = 3,
  /** A malformed safetensors file. */
  MSAMP_ERROR_FORMAT = 4,
  /** A tensor is missing, or has the wrong shape or dtype. */
  MSAMP_ERROR_MISMATCH = 5,
  /** train_step.so cannot be loaded or does not fit the manifest. */
  MSAMP_ERROR_LOAD = 6,
  /** The runtime recorded an error during a step. */
  MSAMP_ERROR_RUNTIME = 7,
  /** The loss of a step is NaN or infinite. */
  MSAMP_ERROR_NONFINITE = 8,
  /** A checkpoint of another graph, level or world size. */
  MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT = 9,
  MSAMP_ERROR_OUT_OF_MEMORY = 10,
  MSAMP_ERROR_INTERNAL = 11
} msamp_status;

/** The message of the last failed call on this thread ("" if none). Valid
 *  until the next call into this library on the same thread. */
MSAMP_SESSION_EXPORT const char *msamp_last_error_message(void);

/** Version of the manifest.json format (its "abi_version"): the one
 *  definition the compiler (--msamp-write-manifest writes it) and this library
 *  (msamp_session_open accepts no other) share. Bumped on any incompatible
 *  change of the manifest; 2: a step with dropout has the `training`
 *  hyperparam (docs/RuntimeABI.md 11); 3: a ZeRO stage 3 param may be a
 *  piece with "param_shape" (docs/RuntimeABI.md 12). */
#define MSAMP_MANIFEST_VERSION 3

/** The msamp version this library was built from, e.g. "0.1.0". */
MSAMP_SESSION_EXPORT const char *msamp_version(void);

/** Short name of a status code, e.g. "MSAMP_ERROR_MISMATCH". */
MSAMP_SESSION_EXPORT const char *msamp_status_name(msamp_status status);

/** The MLIR spelling ("f32", "f8E4M3FN", ...) of runtime dtype code `code`
 *  (msamp_rt_dtype), or NULL outside it: bindings (the Python package)
 *  enumerate the codes from 0 up to the first NULL instead of restating
 *  them. */
MSAMP_SESSION_EXPORT const char *msamp_dtype_name(int32_t code);

/** The spelling of role `role` of MSAMP_ROLE_LIST ("param", ...), or NULL
 *  outside 0..MSAMP_NUM_ROLES-1; bindings enumerate the roles with it. */
MSAMP_SESSION_EXPORT const char *msamp_role_name(int32_t role);
/** The msamp_role_kind of `role`, or -1 outside 0..MSAMP_NUM_ROLES-1. */
MSAMP_SESSION_EXPORT int32_t msamp_role_kind_of(int32_t role);
/** The key of memory-report category `category` ("weights", ...), or NULL
 *  outside 0..MSAMP_MEMORY_NUM_CATEGORIES-1. */
MSAMP_SESSION_EXPORT const char *msamp_memory_category_name(int32_t category);
/** The name of the `index`-th flag of MSAMP_STEP_FLAG_LIST ("skip_nonfinite",
 *  "eval"), or NULL past the last; msamp_step_flag_bit(index) is its bit
 *  (MSAMP_STEP_SKIP_NONFINITE, ...), 0 past the last. */
MSAMP_SESSION_EXPORT const char *msamp_step_flag_name(int32_t index);
MSAMP_SESSION_EXPORT uint32_t msamp_step_flag_bit(int32_t index);
/** The name of msamp_lr_schedule `schedule` ("constant", "cosine"), or NULL
 *  outside the enum. */
MSAMP_SESSION_EXPORT const char *msamp_lr_schedule_name(int32_t schedule);

typedef struct msamp_session msamp_session;

/** Opens the msamp-compile output directory `dir` (manifest.json,
 *  train_step.so, train_step.mlir). The state is allocated and zero-filled
 *  but not initialized: call msamp_session_init or msamp_session_load next.
 *  The graph hash is the SHA-256 of train_step.mlir. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_open(const char *dir,
                                                     msamp_session **out);

/** Frees the buffers; the step library stays loaded (dlclose of code that
 *  other sessions may run is not worth the risk). NULL is accepted. */
MSAMP_SESSION_EXPORT void msamp_session_close(msamp_session *session);

/*===----------------------------------------------------------------------===
 * Description of the compiled step
 *===----------------------------------------------------------------------===*/

/** "O0", "O1", "O2" or "O3" (the manifest's level). */
MSAMP_SESSION_EXPORT const char *
msamp_session_level(const msamp_session *session);
/** Ranks of the run. A replicated step (O0-O2, manifest "world_size" 1)
 *  runs on any number of data-parallel ranks: this is then the runtime
 *  collective's size (msamp_rt_world_size(), 1 without a launcher). A step
 *  compiled for a fixed group (O3) reports the manifest's, and opening it
 *  under another group size fails. Checkpoints record this value and
 *  msamp_session_load refuses one written with another. */
MSAMP_SESSION_EXPORT int64_t
msamp_session_world_size(const msamp_session *session);
/** "sha256:<64 hex digits>" of train_step.mlir. */
MSAMP_SESSION_EXPORT const char *
msamp_session_graph_hash(const msamp_session *session);
/** The learning rate the graph was compiled with (the msamp.optimizer "lr" of
 *  @train_step), or 1e-3 (docs/Interfaces.md 1's default) when not recorded. */
MSAMP_SESSION_EXPORT double
msamp_session_default_lr(const msamp_session *session);

/** A tensor owned by the session. Pointers stay valid until the session is
 *  closed. dtype is the MLIR spelling (f32, f16, bf16, f8E4M3FN, f8E5M2, i64,
 *  i32); role is the manifest's.
 *
 *  `data` is host memory. For a step compiled for the CPU it is the tensor
 *  itself. For a step compiled with --target cuda the tensor is device
 *  memory and `data` its host copy: a state tensor's or metric's is read
 *  from the device by the call that fills the info (and goes stale when a
 *  step runs); an input's is what the session and the caller write and
 *  every step copies to the device, so writing an input through `data`
 *  works on both. Writing a state tensor through `data` reaches only the
 *  host copy of a GPU session: use msamp_session_write_tensor, which works
 *  on both (docs/GPU.md "Session buffers in device memory"). */
typedef struct msamp_tensor_info {
  const char *name;
  const char *role;
  const char *dtype;
  int32_t rank;
  const int64_t *shape;
  int64_t num_elements;
  int64_t num_bytes;
  void *data; /**< contiguous row-major, 64-byte aligned. */
} msamp_tensor_info;

/** State tensors (params, optimizer moments, step, scaling state, buffers),
 *  in manifest order. */
MSAMP_SESSION_EXPORT int64_t msamp_session_num_state(const msamp_session *s);
MSAMP_SESSION_EXPORT msamp_status msamp_session_state_info(
    const msamp_session *s, int64_t i, msamp_tensor_info *info);
/** Per-step inputs (role "input", "target", "hyperparam" or "rank"), in
 *  manifest order. The hyperparams ("lr", "max_grad_norm", "training") are
 *  set by the session from msamp_session_step (lr; training: 0 with
 *  MSAMP_STEP_EVAL, else 1) and msamp_session_set_max_grad_norm. */
MSAMP_SESSION_EXPORT int64_t msamp_session_num_inputs(const msamp_session *s);
MSAMP_SESSION_EXPORT msamp_status msamp_session_input_info(
    const msamp_session *s, int64_t i, msamp_tensor_info *info);
/** Looks a state tensor or input up by name. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_find(const msamp_session *s,
                                                     const char *name,
                                                     msamp_tensor_info *info);

/** Copies state tensor or input `name` (its storage bytes, `num_bytes` =
 *  its size) out of the session, from the device for a GPU step, or into
 *  it (to the device for a GPU step, before the next step runs). A size
 *  that differs is MSAMP_ERROR_MISMATCH. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_read_tensor(
    const msamp_session *s, const char *name, void *out, int64_t num_bytes);
MSAMP_SESSION_EXPORT msamp_status msamp_session_write_tensor(msamp_session *s,
                                                             const char *name,
                                                             const void *data,
                                                             int64_t num_bytes);

/** The f32 value of param `name`: its storage decoded and multiplied by the
 *  inverse of its `<name>.scale` state when there is one. `out` holds
 *  `count` floats, which must equal the param's element count. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_read_param(
    const msamp_session *s, const char *name, float *out, int64_t count);

/*===----------------------------------------------------------------------===
 * Initialization and checkpoints
 *===----------------------------------------------------------------------===*/

/** Initializes every state tensor per its manifest "init":
 *   - "normal(MEAN,STD)": MEAN + STD * z, z standard normal from a stream
 *     that depends only on `seed` and the tensor's name: splitmix64 seeded
 *     with seed ^ FNV-1a-64(name), two uniforms in (0,1) from the top 53 bits
 *     of successive outputs, Box-Muller in double (both values of a pair
 *     used, cos first), rounded once to f32. Reproducible on any platform
 *     with an IEEE double libm accurate to within an ulp;
 *   - "zeros", "ones";
 *   - "from_param": `<P>.scale` of a param P stored in f16 (or FP8) is the
 *     power-of-two scale computeScalePow2(amax(P), 1, fp_max(storage), 0)
 *     (fp_max = 65504 for f16), a master copy `<P>.master` is P's value.
 *  When `init_file` is not NULL it is a safetensors file of f32 tensors named
 *  after params; their values replace the random init of those params (every
 *  tensor in it must be a param of matching shape; params it does not name
 *  keep their manifest init). Params are then cast to their storage dtype
 *  (with their scale) by msamp's numerics core. It may also hold buffers,
 *  in the buffer's own dtype and shape, copied as they are. A __metadata__
 *  "msamp_state_dict" (the state_dict layout msamp.export records, see
 *  msamp_session_export_weights) is kept by the session and written into
 *  its checkpoints; every state tensor it names must be a param or buffer.
 *  `*num_from_file` (may be NULL) receives how many params came from the
 *  file. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_init(msamp_session *s,
                                                     uint64_t seed,
                                                     const char *init_file,
                                                     int64_t *num_from_file);

/** Writes every state tensor, by manifest name in its storage dtype, to the
 *  safetensors file `path` with __metadata__ {msamp_version, abi_version,
 *  level, graph_hash, world_size, rank, step}. The bytes go to `path`.tmp,
 *  which is fsynced and renamed over `path`; on any error `path` is left as
 *  it was and the temporary file is removed.
 *  O3 (a step compiled for one rank of a group): every rank must call it;
 *  each writes its sharded state (the manifest's "sharded" entries) to
 *  `path` with ".rank<r>" before the extension (metadata "part": "shard"),
 *  and rank 0 also writes the state every rank holds to `path` ("part":
 *  "replicated", "layout_hash" instead of "graph_hash", "shards": N).
 *  State holding a NaN or an infinity is never written:
 *  MSAMP_ERROR_NONFINITE naming the tensor and the element. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_save(const msamp_session *s,
                                                     const char *path);

/** Restores every state tensor from a checkpoint written by
 *  msamp_session_save. A checkpoint of another world size, level or graph
 *  is refused (MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT, naming both values);
 *  every state tensor must be present with its shape and dtype. Nothing is
 *  changed unless everything checks out. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_load(msamp_session *s,
                                                     const char *path);

/*===----------------------------------------------------------------------===
 * Trained weights for PyTorch (docs/Interfaces.md 5 --export-weights)
 *===----------------------------------------------------------------------===*/

/** Writes the trained weights to the safetensors file `path` (atomically) as
 *  a PyTorch state_dict, for `model.load_state_dict(..., strict=True)`: one
 *  tensor per entry of the state_dict layout (the init file's or the
 *  checkpoint's "msamp_state_dict" metadata: [key, state name] pairs in the
 *  module's state_dict order, tied weights several keys of one param; when
 *  none was recorded, every param then every buffer under its manifest
 *  name). Floating entries are f32: the FP16 master "<P>.master" when there
 *  is one, else the param, decoded and multiplied by the inverse of its
 *  "<tensor>.scale" (msamp_session_read_param's arithmetic); integer
 *  buffers keep their dtype. __metadata__: format "pt", msamp_version,
 *  level, step and the layout. At O3 with several ranks each rank holds
 *  only the masters it owns: this fails (MSAMP_ERROR_INVALID_ARGUMENT);
 *  save a checkpoint on every rank and use
 *  msamp_export_checkpoint_weights. */
MSAMP_SESSION_EXPORT msamp_status
msamp_session_export_weights(const msamp_session *s, const char *path);

/** The same file from a checkpoint written by msamp_session_save, without a
 *  session: at O3 from the replicated part at `checkpoint` and every rank's
 *  shard next to it (a missing or mismatched shard is an error naming it).
 *  `step_dir` (may be NULL) is the compiled step of the checkpoint: another
 *  level or graph is MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT, naming both; it
 *  names the params and buffers when the checkpoint records no layout
 *  (without either, the call fails). The bytes equal those
 *  msamp_session_export_weights writes for the session that saved it. */
MSAMP_SESSION_EXPORT msamp_status msamp_export_checkpoint_weights(
    const char *checkpoint, const char *step_dir, const char *path);

/** The path of rank `rank`'s shard of the O3 checkpoint `checkpoint`
 *  (docs/Interfaces.md 5): FILE.ext -> FILE.rank<r>.ext, a name without an
 *  extension gets ".rank<r>" appended. Writes at most `size` bytes,
 *  NUL-terminated, to `out` (may be NULL when `size` is 0) and returns the
 *  length of the whole path without the NUL, as snprintf does; -1
 *  (msamp_last_error_message says why) for a null `checkpoint` or a
 *  negative `rank`. */
MSAMP_SESSION_EXPORT int64_t msamp_checkpoint_shard_path(const char *checkpoint,
                                                         int64_t rank,
                                                         char *out,
                                                         int64_t size);

/** SHA-256 (64 hex digits plus NUL in `hex`) over every state tensor's name
 *  (NUL-terminated) and bytes, in manifest order. With `replicated_only`
 *  non-zero, only over the state data parallelism keeps byte-identical on
 *  every rank: it leaves out buffers and the delayed-scaling state
 *  (`.scale`, `.amax_history`) of activations and output gradients, which
 *  record each rank's own amaxes (the scaling state of params is kept).
 *  msamp-run compares the full checksum across ranks at start-up and the
 *  replicated one with --check-replicas. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_state_checksum(
    const msamp_session *s, int32_t replicated_only, char hex[65]);

/*===----------------------------------------------------------------------===
 * Inputs
 *===----------------------------------------------------------------------===*/

/** Copies `num_bytes` (= the input's size) into input `name`. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_set_input(msamp_session *s,
                                                          const char *name,
                                                          const void *data,
                                                          int64_t num_bytes);

/** Opens a safetensors data file for the inputs and targets: one tensor per
 *  "input"/"target" argument, named after it, with the argument's dtype and
 *  shape plus one leading dimension K (the number of batches), the same K
 *  for all. Replaces a previously opened data file. `*num_batches` receives
 *  K. Tensors not naming an input are ignored; their count goes to
 *  `*num_ignored` (may be NULL). */
MSAMP_SESSION_EXPORT msamp_status msamp_session_open_data(msamp_session *s,
                                                          const char *path,
                                                          int64_t *num_batches,
                                                          int64_t *num_ignored);

/** Copies batch `k` (0 <= k < K) of the open data file into the inputs. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_select_batch(msamp_session *s,
                                                             int64_t k);

/** Fills every input and target with seeded random values that depend only
 *  on (seed, step, the input's name): floating inputs are standard normal
 *  (the generator of msamp_session_init), integer inputs are uniform in
 *  [0, num_classes). */
MSAMP_SESSION_EXPORT msamp_status msamp_session_synthetic_batch(
    msamp_session *s, uint64_t seed, int64_t step, int64_t num_classes);

/*===----------------------------------------------------------------------===
 * Steps
 *===----------------------------------------------------------------------===*/

/** Flags of msamp_session_step. */
/** Copy the state before the step; if the step is non-finite (below),
 *  restore it, advance the step counter anyway and count the step as
 *  skipped (the call then succeeds; the loss and the metrics are those of
 *  the skipped step). */
#define MSAMP_STEP_SKIP_NONFINITE 0x1u
/** Copy the state before the step and always restore it: the loss only,
 *  with dropout off (the step's "training" input set to 0), as PyTorch's
 *  model.eval(). */
#define MSAMP_STEP_EVAL 0x2u
/** Every flag as X(ID, "name"), ID naming MSAMP_STEP_<ID>: bindings read
 *  the names and bits through msamp_step_flag_name / msamp_step_flag_bit
 *  instead of restating them. */
#define MSAMP_STEP_FLAG_LIST(X)                                                \
  X(SKIP_NONFINITE, "skip_nonfinite")                                          \
  X(EVAL, "eval")

/** Runs one step at learning rate `lr` on the current inputs and stores the
 *  loss (computed before the update) in `*loss`.
 *
 *  Refused before the step runs (the state and the counter unchanged):
 *  - `lr` NaN, infinite or negative: MSAMP_ERROR_INVALID_ARGUMENT (0 is
 *    allowed: a finished schedule), whatever the flags;
 *  - an index input outside the range the graph reads it in (a token id >=
 *    the vocabulary, a negative class; the loss's ignore_index is allowed):
 *    the compiled step checks it first and does not run (docs/RuntimeABI.md
 *    11.1); MSAMP_ERROR_RUNTIME "step 3: the runtime reported error 1:
 *    msamp_train_step: input 'ids': value 64 at [0, 3] is outside the
 *    valid range [0, 64)", whatever the flags.
 *
 *  A step is non-finite when, in this order, a float input or target holds
 *  a NaN or an infinity ("non-finite input at step 3: 'x' holds inf at
 *  element 5"; FP8 casts would saturate it silently), the loss is not
 *  finite ("non-finite loss (inf) at step 3"), the gradients are not (the
 *  step's "nonfinite" metric is 1: a NaN or Inf gradient, or an FP8
 *  gradient whose amax recorded before its saturating cast is not finite;
 *  "non-finite gradients (detected from amax) at step 3 (grad norm inf)"),
 *  or the update left a NaN or an infinity in the state ("non-finite state
 *  after the update at step 3: 'w.exp_avg_sq' holds inf at element 0").
 *  Without a flag that is MSAMP_ERROR_NONFINITE with that message; non-
 *  finite data of a single process is found before the step runs, in the
 *  other cases the update is undone ("... (the update was undone)") and
 *  the state and the counter are byte for byte those before the step.
 *  With MSAMP_STEP_SKIP_NONFINITE the step is skipped: the update undone,
 *  the counter advanced. With MSAMP_STEP_EVAL only the inputs are checked.
 *
 *  A runtime error (MSAMP_ERROR_RUNTIME) during the step (e.g. an index
 *  computed in the graph outside its range) is undone the same way: every
 *  step copies the state first, into a buffer allocated when the session
 *  opened (Design.md "Bad data and bad updates").
 *
 *  With several data-parallel ranks (msamp_rt_world_size() > 1) every rank
 *  decides on the non-finite flags of all ranks (one small all-reduce per
 *  step): a rank whose own loss is finite still skips or fails the step
 *  ("non-finite loss on another rank at step 3") when another's is not, so
 *  replicas never diverge. `*loss` stays this rank's own loss. A bad index
 *  input or a runtime error on any rank refuses the step on every rank
 *  with that rank's message ("step 3: rank 1: the runtime reported error
 *  1: msamp_train_step: input 'ids': value 64 at [0, 3] is outside the
 *  valid range [0, 64)"): the index inputs are checked before the step
 *  and the ranks agree on it (one 1-float all-reduce), and again after it.
 *  Before msamp_session_init or msamp_session_load has succeeded it returns
 *  MSAMP_ERROR_INVALID_ARGUMENT ("the session is not initialized"). */
MSAMP_SESSION_EXPORT msamp_status msamp_session_step(msamp_session *s, float lr,
                                                     uint32_t flags,
                                                     float *loss);

/*===----------------------------------------------------------------------===
 * Gradient clipping and per-step metrics (steps compiled with the gradient
 * statistics of docs/TrainStep.md; older steps have neither)
 *===----------------------------------------------------------------------===*/

/** Sets the "max_grad_norm" hyperparameter of every following step:
 *  gradients are clipped as torch.nn.utils.clip_grad_norm_(max_norm) does,
 *  on the global L2 norm of the dequantized, all-reduced gradients (FP8
 *  gradients through their inverse scale, exactly). 0 or less disables
 *  clipping, which is the default. NaN or infinity is
 *  MSAMP_ERROR_INVALID_ARGUMENT, and so is a positive value for a step that
 *  has no "max_grad_norm" input (compiled by an older msamp: recompile). */
MSAMP_SESSION_EXPORT msamp_status
msamp_session_set_max_grad_norm(msamp_session *s, double max_norm);

/** Per-step metrics the step reports (role "metric" in the manifest's
 *  "outputs", e.g. "grad_norm": the global gradient norm before clipping,
 *  "nonfinite": 1 when it is Inf or NaN, else 0), in manifest order. Each
 *  is one f32; `data` points at the value of the last step (0 before the
 *  first; a skipped or evaluated step reports its own values). */
MSAMP_SESSION_EXPORT int64_t msamp_session_num_metrics(const msamp_session *s);
MSAMP_SESSION_EXPORT msamp_status msamp_session_metric_info(
    const msamp_session *s, int64_t i, msamp_tensor_info *info);
/** The value of metric `name` after the last step. A name the step does not
 *  report (any name, for steps compiled by an older msamp) is
 *  MSAMP_ERROR_INVALID_ARGUMENT. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_metric(const msamp_session *s,
                                                       const char *name,
                                                       float *value);

/** Completed steps: the value of the manifest's "step" state (i64), or a
 *  session counter when the graph has none. The next step is number
 *  msamp_session_get_step() + 1. */
MSAMP_SESSION_EXPORT int64_t msamp_session_get_step(const msamp_session *s);

/** Steps skipped by MSAMP_STEP_SKIP_NONFINITE since the session opened. */
MSAMP_SESSION_EXPORT int64_t msamp_session_num_skipped(const msamp_session *s);

/** Steps skipped in a row up to the last step (0 after a step that was
 *  committed), and why the last skipped step was skipped ("non-finite
 *  state after the update at step 3: 'w.exp_avg_sq' holds inf at element
 *  0 (the update was undone)"; "" before the first skip). The string is
 *  valid until the next step. */
MSAMP_SESSION_EXPORT int64_t
msamp_session_num_consecutive_skipped(const msamp_session *s);
MSAMP_SESSION_EXPORT const char *
msamp_session_last_skip_reason(const msamp_session *s);

/*===----------------------------------------------------------------------===
 * CUDA graphs (docs/GPU.md "The step as a CUDA graph")
 *===----------------------------------------------------------------------===*/

/** A step compiled for CUDA runs as one CUDA graph: the first step eagerly
 *  (the warm-up), the second captured and launched, every later one
 *  relaunched. On unless $MSAMP_CUDA_GRAPHS was "0" or "off" when the
 *  session was opened ("1" or "on": on; another value fails the open) or
 *  after msamp_session_set_cuda_graphs(s, 0); setting it again drops a
 *  captured graph and starts over with a warm-up step. A CPU step ignores
 *  it. */
MSAMP_SESSION_EXPORT msamp_status
msamp_session_set_cuda_graphs(msamp_session *s, int32_t on);
/** Steps launched from the graph so far (the captured one included); 0 for
 *  a CPU step, with graphs off, and before the second step. */
MSAMP_SESSION_EXPORT int64_t
msamp_session_cuda_graph_steps(const msamp_session *s);
/** Why a GPU step that graphs were requested for runs eagerly (one line:
 *  its host code cannot be captured, data-parallel ranks, a capture that
 *  failed, ...); "" while graphs are on or switched off. */
MSAMP_SESSION_EXPORT const char *
msamp_session_cuda_graph_note(const msamp_session *s);

/*===----------------------------------------------------------------------===
 * Learning-rate schedules and memory
 *===----------------------------------------------------------------------===*/

typedef enum msamp_lr_schedule {
  MSAMP_LR_CONSTANT = 0,
  /** Half a cosine after the warm-up, as Hugging Face's
   *  get_cosine_schedule_with_warmup: for step s > warmup,
   *  base * 0.5 * (1 + cos(pi * (s - 1 - warmup) / (total - warmup))), so
   *  the first step after the warm-up runs at `base` and the schedule would
   *  reach 0 one step after `total_steps`. */
  MSAMP_LR_COSINE = 1
} msamp_lr_schedule;

/** The learning rate of step `step` (1-based), computed in double. Both
 *  schedules start with a linear warm-up when warmup > 0: base * s / warmup
 *  for s <= warmup (the first step is not wasted at lr 0). */
MSAMP_SESSION_EXPORT double msamp_lr_at(msamp_lr_schedule schedule,
                                        double base_lr, int64_t warmup,
                                        int64_t total_steps, int64_t step);

/** One category of the memory report (docs/Interfaces.md 4's names). */
typedef struct msamp_memory_category {
  const char *name;  /**< MSAMP_MEMORY_CATEGORY_LIST's key. */
  const char *dtype; /**< MLIR spelling, "mixed" or "none". */
  int64_t bytes;
} msamp_memory_category;

/** Bytes of the state the session allocated, per category, in the order
 *  above, measured from its buffers. Gradients live inside the compiled step
 *  and are not allocated by the session: weight_grads is always 0 / "none"
 *  here. `*num_params` receives the element count of the params. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_memory_report(
    const msamp_session *s,
    msamp_memory_category categories[MSAMP_MEMORY_NUM_CATEGORIES],
    int64_t *num_params);

/** The measured high-water mark of training, in bytes: `*session_bytes`
 *  receives the buffers the session binds to the step (state, inputs, loss,
 *  metrics), `*step_bytes` the most bytes the compiled step's own
 *  allocations held at once over the steps run so far (0 before the first;
 *  counted by the runtime's step heap, msamp_runtime.h). Their sum is the
 *  figure to compare with memory_report.json's "peak_bytes". Either pointer
 *  may be null. */
MSAMP_SESSION_EXPORT msamp_status msamp_session_peak_bytes(
    const msamp_session *s, int64_t *session_bytes, int64_t *step_bytes);

/** SHA-256 of `size` bytes as 64 lower-case hex digits plus NUL in `hex`. */
MSAMP_SESSION_EXPORT void msamp_sha256(const void *data, size_t size,
                                       char hex[65]);

/** SHA-256 of a file as 64 lower-case hex digits plus NUL in `hex`. */
MSAMP_SESSION_EXPORT msamp_status msamp_sha256_file(const char *path,
                                                    char hex[65]);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MSAMP_RUNTIME_MSAMP_SESSION_H */
