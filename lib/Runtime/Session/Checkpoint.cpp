//===- Checkpoint.cpp - Saving and restoring a session's state ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is a safetensors file (docs/Interfaces.md 5): one tensor per
// state argument, named as in the manifest, in its storage dtype (FP8 and f16
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
// At O3 (manifest "rank") the state is split: every rank writes the state
// only it holds ("sharded" in the manifest: FP16 masters, optimizer
// moments, their scales) to FILE with ".rank<r>" before the extension, and
// rank 0 writes the state every rank holds (FP8 weights, scales, step) to
// FILE, identified by a hash of its layout instead of rank 0's program.
//
// Everything the next step reads is in the file, so a run resumed from it is
// bit-identical to one that never stopped. Loading refuses another level or
// graph (and, below O3, another world size) before touching any buffer,
// naming both values.
//
// An O3 checkpoint moves between world sizes: a param's sharded state (its
// master, moments and their scales) is whole and named in its owner's
// shard, and the replicated part is the same for every group size, so a
// rank of a group of M reads the replicated part and takes the tensors it
// owns under M's partition from whichever of the N shards holds them. The
// shards are then identified by the replicated layout hash they record.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "MSAMP/Runtime/msamp_runtime.h"
#include "Sha256.h"
#include "ShardPieces.h"

#include <algorithm>
#include <cstring>

#ifndef MSAMP_VERSION_STRING
#define MSAMP_VERSION_STRING "unknown"
#endif

