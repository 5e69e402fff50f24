//===- Checkpoint.cpp - Saving checkpoints and exporting weights ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Group.h"

#include <cstdio>
#include <cstdlib>

namespace msamp::run {

std::string shardPathOf(const std::string &path, int rank) {
  std::string shard(
      msamp_checkpoint_shard_path(path.c_str(), rank, nullptr, 0) + 1, '\0');
  msamp_checkpoint_shard_path(path.c_str(), rank, shard.data(),
                              static_cast<int64_t>(shard.size()));
  shard.pop_back();
  return shard;
}

int saveCheckpoint(RunContext &ctx) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const bool lead = ctx.lead;
  const bool sharded = ctx.sharded();
  const char *everyRank = std::getenv("MSAMP_RUN_SAVE_EVERY_RANK");
  const bool writer =
      lead || sharded || (everyRank && std::string(everyRank) == "1");
  std::string path = *o.save;
  if (!lead && !sharded)
    path += ".rank" + std::to_string(group.rank);
  const bool ok =
      !writer || msamp_session_save(session.get(), path.c_str()) == MSAMP_OK;
  return agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message());
}

int exportWeights(RunContext &ctx) {
  const Options &o = ctx.o;
  SessionPtr &session = ctx.session;
  const bool lead = ctx.lead;
  const bool speak = ctx.speak;
  const std::string &dir = ctx.dir;
  const bool sharded = ctx.sharded();
  const std::string &out = *o.exportWeights;
  if (!sharded) {
    const bool ok = !lead || msamp_session_export_weights(
                                 session.get(), out.c_str()) == MSAMP_OK;
    if (int rc =
            agree(ok ? 0 : kRunError, ok ? "" : msamp_last_error_message()))
      return rc;
  } else {
    const std::string checkpoint =
        o.save ? *o.save : out + ".gather.safetensors";
    if (!o.save) {
      const bool saved =
          msamp_session_save(session.get(), checkpoint.c_str()) == MSAMP_OK;
      if (int rc = agree(saved ? 0 : kRunError,
                         saved ? "" : msamp_last_error_message()))
        return rc;
    }
    bool ok = true;
    std::string message;
    if (lead) {
      ok = msamp_export_checkpoint_weights(checkpoint.c_str(), dir.c_str(),
                                           out.c_str()) == MSAMP_OK;
      if (!ok)
        message = msamp_last_error_message();
    }
    // The temporary checkpoint goes once every rank is past reading it,
    // whether the export worked or not.
    const int rc = agree(ok ? 0 : kRunError, message);
    if (!o.save) {
      std::remove(shardPathOf(checkpoint, group.rank).c_str());
      if (lead)
        std::remove(checkpoint.c_str());
    }
    if (rc)
      return rc;
  }
  if (speak)
    std::printf("msamp-run: exported the weights to %s\n", out.c_str());
  return 0;
}

} // namespace msamp::run
