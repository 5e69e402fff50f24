/*===- PublicHeaderTest.c - msamp_session.h is plain C ----------*- C -*-===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * Compiled as C99 with -pedantic -Werror: the public header must stay usable
 * from C and from FFI generators. Called from CApiTest.cpp.
 *
 *===----------------------------------------------------------------------===*/

#include "MSAMP/Runtime/msamp_session.h"

int msamp_session_test_c_header(void) {
  msamp_tensor_info info;
  msamp_memory_category categories[MSAMP_MEMORY_NUM_CATEGORIES];
  msamp_session *session = 0;
  info.rank = 0;
  categories[0].bytes = 0;
  (void)session;
  return msamp_lr_at(MSAMP_LR_CONSTANT, 1.0, 0, 1, 1) == 1.0 &&
         info.rank == 0 && categories[0].bytes == 0 &&
         MSAMP_STEP_EVAL == 0x2u &&
         /* The vocabulary's static inline functions are C too. */
         msamp_memory_category_of(msamp_role_of("opt_state", 9), "w.exp_avg_sq",
                                  12) == MSAMP_MEMORY_OPTIMIZER_V &&
         msamp_memory_category_of(MSAMP_ROLE_RNG_STATE, "rng.seed", 8) ==
             MSAMP_MEMORY_OTHER_STATE;
}
