//===- SessionSetup.cpp - Opening the session, its state and data ---------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "SessionSetup.h"
#include "Group.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstdio>

namespace msamp::run {

int openSession(RunContext &ctx) {
  const Options &o = ctx.o;
  const std::string &dir = ctx.dir;
  // Always select the backend: $MSAMP_BACKEND must not send a CPU-compiled
  // step's kernels elsewhere.
  if (msamp_rt_set_backend(o.backend.c_str()) != MSAMP_RT_OK)
    return fail(kRunError, std::string("cannot select backend '") + o.backend +
                               "': " + msamp_rt_get_last_error_message());
  if (o.threads) {
    msamp_rt_set_num_threads(static_cast<int32_t>(*o.threads));
    if (msamp_rt_get_last_error() != MSAMP_RT_OK)
      return fail(kUsageError, msamp_rt_get_last_error_message());
  }

  msamp_session *raw = nullptr;
  const bool opened = msamp_session_open(dir.c_str(), &raw) == MSAMP_OK;
  ctx.session.reset(raw);
  SessionPtr &session = ctx.session;
  if (int rc = agree(opened ? 0 : kRunError,
                     opened ? "" : msamp_last_error_message()))
    return rc;
  ctx.level = msamp_session_level(session.get());
  const std::string &level = ctx.level;
  if (ctx.compiledDir && o.optLevel && *o.optLevel != level)
    return fail(kUsageError, "'" + o.model + "' is compiled at level " + level +
                                 ", not " + *o.optLevel +
                                 " (recompile it, or pass the .mlir file)");
  // The threshold is an input of the compiled step; a step compiled before
  // msamp had clipping has none and is refused rather than run unclipped.
  if (o.clipGradNorm && msamp_session_set_max_grad_norm(
                            session.get(), *o.clipGradNorm) != MSAMP_OK)
    return fail(kRunError,
                "--clip-grad-norm: " + std::string(msamp_last_error_message()));
  if (o.cudaGraphs)
    msamp_session_set_cuda_graphs(session.get(), *o.cudaGraphs ? 1 : 0);
  ctx.baseLR = o.lr.value_or(msamp_session_default_lr(session.get()));
  return 0;
}

int initState(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool speak = ctx.speak;
  SessionPtr &session = ctx.session;
  // Every rank loads the same checkpoint or draws the same init (seeded by
  // tensor name, not by rank); checkInitialState (RankCheck.cpp) proves it.
  if (o.resume) {
    const bool ok =
        msamp_session_load(session.get(), o.resume->c_str()) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
  } else {
    int64_t fromFile = 0;
    const bool ok = msamp_session_init(session.get(), o.seed,
                                       o.init ? o.init->c_str() : nullptr,
                                       &fromFile) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
    if (o.init && speak) {
      int64_t params = 0, buffers = 0;
      for (int64_t i = 0, n = msamp_session_num_state(session.get()); i < n;
           ++i) {
        msamp_tensor_info info;
        msamp_session_state_info(session.get(), i, &info);
        params += std::string(info.role) == "param";
        buffers += std::string(info.role) == "buffer";
      }
      std::printf("msamp-run: initial values of %lld of %lld params%s from "
                  "%s\n",
                  static_cast<long long>(fromFile),
                  static_cast<long long>(params + buffers),
                  buffers ? " and buffers" : "", o.init->c_str());
    }
  }
  return 0;
}

std::vector<std::string> dataArguments(msamp_session *session) {
  std::vector<std::string> names;
  for (int64_t i = 0, n = msamp_session_num_inputs(session); i < n; ++i) {
    msamp_tensor_info info;
    if (msamp_session_input_info(session, i, &info) == MSAMP_OK &&
        (std::string(info.role) == "input" ||
         std::string(info.role) == "target"))
      names.push_back(info.name);
  }
  return names;
}

int openData(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool speak = ctx.speak;
  SessionPtr &session = ctx.session;
  std::vector<std::string> dataArgs = dataArguments(session.get());
  int64_t &numBatches = ctx.numBatches;
  if (o.data) {
    int64_t ignored = 0;
    const bool ok = msamp_session_open_data(session.get(), o.data->c_str(),
                                            &numBatches, &ignored) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
    if (ignored && speak)
      std::fprintf(stderr,
                   "msamp-run: note: %lld tensor(s) in %s name no input of "
                   "the model and are ignored\n",
                   static_cast<long long>(ignored), o.data->c_str());
  } else if (!o.synthetic && !dataArgs.empty() && o.steps.value_or(1) != 0) {
    // (--steps 0 reads no batch: --resume CK --steps 0 --export-weights W
    // converts a checkpoint.)
    std::string names;
    for (const std::string &n : dataArgs)
      names += (names.empty() ? "'" : ", '") + n + "'";
    return fail(kUsageError, "the model reads " + names +
                                 ": give --data FILE.safetensors or "
                                 "--synthetic");
  }
  return 0;
}

} // namespace msamp::run
