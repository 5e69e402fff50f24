//===- CheckOptions.cpp - Refusing what msamp-run cannot do ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "CheckOptions.h"
#include "Group.h"

#include "MSAMP/Support/AccelerateRecipe.h"
#include "MSAMP/Support/Levels.h"

#include <cstdio>

namespace msamp::run {

size_t findPipelineOption(const std::string &options, const std::string &key) {
  const std::string needle = key + "=";
  for (size_t at = options.find(needle); at != std::string::npos;
       at = options.find(needle, at + 1))
    if (at == 0 || options[at - 1] == ' ' || options[at - 1] == '{')
      return at;
  return std::string::npos;
}

int applyRecipe(Options &o, std::string &recipeText) {
  if (o.recipe) {
    msamp_recipe::AccelerateRecipe recipe;
    std::string error, options = o.pipelineOptions.value_or("");
    if (!msamp_recipe::loadAccelerateRecipe(*o.recipe, recipe, error)) {
      std::fprintf(stderr, "%s\n", error.c_str()); // located: FILE:L:C
      return kUsageError;
    }
    if (!msamp_recipe::mergeRecipe(recipe, *o.recipe, o.optLevel, options,
                                   error))
      return fail(kUsageError, error);
    if (!options.empty())
      o.pipelineOptions = options;
    recipeText = msamp_recipe::describeRecipe(recipe, *o.recipe);
  }
  return 0;
}

int checkOptions(const Options &o) {
  if (o.backend != "cpu" && o.backend != "cuda")
    return fail(kUsageError,
                "unknown backend '" + o.backend + "' (expected cpu or cuda)");
  if (o.optLevel && !msamp_levels::lookupLevel(*o.optLevel))
    return fail(kUsageError, "--opt-level must be " +
                                 msamp_levels::levelNames() + ", got '" +
                                 *o.optLevel + "'");
  if (compilesPerRank(o) && o.pipelineOptions &&
      findPipelineOption(*o.pipelineOptions, "rank") != std::string::npos)
    return fail(kUsageError,
                "--pipeline-options: msamp-run sets the O3 rank itself (each "
                "rank compiles its own program); remove 'rank='");
  if (o.data && o.synthetic)
    return fail(kUsageError, "--data and --synthetic exclude each other");
  if (o.init && o.resume)
    return fail(kUsageError,
                "--init and --resume exclude each other (a checkpoint holds "
                "every state tensor)");
  if (o.saveEvery && !o.save)
    return fail(kUsageError, "--save-every needs --save FILE");
  if (o.logStepTime && !o.logJson)
    return fail(kUsageError, "--log-step-time needs --log-json FILE");
  if (o.exportWeights && o.eval)
    return fail(kUsageError,
                "--export-weights writes trained weights and --eval trains "
                "nothing (export a checkpoint's weights with --resume FILE "
                "--steps 0)");
  if (o.cudaChip != "sm_90" && o.cudaChip != "sm_89")
    return fail(kUsageError,
                "--cuda-chip must be sm_90 or sm_89, got '" + o.cudaChip + "'");
  return 0;
}

bool compilesPerRank(const Options &o) {
  return o.optLevel && *o.optLevel == "O3";
}

} // namespace msamp::run
