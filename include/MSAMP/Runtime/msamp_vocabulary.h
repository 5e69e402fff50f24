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
 * msamp_memory_category_of is the one rule that sorts a state into its
 * memory-report category; the compiler's report and the session's both
 * call it.
 *
 * Plain C (C99 or C++): no declarations of external functions, only the
 * static inline ones below.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MSAMP_RUNTIME_MSAMP_VOCABULARY_H
#define MSAMP_RUNTIME_MSAMP_VOCABULARY_H

#include <stddef.h>
#include <string.h>

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

/** The role spelled by the `length` bytes at `spelling` ("param", ...), or
 *  -1 if none is. */
static inline int msamp_role_of(const char *spelling, size_t length) {
#define MSAMP_VOCABULARY_MATCH_(ID, Name, text, kind)                          \
  if (length == sizeof(text) - 1 && memcmp(spelling, text, length) == 0)       \
    return MSAMP_ROLE_##ID;
  MSAMP_ROLE_LIST(MSAMP_VOCABULARY_MATCH_)
#undef MSAMP_VOCABULARY_MATCH_
  return -1;
}

/** Whether the `length` bytes at `name` end with the string `suffix`. */
static inline int msamp_vocabulary_ends_with_(const char *name, size_t length,
                                              const char *suffix) {
  size_t n = strlen(suffix);
  return length >= n && memcmp(name + length - n, suffix, n) == 0;
}

/** The memory-report category (msamp_memory_category_id) of the argument of
 *  role `role` (msamp_role) named by the `length` bytes at `name`, or -1 for
 *  a role that is not state (inputs, hyperparameters, the rank, results):
 *    param -> weights, master_param -> master_weights, scaling_state ->
 *    scaling_state; opt_state named <p>.exp_avg or <p>.momentum_buffer ->
 *    optimizer_m, <p>.exp_avg_sq -> optimizer_v;
 *    every other state -> other_state: step, buffer, rng_state,
 *    loss_scale, and an opt_state with any other name.
 *  An opt_state that is not a first or second moment is not counted as
 *  one: optimizer_m and optimizer_v are MS-AMP's m and v (FP8 and f16 at
 *  O2), which the level table compares. rng_state is persistent state
 *  (allocated, initialized from the seed and checkpointed like the step
 *  counter), so it is counted. Gradients (weight_grads) are not arguments:
 *  the compiler counts them from the optimizer ops (docs/TrainStep.md 3). */
static inline int msamp_memory_category_of(int role, const char *name,
                                           size_t length) {
  switch (role) {
  case MSAMP_ROLE_PARAM:
    return MSAMP_MEMORY_WEIGHTS;
  case MSAMP_ROLE_MASTER_PARAM:
    return MSAMP_MEMORY_MASTER_WEIGHTS;
  case MSAMP_ROLE_SCALING_STATE:
    return MSAMP_MEMORY_SCALING_STATE;
  case MSAMP_ROLE_OPT_STATE:
    if (msamp_vocabulary_ends_with_(name, length, ".exp_avg") ||
        msamp_vocabulary_ends_with_(name, length, ".momentum_buffer"))
      return MSAMP_MEMORY_OPTIMIZER_M;
    if (msamp_vocabulary_ends_with_(name, length, ".exp_avg_sq"))
      return MSAMP_MEMORY_OPTIMIZER_V;
    return MSAMP_MEMORY_OTHER_STATE;
  default:
    break;
  }
#define MSAMP_VOCABULARY_OTHER_(ID, Name, spelling, kind)                      \
  if (role == MSAMP_ROLE_##ID)                                                 \
    return MSAMP_ROLE_KIND_##kind == MSAMP_ROLE_KIND_STATE                     \
               ? MSAMP_MEMORY_OTHER_STATE                                      \
               : -1;
  MSAMP_ROLE_LIST(MSAMP_VOCABULARY_OTHER_)
#undef MSAMP_VOCABULARY_OTHER_
  return -1;
}

#endif /* MSAMP_RUNTIME_MSAMP_VOCABULARY_H */
