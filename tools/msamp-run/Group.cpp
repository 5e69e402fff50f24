//===- Group.cpp - msamp-run's place in the data-parallel group -----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Group.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdio>

namespace msamp::run {

Group group;

int fail(int code, const std::string &message) {
  if (group.multi())
    std::fprintf(stderr, "msamp-run: error: rank %d: %s\n", group.rank,
                 message.c_str());
  else
    std::fprintf(stderr, "msamp-run: error: %s\n", message.c_str());
  return code;
}

void hostAllReduce(float *values, int64_t n, int32_t op) {
  if (msamp_rt_allreduce_f32(values, n, op) != MSAMP_RT_OK)
    msamp_rt_abort((std::string("msamp-run: error: rank ") +
                    std::to_string(group.rank) +
                    ": all-reduce failed: " + msamp_rt_get_last_error_message())
                       .c_str(),
                   kRunError);
}

int agree(int code, const std::string &message) {
  if (!group.multi())
    return code ? fail(code, message) : 0;
  float flags[3] = {code ? 1.0f : 0.0f, code && group.rank == 0 ? 1.0f : 0.0f,
                    static_cast<float>(code)};
  hostAllReduce(flags, 3, /*max=*/1);
  if (flags[0] == 0.0f)
    return 0;
  if (code && (group.rank == 0 || flags[1] == 0.0f))
    fail(code, message);
  group.agreed = true;
  return static_cast<int>(flags[2]);
}

float meanOverRanks(float loss) {
  if (!group.multi())
    return loss;
  hostAllReduce(&loss, 1, /*sum=*/0);
  return loss / static_cast<float>(group.size);
}

} // namespace msamp::run
