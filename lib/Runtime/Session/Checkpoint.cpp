//===- Checkpoint.cpp - Saving and restoring a session's state ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is a safetensors file (INTERFACES.md 5): one tensor per state
// argument, named as in the manifest, in its storage dtype (FP8 and f16
// bytes as they are, with their scales and amax histories as tensors of
// their own), and __metadata__
//
//   msamp_version  the msamp that wrote it (informational)
//   abi_version    the manifest ABI version
//   level          O0 .. O3
//   graph_hash     "sha256:..." of train_step.mlir
//   world_size     ranks of the run
//   rank           the writer's rank
//   step           completed steps (also the "step" tensor when the graph
//                  has one; the only record of it when it does not)
//
// Everything the next step reads is in the file, so a run resumed from it is
// bit-identical to one that never stopped. Loading refuses another world
// size, level or graph before touching any buffer, naming both values.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "MSAMP/Runtime/msamp_runtime.h"

#include <cstring>

#ifndef MSAMP_VERSION_STRING
#define MSAMP_VERSION_STRING "unknown"
#endif

namespace msamp::session {

Error Session::save(const std::string &path) const {
  std::vector<TensorToWrite> tensors;
  for (const auto &buffer : state_) {
    const TensorSpec &spec = buffer->spec();
    tensors.push_back({spec.name, spec.dtype, spec.shape, buffer->data(),
                       buffer->numBytes()});
  }
  std::map<std::string, std::string> metadata = {
      {"msamp_version", MSAMP_VERSION_STRING},
      {"abi_version", std::to_string(manifest_.abiVersion)},
      {"level", manifest_.level},
      {"graph_hash", graphHash_},
      {"world_size", std::to_string(worldSize())},
      {"rank", std::to_string(msamp_rt_rank())},
      {"step", std::to_string(completedSteps())},
  };
  return writeSafeTensors(path, tensors, metadata);
}

Error Session::load(const std::string &path) {
  std::unique_ptr<SafeTensorsReader> reader;
  if (Error e = SafeTensorsReader::open(path, reader))
    return e;
  const auto &meta = reader->metadata();
  auto refuse = [&](const std::string &what) {
    return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                 "cannot resume from '" + path + "': " + what);
  };
  for (const char *key : {"graph_hash", "level", "world_size"})
    if (!meta.count(key))
      return refuse(std::string("its __metadata__ has no \"") + key +
                    "\"; it is not a checkpoint written by msamp");
  // Each refusal names both values: "written at level O1, this run is at
  // level O2".
  auto check = [&](const char *key, const std::string &ours,
                   const std::string &what,
                   const std::string &hint = "") -> Error {
    const std::string &theirs = meta.at(key);
    if (theirs != ours)
      return refuse("the checkpoint was written " + what + " " + theirs +
                    ", this run is " + what + " " + ours + hint);
    return Error::success();
  };
  if (Error e =
          check("world_size", std::to_string(worldSize()), "with world size"))
    return e;
  if (Error e = check("level", manifest_.level, "at level"))
    return e;
  if (Error e = check("graph_hash", graphHash_, "for graph",
                      " (a different model or different compile options)"))
    return e;
  if (meta.count("abi_version"))
    if (Error e = check("abi_version", std::to_string(manifest_.abiVersion),
                        "with manifest ABI version"))
      return e;

  // Check every tensor before changing any buffer.
  auto fail = [&](const std::string &what) {
    return Error(MSAMP_ERROR_MISMATCH,
                 "cannot resume from '" + path + "': " + what);
  };
  std::vector<const SafeTensor *> sources;
  for (const auto &buffer : state_) {
    const TensorSpec &spec = buffer->spec();
    const SafeTensor *t = reader->find(spec.name);
    if (!t)
      return fail("no tensor '" + spec.name + "'");
    if (t->dtype != spec.dtype)
      return fail("tensor '" + spec.name + "' has dtype " +
                  safetensorsName(t->dtype) + ", expected " +
                  safetensorsName(spec.dtype));
    if (t->shape != spec.shape)
      return fail("tensor '" + spec.name + "' has shape " +
                  shapeToString(t->shape) + ", expected " +
                  shapeToString(spec.shape));
    sources.push_back(t);
  }
  if (reader->tensors().size() != state_.size())
    for (const SafeTensor &t : reader->tensors())
      if (!findState(t.name))
        return fail("tensor '" + t.name + "' is not state of this model");
  int64_t steps = 0;
  if (!stepState_) {
    auto it = meta.find("step");
    char *end = nullptr;
    if (it != meta.end())
      steps = std::strtoll(it->second.c_str(), &end, 10);
    if (it == meta.end() || end == it->second.c_str() || *end || steps < 0)
      return refuse("its __metadata__ has no valid \"step\"");
  }

  for (size_t i = 0; i < state_.size(); ++i)
    std::memcpy(state_[i]->data(), sources[i]->data, sources[i]->numBytes);
  if (!stepState_)
    localSteps_ = steps;
  return Error::success();
}

} // namespace msamp::session
