/*===- PublicHeaderTest.c - msamp_runtime.h compiles as C99 ---------------===//
 *
 * Part of the msamp project.
 *
 *===----------------------------------------------------------------------===//
 *
 * Compiled with -std=c99 -pedantic -Werror: the public header must stay
 * plain C (ctypes users and C loaders include it). The function is called
 * from ErrorTest.cpp so the check also links.
 *
 *===----------------------------------------------------------------------===*/

#include "MSAMP/Runtime/msamp_runtime.h"

int msamp_rt_test_c_header(void) {
  msamp_rt_unranked_memref memref = {0, 0};
  msamp_rt_memref_header header = {0, 0, 0};
  (void)memref;
  (void)header;
  return msamp_rt_abi_version() == MSAMP_RT_ABI_VERSION &&
         msamp_rt_dtype_size(MSAMP_RT_F8E4M3FN) == 1 &&
         sizeof(msamp_rt_memref_header) == 24;
}
