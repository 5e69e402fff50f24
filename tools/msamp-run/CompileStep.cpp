//===- CompileStep.cpp - The compiled step msamp-run opens ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "CompileStep.h"
#include "CheckOptions.h"
#include "CompileCache.h"
#include "Group.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace msamp::run {

int compileStep(RunContext &ctx) {
  const Options &o = ctx.o;
  const bool lead = ctx.lead;
  const bool speak = ctx.speak;
  struct stat st;
  if (int rc =
          agree(stat(o.model.c_str(), &st) != 0 ? kRunError : 0,
                "cannot read model '" + o.model + "': " + std::strerror(errno)))
    return rc;
  ctx.compiledDir = S_ISDIR(st.st_mode);
  std::string &dir = ctx.dir;
  if (S_ISDIR(st.st_mode)) {
    if (o.recipe)
      return fail(kUsageError,
                  "--recipe applies when compiling a model file; '" + o.model +
                      "' is already compiled");
    if (o.pipelineOptions)
      return fail(kUsageError,
                  "--pipeline-options applies when compiling a model file; '" +
                      o.model + "' is already compiled");
    dir = o.model;
  } else {
    // Rank 0 compiles into the shared cache while the others wait in the
    // all-reduce of agree(); they then find the finished directory (the
    // cache renames a complete temporary directory into place, so even
    // ranks that compile something else concurrently never see half a
    // compilation). N ranks on a few cores would otherwise compile N times.
    std::string level = o.optLevel.value_or("O2");
    std::string options = o.pipelineOptions.value_or("");
    if (compilesPerRank(o)) {
      // O3: one program per rank (lib/Transforms/ZeROShard.cpp), each in
      // the cache under its own options.
      const std::string world = "world-size=" + std::to_string(group.size);
      size_t at = findPipelineOption(options, "world-size");
      if (at != std::string::npos &&
          options.compare(at, world.size(), world) != 0)
        return fail(kUsageError,
                    "--pipeline-options asks for " +
                        options.substr(at, options.find(' ', at) - at) +
                        ", but the launcher started " +
                        std::to_string(group.size) + " rank(s)");
      if (at == std::string::npos)
        options += (options.empty() ? "" : " ") + world;
      options += " rank=" + std::to_string(group.rank);
    }
    CompileResult compiled;
    std::string error;
    for (int phase = 0; phase < (group.multi() ? 2 : 1); ++phase) {
      const bool mine = (phase == 0) == lead;
      int code = mine && !compileModel(o.model, level, options,
                                       o.backend == "cuda" ? o.cudaChip : "",
                                       compiled, error)
                     ? kRunError
                     : 0;
      if (int rc = agree(code, error))
        return rc;
    }
    dir = compiled.dir;
    if (speak) {
      if (compiled.cached)
        std::printf("msamp-run: using cached compilation (%s)\n", dir.c_str());
      else
        std::printf("msamp-run: compiled %s at %s in %.2f s\n", o.model.c_str(),
                    level.c_str(), compiled.seconds);
    }
  }
  return 0;
}

} // namespace msamp::run