namespace msamp::session {

std::string shardPath(const std::string &path, int64_t rank) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const std::string tag = ".rank" + std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

std::string Session::replicatedLayoutHash() const {
  return session::replicatedLayoutHash(manifest_.state);
}

Error Session::readStateDictLayout(const SafeTensorsReader &file,
                                   std::vector<LayoutEntry> &layout) const {
  layout.clear();
  auto recorded = file.metadata().find(kStateDictLayoutKey);
  if (recorded == file.metadata().end())
    return Error::success();
  if (Error e = parseStateDictLayout(recorded->second, file.path(), layout))
    return e;
  for (const LayoutEntry &entry : layout) {
    const TensorBuffer *source = findState(entry.source);
    if (!source ||
        (source->spec().role != "param" && source->spec().role != "buffer"))
      return Error(MSAMP_ERROR_MISMATCH,
                   file.path() + ": state_dict entry '" + entry.key +
                       "' comes from '" + entry.source +
                       "', which is not a param or buffer of this model");
  }
  return Error::success();
}

Error Session::save(const std::string &path) const {
  // A checkpoint is what a run resumes from: one holding a NaN or an
  // infinity would poison every later step.
  const std::string bad = findNonFiniteTensor(state_, /*dataOnly=*/false);
  if (!bad.empty())
    return Error(MSAMP_ERROR_NONFINITE,
                 path +
                     ": refusing to write a checkpoint of non-finite "
                     "state: " +
                     bad);
  // The values, from the device (a GPU step's state): one copy.
  if (Error e = downloadAll(state_))
    return e;
  std::map<std::string, std::string> metadata = {
      {"msamp_version", MSAMP_VERSION_STRING},
      {"abi_version", std::to_string(manifest_.abiVersion)},
      {"level", manifest_.level},
      {"graph_hash", graphHash_},
      {"world_size", std::to_string(worldSize())},
      {"rank", std::to_string(msamp_rt_rank())},
      {"step", std::to_string(completedSteps())},
  };
  // The state_dict layout of the init file travels on, so the weights of a
  // resumed run keep their PyTorch names (Weights.h).
  if (!stateDictLayout_.empty())
    metadata[kStateDictLayoutKey] = formatStateDictLayout(stateDictLayout_);
  auto part = [&](bool sharded) {
    std::vector<TensorToWrite> tensors;
    for (const auto &buffer : state_) {
      const TensorSpec &spec = buffer->spec();
      // A rank holding none of a stage 3 param has an empty piece: nothing
      // to save, nor to load.
      if (spec.sharded == sharded &&
          !(spec.shardOffset >= 0 && !spec.numElements))
        tensors.push_back({spec.name, spec.dtype, spec.shape, buffer->data(),
                           buffer->numBytes()});
    }
    return tensors;
  };
  if (manifest_.rank < 0)
    return writeSafeTensors(path, part(false), metadata);

  // O3: this rank's shard, and (rank 0) the state every rank holds. Each
  // shard also records the replicated layout, which identifies it when a
  // group of another size reshards the checkpoint (load).
  metadata["part"] = "shard";
  metadata["shards"] = std::to_string(worldSize());
  metadata["layout_hash"] = replicatedLayoutHash();
  // Flat-shard pieces say where they start in their param, so that a group
  // of another size can cut its own pieces from them (load).
  // ZeRO stage 3 keeps the params in the shards too, each piece with the
  // shape of its param (for the weights exported from the checkpoint).
  std::string offsets, shapes;
  for (const auto &buffer : state_) {
    const TensorSpec &spec = buffer->spec();
    if (spec.isParamPiece())
      metadata[kWeightsShardedKey] = "1";
    if (!spec.sharded || spec.shardOffset < 0 || !spec.numElements)
      continue;
    offsets += spec.name + "=" + std::to_string(spec.shardOffset) + ";";
    if (spec.isParamPiece())
      shapes += spec.name + "=" + formatParamShape(spec.wholeShape()) + ";";
  }
  if (!offsets.empty())
    metadata[kShardOffsetsKey] = offsets;
  if (!shapes.empty())
    metadata[kParamShapesKey] = shapes;
  if (Error e = writeSafeTensors(shardPath(path, manifest_.rank), part(true),
                                 metadata))
    return e;
  metadata.erase(kShardOffsetsKey);
  metadata.erase(kParamShapesKey);
  if (manifest_.rank != 0)
    return Error::success();
  metadata["part"] = "replicated";
  metadata.erase("graph_hash"); // rank 0's program; the others differ
  return writeSafeTensors(path, part(false), metadata);
}

Error Session::load(const std::string &path) {
  // One file (O0-O2), or at O3 the replicated part at `path` and the
  // shards next to it: this rank's own when the checkpoint was written by a
  // group of this size, every shard when by another size (resharding: each
  // sharded tensor is whole and named, so this rank takes the ones it owns
  // from whichever shard holds them). Every check passes before a buffer
  // changes.
  const bool sharded = manifest_.rank >= 0;
  struct Part {
    std::string path;
    std::unique_ptr<SafeTensorsReader> reader;
  };
  std::vector<Part> parts;
  parts.push_back({path, nullptr});
  if (Error e = SafeTensorsReader::open(path, parts.front().reader))
    return e;
  const auto &head = parts.front().reader->metadata();
  // The group size that wrote an O3 checkpoint; another size reshards.
  int64_t writers = worldSize();
  if (sharded && head.count("shards") && head.count("world_size") &&
      head.at("world_size") != std::to_string(worldSize())) {
    char *end = nullptr;
    const std::string &text = head.at("shards");
    writers = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || writers < 1)
      return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                   "cannot resume from '" + path +
                       "': its __metadata__ \"shards\" is not a rank count");
  }
  // Stages 1-2 keep the params in the replicated part, stage 3 as pieces
  // in the shards: a checkpoint of the other kind is resharded too.
  const bool ourPieces =
      std::any_of(state_.begin(), state_.end(),
                  [](const auto &b) { return b->spec().isParamPiece(); });
  const bool theirPieces = head.count(kWeightsShardedKey) != 0;
  const bool reshard =
      writers != worldSize() || (sharded && ourPieces != theirPieces);
  if (sharded)
    for (int64_t r = reshard ? 0 : manifest_.rank;
         r < (reshard ? writers : manifest_.rank + 1); ++r)
      parts.push_back({shardPath(path, r), nullptr});

  std::vector<const SafeTensor *> sources(state_.size(), nullptr);
  ShardPieces pieces;
  std::vector<const std::string *> sourcePaths(state_.size(), nullptr);
  std::vector<LayoutEntry> layout;
  std::string firstStep;
  for (Part &part : parts) {
    const bool isShard = &part != &parts.front();
    if (isShard)
      if (Error e = SafeTensorsReader::open(part.path, part.reader))
        return e;
    const auto &meta = part.reader->metadata();
    auto refuse = [&](const std::string &what) {
      return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                   "cannot resume from '" + part.path + "': " + what);
    };
    // A shard of another group size is identified by the layout hash of
    // the replicated state it was saved with (its program is another
    // rank's); a shard of this size by this rank's program.
    const char *identity =
        sharded && (!isShard || reshard) ? "layout_hash" : "graph_hash";
    for (const char *key : {identity, "level", "world_size"})
      if (!meta.count(key))
        return refuse(std::string("its __metadata__ has no \"") + key +
                      "\"; it is not a" +
                      (sharded ? std::string("n O3 ") : std::string(" ")) +
                      "checkpoint written by msamp" +
                      (reshard ? " (or one written before O3 checkpoints "
                                 "could move between world sizes)"
                               : ""));
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
            check("world_size", std::to_string(writers),
                  reshard ? "(this shard) with world size" : "with world size"))
      return e;
    if (Error e = check("level", manifest_.level, "at level"))
      return e;
    if (Error e = check(
            identity,
            sharded && (!isShard || reshard) ? replicatedLayoutHash()
                                             : graphHash_,
            "for graph", " (a different model or different compile options)"))
      return e;
    if (meta.count("abi_version"))
      if (Error e = check("abi_version", std::to_string(manifest_.abiVersion),
                          "with manifest ABI version"))
        return e;
    // The parts of one O3 checkpoint come from one step (each is renamed
    // into place on its own; a crash between two renames mixes steps).
    auto step = meta.find("step");
    std::string thisStep = step == meta.end() ? "" : step->second;
    if (isShard && thisStep != firstStep)
      return refuse("it holds step " + thisStep + ", but '" + path +
                    "' holds step " + firstStep +
                    " (the parts of a checkpoint must come from one save)");
    if (!isShard) {
      firstStep = thisStep;
      if (Error e = readStateDictLayout(*part.reader, layout))
        return e;
    }

    // Check every tensor of this part before changing any buffer.
    auto fail = [&](const std::string &what) {
      return Error(MSAMP_ERROR_MISMATCH,
                   "cannot resume from '" + part.path + "': " + what);
    };
    size_t expected = 0;
    for (size_t i = 0; i < state_.size(); ++i) {
      const TensorSpec &spec = state_[i]->spec();
      if (spec.shardOffset >= 0 && !spec.numElements)
        continue; // an empty stage 3 piece
      if (reshard && spec.role == "param" &&
          spec.isParamPiece() != theirPieces) {
        // A param whole in the writers' replicated part and a piece here,
        // or the other way round: cut or joined like the masters.
        if (isShard != theirPieces)
          continue;
        const SafeTensor *t = part.reader->find(spec.name);
        if (!t && isShard)
          continue; // in another writer's shard
        if (!t)
          return fail("no tensor '" + spec.name + "'");
        if (t->dtype != spec.dtype ||
            (!isShard && t->numElements != spec.wholeElements()))
          return fail("tensor '" + spec.name + "' is " +
                      safetensorsName(t->dtype) + " " +
                      shapeToString(t->shape) + ", expected " +
                      safetensorsName(spec.dtype) + " " +
                      shapeToString(spec.wholeShape()));
        int64_t offset = 0;
        if (isShard)
          if (Error e = findShardOffset(meta, spec.name, offset))
            return fail(e.message());
        if (Error e = pieces.add(i, spec, *t, offset))
          return fail(e.message());
        continue;
      }
      if (sharded && spec.sharded != isShard)
        continue;
      const SafeTensor *t = part.reader->find(spec.name);
      if (!t && reshard && isShard)
        continue; // in another writer's shard
      if (t && reshard && isShard && spec.shardOffset >= 0) {
        // A flat-shard piece: this rank's piece is cut from the writers'
        // pieces of the same param state, wherever they overlap.
        if (t->dtype != spec.dtype)
          return fail("tensor '" + spec.name + "' has dtype " +
                      safetensorsName(t->dtype) + ", expected " +
                      safetensorsName(spec.dtype));
        int64_t offset = 0;
        if (Error e = findShardOffset(meta, spec.name, offset))
          return fail(e.message());
        if (Error e = pieces.add(i, spec, *t, offset))
          return fail(e.message());
        continue;
      }
      ++expected;
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
      if (sources[i])
        return fail("tensor '" + spec.name + "' is also in '" +
                    *sourcePaths[i] + "' (a param's state is in one shard)");
      sources[i] = t;
      sourcePaths[i] = &part.path;
    }
    // Resharding reads the shards of other ranks, which hold tensors this
    // rank does not own; only a shard of this rank's own program must hold
    // nothing else.
    if (!reshard && part.reader->tensors().size() != expected)
      for (const SafeTensor &t : part.reader->tensors()) {
        const TensorBuffer *b = findState(t.name);
        if (!b || (sharded && b->spec().sharded != isShard))
          return fail("tensor '" + t.name + "' is not " +
                      (isShard ? "this rank's shard" : "state") +
                      " of this model");
      }
  }
  for (size_t i = 0; i < state_.size(); ++i)
    if (!sources[i] && state_[i]->spec().numElements &&
        !pieces.complete(i, state_[i]->spec()))
      return Error(MSAMP_ERROR_MISMATCH,
                   "cannot resume from '" + path + "': no tensor '" +
                       state_[i]->spec().name + "' in any of its " +
                       std::to_string(writers) + " shards");
  int64_t steps = 0;
  if (!stepState_) {
    char *end = nullptr;
    if (!firstStep.empty())
      steps = std::strtoll(firstStep.c_str(), &end, 10);
    if (firstStep.empty() || *end || steps < 0)
      return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                   "cannot resume from '" + path +
                       "': its __metadata__ has no valid \"step\"");
  }

  for (size_t i = 0; i < state_.size(); ++i)
    if (sources[i])
      std::memcpy(state_[i]->data(), sources[i]->data, sources[i]->numBytes);
    else if (state_[i]->spec().numElements)
      pieces.copyTo(i, state_[i]->data());
  // Restored on the host copies: the whole state to the device at once.
  if (Error e = uploadAll(state_))
    return e;
  if (!stepState_)
    localSteps_ = steps;
  // A checkpoint without a layout (written before layouts were recorded, or
  // by a run not initialized from an export's init file) keeps the current.
  if (!layout.empty())
    stateDictLayout_ = std::move(layout);
  initialized_ = true;
  return Error::success();
}

} // namespace msamp::session
