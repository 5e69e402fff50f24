//===- MpiWatchdogTest.cpp - a hung rank stops the job -------------*- C++
//-*-===//
//
// Rank 1 never joins the collective (it sleeps); rank 0's watchdog must stop
// the job with a message naming the collective instead of hanging. ctest
// runs this with MSAMP_COLLECTIVE_TIMEOUT_S=2 and expects a non-zero exit
// and the message.
//
//===----------------------------------------------------------------------===//

#include "../RuntimeTestUtils.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <chrono>
#include <thread>

using namespace msamp_rt_test;

int main() {
  if (msamp_rt_distributed_init() != MSAMP_RT_OK)
    return 1;
  if (msamp_rt_rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  Tensor<float> x({4}, 1.0f);
  Tensor<float> dummy = scalar(1.0f);
  _mlir_ciface_msamp_rt_all_reduce(x, dummy, x, dummy, MSAMP_RT_F32, 0, 0);
  return 0; // not reached: the watchdog aborts
}
