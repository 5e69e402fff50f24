/*===- msamp_vocabulary.h - Names shared by compiler and session --*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * The words manifest.json and memory_report.json are written in, defined
 * once: the compiler (TrainStep.h's kRole* constants, --msamp-write-manifest,
 * the memory report) and the session library (manifest parsing,
 * msamp_session_memory_report) expand these lists, and the Python package
 * reads them from the session library (msamp_role_name,
 * msamp_memory_category_name). Adding a role or a category here adds it
 * everywhere.
 *
 * Each list is an X-macro: MSAMP_ROLE_LIST(X) calls X once per entry.
 *
 * Plain C (C99 or C++), no declarations of functions.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_VOCABULARY_H
#define MSAMP_RUNTIME_MSAMP_VOCABULARY_H

/** Roles of @train_step's arguments and results (msamp.role in the IR, "role"
 *  in the manifest), as X(ID, Name, "spelling", KIND): ID names the C enum
 *  constant MSAMP_ROLE_<ID>, Name the compiler's constant kRole<Name>. KIND:
 *    STATE   persistent: allocated, initialized and checkpointed ("state");
 *    INPUT   set before each step ("inputs");
 *    RESULT  only on results ("outputs"): the loss, gradients before the
 *            optimizer is inserted, and per-step metrics
 *            (--msamp-grad-stats: a 0-d f32 value, no state, no update).
 *  The order within a kind is the order the session's messages list them.
 *  loss_scale is the AMP fp16 level's dynamic loss scale and its growth
 *  tracker; rng_state the run's seed as one i64 (dropout). */
#define MSAMP_ROLE_LIST(X)                                                     \
  X(PARAM, Param, "param", STATE)                                              \
  X(MASTER_PARAM, MasterParam, "master_param", STATE)                          \
  X(OPT_STATE, OptState, "opt_state", STATE)                                   \
  X(STEP, Step, "step", STATE)                                                 \
  X(SCALING_STATE, ScalingState, "scaling_state", STATE)                       \
  X(BUFFER, Buffer, "buffer", STATE)                                           \
  X(RNG_STATE, RngState, "rng_state", STATE)                                   \
  X(LOSS_SCALE, LossScale, "loss_scale", STATE)                                \
  X(INPUT, Input, "input", INPUT)                                              \
  X(TARGET, Target, "target", INPUT)                                           \
  X(HYPERPARAM, Hyperparam, "hyperparam", INPUT)                               \
  X(RANK, Rank, "rank", INPUT)                                                 \
  X(LOSS, Loss, "loss", RESULT)                                                \
  X(GRAD, Grad, "grad", RESULT)                                                \
  X(METRIC, Metric, "metric", RESULT)

/** Kinds of roles (the last column of MSAMP_ROLE_LIST). */
typedef enum msamp_role_kind {
  MSAMP_ROLE_KIND_STATE = 0,
  MSAMP_ROLE_KIND_INPUT = 1,
  MSAMP_ROLE_KIND_RESULT = 2
} msamp_role_kind;

#define MSAMP_VOCABULARY_ENUM_(ID, Name, spelling, kind) MSAMP_ROLE_##ID,
/** The roles, numbered in list order. */
typedef enum msamp_role {
  MSAMP_ROLE_LIST(MSAMP_VOCABULARY_ENUM_) MSAMP_NUM_ROLES
} msamp_role;
#undef MSAMP_VOCABULARY_ENUM_

/** Categories of the memory report (memory_report.json's keys, docs/
 *  TrainStep.md 3), in report order, as X(ID, Name, "key"): ID names the C
 *  enum constant MSAMP_MEMORY_<ID>, Name the compiler's MemoryCategory. */
#define MSAMP_MEMORY_CATEGORY_LIST(X)                                          \
  X(WEIGHTS, Weights, "weights")                                               \
  X(MASTER_WEIGHTS, MasterWeights, "master_weights")                           \
  X(WEIGHT_GRADS, WeightGrads, "weight_grads")                                 \
  X(OPTIMIZER_M, OptimizerM, "optimizer_m")                                    \
  X(OPTIMIZER_V, OptimizerV, "optimizer_v")                                    \
  X(SCALING_STATE, ScalingState, "scaling_state")                              \
  X(OTHER_STATE, OtherState, "other_state")

#define MSAMP_VOCABULARY_ENUM_(ID, Name, key) MSAMP_MEMORY_##ID,
/** The categories, numbered in report order. */
typedef enum msamp_memory_category_id {
  MSAMP_MEMORY_CATEGORY_LIST(MSAMP_VOCABULARY_ENUM_) MSAMP_MEMORY_NUM_CATEGORIES
} msamp_memory_category_id;
#undef MSAMP_VOCABULARY_ENUM_

#endif /* MSAMP_RUNTIME_MSAMP_VOCABULARY_H */
