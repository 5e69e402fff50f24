//===- Checkpoint.h - Saving checkpoints and exporting weights --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// --save, --save-every and --export-weights: which ranks write which
// files, and how every rank learns whether it worked.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TOOLS_MSAMP_RUN_CHECKPOINT_H
#define MSAMP_TOOLS_MSAMP_RUN_CHECKPOINT_H

#include "RunContext.h"

#include <string>

namespace msamp::run {

/// Rank r's shard of the O3 checkpoint FILE.ext: FILE.rank<r>.ext
/// (docs/Interfaces.md 5), as libmsamp_session writes and reads it.
std::string shardPathOf(const std::string &path, int rank);

// Rank 0 writes every checkpoint (the replicas are identical); the others
// learn whether it worked, so a failed save stops every rank alike.
// Debugging aid: MSAMP_RUN_SAVE_EVERY_RANK=1 makes rank r > 0 also write
// FILE.rank<r> (next to FILE), to diff replicas tensor by tensor.
// At O3 every rank writes its shard (the session names the files).
int saveCheckpoint(RunContext &ctx);

// --export-weights: the trained weights as a PyTorch state_dict
// (libmsamp_session's one definition, the same as Python's
// msamp.state_dict). Replicas are identical, so rank 0's session has them
// all, except at O3 where each rank holds only the masters it owns: there
// every rank saves a checkpoint (--save's, or a temporary one next to the
// output) and rank 0 assembles it from the rank files, which the
// all-reduce in agree() guarantees are complete.
int exportWeights(RunContext &ctx);

} // namespace msamp::run

#endif // MSAMP_TOOLS_MSAMP_RUN_CHECKPOINT_H
