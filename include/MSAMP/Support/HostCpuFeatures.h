//===- HostCpuFeatures.h - CPU features a compiled step may need -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp-compile generates a step's host code for a CPU (--host-cpu: this
// machine's, by default, or a named LLVM CPU such as x86-64-v3) and records
// in manifest.json which of the features below that CPU has. A session
// refuses to load a step whose CPU had a feature this machine lacks (it
// would stop on an illegal instruction: a step compiled on an AVX-512
// machine, run on one without), and msamp-run's compile cache keys a
// native compile by the features this machine has. The list is the one
// definition of the features both sides know: LLVM's names, which are also
// the names __builtin_cpu_supports takes. The compiler records only these;
// the runtime ignores a recorded name it does not know. AMX is left out:
// the OS must enable it per process, and compiled steps never use it.
//
// Header-only and free of LLVM: libmsamp_session and msamp-run use it too.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_SUPPORT_HOSTCPUFEATURES_H
#define MSAMP_SUPPORT_HOSTCPUFEATURES_H

#include <cstring>
#include <string>
#include <vector>

#define MSAMP_X86_CPU_FEATURES(X)                                              \
  X("sse4.2")                                                                  \
  X("popcnt")                                                                  \
  X("avx")                                                                     \
  X("avx2")                                                                    \
  X("fma")                                                                     \
  X("f16c")                                                                    \
  X("bmi")                                                                     \
  X("bmi2")                                                                    \
  X("avx512f")                                                                 \
  X("avx512cd")                                                                \
  X("avx512dq")                                                                \
  X("avx512bw")                                                                \
  X("avx512vl")                                                                \
  X("avx512ifma")                                                              \
  X("avx512vbmi")                                                              \
  X("avx512vbmi2")                                                             \
  X("avx512vnni")                                                              \
  X("avx512bitalg")                                                            \
  X("avx512vpopcntdq")                                                         \
  X("avx512bf16")                                                              \
  X("avx512fp16")                                                              \
  X("avxvnni")                                                                 \
  X("gfni")                                                                    \
  X("vaes")                                                                    \
  X("vpclmulqdq")

namespace msamp_cpu {

/// Whether `name` is one of MSAMP_X86_CPU_FEATURES.
inline bool isCheckedCpuFeature(const std::string &name) {
#define MSAMP_FEATURE_NAME(n)                                                  \
  if (name == n)                                                               \
    return true;
  MSAMP_X86_CPU_FEATURES(MSAMP_FEATURE_NAME)
#undef MSAMP_FEATURE_NAME
  return false;
}

/// Whether this machine's CPU has feature `name`; true for a name outside
/// the list (nothing to check) and on a CPU other than x86-64.
inline bool hostHasCpuFeature(const std::string &name) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  __builtin_cpu_init();
#define MSAMP_FEATURE_CHECK(n)                                                 \
  if (name == n)                                                               \
    return __builtin_cpu_supports(n);
  MSAMP_X86_CPU_FEATURES(MSAMP_FEATURE_CHECK)
#undef MSAMP_FEATURE_CHECK
#endif
  (void)name;
  return true;
}

/// The features of `required` this machine lacks, by `has` (a parameter for
/// the tests; hostHasCpuFeature otherwise).
inline std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &required,
                   bool (*has)(const std::string &) = hostHasCpuFeature) {
  std::vector<std::string> missing;
  for (const std::string &name : required)
    if (isCheckedCpuFeature(name) && !has(name))
      missing.push_back(name);
  return missing;
}

/// This machine's features of the list, comma-separated (a cache key).
inline std::string hostCpuFeatureList() {
  std::string list;
#define MSAMP_FEATURE_LIST(n)                                                  \
  if (hostHasCpuFeature(n))                                                    \
    list += std::string(list.empty() ? "" : ",") + n;
  MSAMP_X86_CPU_FEATURES(MSAMP_FEATURE_LIST)
#undef MSAMP_FEATURE_LIST
  return list;
}

} // namespace msamp_cpu

#endif // MSAMP_SUPPORT_HOSTCPUFEATURES_H
