//===- Outputs.cpp - Checking msamp-run's output files early --------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Outputs.h"
#include "Checkpoint.h"
#include "Group.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace msamp::run {

int checkOutputs(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool lead = ctx.lead;
  // Outputs that cannot be written should fail the run before it trains,
  // not after. Only rank 0 writes them, but every rank takes part in the
  // agreement, whatever its options: ranks given different options are named
  // by the start-up settings check (a collective only some ranks enter was
  // a raw MPI_ERR_TRUNCATE).
  int code = 0;
  std::string problem;
  auto checkOutput = [&](const char *flag, const std::string &file,
                         const char *what) {
    if (code || !lead)
      return;
    size_t slash = file.find_last_of('/');
    std::string parent = slash == std::string::npos ? "."
                         : slash == 0               ? "/"
                                                    : file.substr(0, slash);
    struct stat outStat;
    if (access(parent.c_str(), W_OK) != 0) {
      code = kRunError;
      problem = std::string(flag) + " " + file + ": cannot write to '" +
                parent + "': " + std::strerror(errno);
    } else if (stat(file.c_str(), &outStat) == 0 && S_ISDIR(outStat.st_mode)) {
      code = kUsageError;
      problem =
          std::string(flag) + " " + file + " is a directory; it names " + what;
    }
  };
  if (o.save)
    checkOutput("--save", *o.save, "the checkpoint file");
  if (o.exportWeights)
    checkOutput("--export-weights", *o.exportWeights, "the weights file");
  if (o.save && !code) {
    // A save killed between writing and renaming leaves FILE.tmp, and at
    // O3 each rank's shard FILE.rankR....tmp (SafeTensors.cpp's
    // writeFileAtomically); nothing else writes there. Rank 0 removes the
    // replicated file's, every rank its own shard's.
    std::vector<std::string> stale;
    if (lead)
      stale.push_back(*o.save + ".tmp");
    if (group.size > 1)
      stale.push_back(shardPathOf(*o.save, group.rank) + ".tmp");
    for (const std::string &path : stale) {
      struct stat staleStat;
      if (lstat(path.c_str(), &staleStat) == 0 && S_ISREG(staleStat.st_mode) &&
          ::unlink(path.c_str()) == 0 && !o.quiet)
        std::printf("msamp-run: removed '%s', left by a save that did not "
                    "finish\n",
                    path.c_str());
    }
  }
  return agree(code, problem);
}

int checkNoOverwrite(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool lead = ctx.lead;
  const std::string &dir = ctx.dir;
  std::string overwrite;
  struct stat saveStat;
  if (o.save && lead && stat(o.save->c_str(), &saveStat) == 0) {
    std::vector<std::string> inputs = {dir + "/train_step.so",
                                       dir + "/manifest.json",
                                       dir + "/train_step.mlir", o.model};
    if (o.data)
      inputs.push_back(*o.data);
    if (o.init)
      inputs.push_back(*o.init);
    for (const std::string &input : inputs) {
      struct stat inputStat;
      if (stat(input.c_str(), &inputStat) == 0 &&
          inputStat.st_dev == saveStat.st_dev &&
          inputStat.st_ino == saveStat.st_ino) {
        overwrite = "--save " + *o.save + " would overwrite '" + input +
                    "', which this run reads";
        break;
      }
    }
  }
  return agree(overwrite.empty() ? 0 : kUsageError, overwrite);
}

} // namespace msamp::run
