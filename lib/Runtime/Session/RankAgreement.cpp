//===- RankAgreement.cpp - one refusal for every data-parallel rank -------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "RankAgreement.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <algorithm>
#include <vector>

namespace msamp::session {

namespace {

constexpr int32_t kMax = 1; // msamp_rt_allreduce_f32's max

Error allReduceMax(std::vector<float> &values, const char *what) {
  if (msamp_rt_allreduce_f32(values.data(), static_cast<int64_t>(values.size()),
                             kMax) == MSAMP_RT_OK)
    return Error::success();
  std::string message = msamp_rt_get_last_error_message();
  msamp_rt_clear_error();
  return Error(MSAMP_ERROR_RUNTIME, std::string("agreeing on ") + what +
                                        " across ranks failed: " + message);
}

} // namespace

Error shareMessageOfRank(int64_t from, const std::string &message,
                         std::string &out) {
  // Bytes as unsigned values 0..255 are exact in f32; zeros from the other
  // ranks leave them as they are under max.
  std::vector<float> bytes(kMaxSharedMessageBytes, 0.0f);
  if (msamp_rt_rank() == from) {
    size_t n = std::min(message.size(), bytes.size());
    for (size_t i = 0; i < n; ++i)
      bytes[i] = static_cast<float>(static_cast<unsigned char>(message[i]));
  }
  if (Error e = allReduceMax(bytes, "a refused step's message"))
    return e;
  out.clear();
  for (float b : bytes) {
    if (b == 0.0f)
      break;
    out.push_back(static_cast<char>(static_cast<unsigned char>(b)));
  }
  return Error::success();
}

Error agreeOnRefusal(bool refused, const std::string &message,
                     std::string &agreed) {
  agreed.clear();
  const int64_t world = msamp_rt_world_size();
  if (world <= 1) {
    if (refused)
      agreed = message;
    return Error::success();
  }
  // world - rank is largest for the lowest refusing rank (exact in f32 for
  // any realistic group).
  const int64_t rank = msamp_rt_rank();
  std::vector<float> flag = {refused ? static_cast<float>(world - rank) : 0.0f};
  if (Error e = allReduceMax(flag, "a refused step"))
    return e;
  if (flag[0] == 0.0f)
    return Error::success();
  const int64_t from = world - static_cast<int64_t>(flag[0]);
  std::string shared;
  if (Error e = shareMessageOfRank(from, message, shared))
    return e;
  agreed = "rank " + std::to_string(from) + ": " + shared;
  return Error::success();
}

} // namespace msamp::session
