//===- Weights.cpp - Trained weights as a PyTorch state_dict --------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Weights.h describes the layout and the values. Both ways in, a live
// session (Session::exportWeights) and a checkpoint
// (exportCheckpointWeights), gather the state into one name -> tensor map and
// call writeWeights, so msamp-run --export-weights and msamp.state_dict
// produce the same bytes from the same state.
//
//===----------------------------------------------------------------------===//

#include "Weights.h"
#include "SafeTensors.h"
#include "Session.h"
#include "Sha256.h"
#include "ShardPieces.h"
#include "State.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

#ifndef MSAMP_VERSION_STRING
#define MSAMP_VERSION_STRING "unknown"
#endif

namespace msamp::session {

using json = nlohmann::json;

Error parseStateDictLayout(const std::string &text, const std::string &where,
                           std::vector<LayoutEntry> &out) {
  auto fail = [&](const std::string &what) {
    return Error(MSAMP_ERROR_FORMAT, where + ": __metadata__ \"" +
                                         kStateDictLayoutKey + "\": " + what);
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    return fail(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_array())
    return fail("expected an array of [state_dict key, state name] pairs");
  std::vector<LayoutEntry> layout;
  std::set<std::string> keys;
  for (const json &pair : doc) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() ||
        !pair[1].is_string())
      return fail("entry " + pair.dump() +
                  " is not a [state_dict key, state name] pair of strings");
    LayoutEntry entry{pair[0].get<std::string>(), pair[1].get<std::string>()};
    if (entry.key.empty() || entry.source.empty())
      return fail("entry " + pair.dump() + " has an empty name");
    if (!keys.insert(entry.key).second)
      return fail("key '" + entry.key + "' appears twice");
    layout.push_back(std::move(entry));
  }
  out = std::move(layout);
  return Error::success();
}

std::string formatStateDictLayout(const std::vector<LayoutEntry> &layout) {
  json doc = json::array();
  for (const LayoutEntry &entry : layout)
    doc.push_back(json::array({entry.key, entry.source}));
  return doc.dump();
}

std::vector<LayoutEntry> defaultStateDictLayout(const Manifest &manifest) {
  std::vector<LayoutEntry> layout;
  for (const char *role : {"param", "buffer"})
    for (const TensorSpec &spec : manifest.state)
      if (spec.role == role)
        layout.push_back({spec.name, spec.name});
  return layout;
}

std::string replicatedLayoutHash(const std::vector<TensorSpec> &state) {
  // Names, dtypes and shapes of the state every rank of an O3 group holds:
  // equal on every rank of one group, whatever it owns.
  Sha256 hash;
  // A stage 3 param piece counts as its param, so that the hash is the
  // same at every ZeRO stage (a checkpoint moves between them).
  for (const TensorSpec &spec : state) {
    if (spec.sharded && !spec.isParamPiece())
      continue;
    std::string line = spec.name + ":" + safetensorsName(spec.dtype) + ":" +
                       shapeToString(spec.wholeShape()) + ";";
    hash.update(line.data(), line.size());
  }
  return "sha256:" + hash.hexDigest();
}

Error writeWeights(const std::map<std::string, StoredTensor> &state,
                   const std::vector<LayoutEntry> &layout,
                   std::map<std::string, std::string> metadata,
                   const std::string &path) {
  auto find = [&](const std::string &name) -> const StoredTensor * {
    auto it = state.find(name);
    return it == state.end() ? nullptr : &it->second;
  };
  // Decoded values, one per source (tied keys share it); std::map keeps the
  // addresses stable while TensorToWrite points into them.
  std::map<std::string, std::vector<float>> decoded;
  std::vector<TensorToWrite> tensors;
  for (const LayoutEntry &entry : layout) {
    const StoredTensor *source = find(entry.source);
    if (!source)
      return Error(MSAMP_ERROR_MISMATCH,
                   "state_dict entry '" + entry.key + "' comes from '" +
                       entry.source +
                       "', which is not state of this model (the layout was "
                       "recorded for another model?)");
    if (!isFloatType(source->dtype)) {
      // Integer buffers keep their dtype and values.
      tensors.push_back({entry.key, source->dtype, source->shape, source->data,
                         static_cast<size_t>(source->numElements *
                                             elementSize(source->dtype))});
      continue;
    }
    auto it = decoded.find(entry.source);
    if (it == decoded.end()) {
      // The master copy is the value the optimizer updates (O3 keeps the
      // FP16 master on its owner and an FP8 cast of it on every rank).
      std::string valueName = entry.source + ".master";
      const StoredTensor *value = find(valueName);
      if (!value) {
        valueName = entry.source;
        value = source;
      } else if (value->numElements != source->numElements ||
                 !isFloatType(value->dtype)) {
        return Error(MSAMP_ERROR_MISMATCH,
                     "master copy '" + valueName + "' (" +
                         safetensorsName(value->dtype) + " " +
                         shapeToString(value->shape) + ") does not fit '" +
                         entry.source + "' (" + shapeToString(source->shape) +
                         ")");
      }
      float scaleInv = 1.0f;
      if (const StoredTensor *scale = find(scaleName(valueName)))
        if (scale->dtype == ElementType::F32 && scale->numElements == 1) {
          float s;
          std::memcpy(&s, scale->data, sizeof(s));
          scaleInv = 1.0f / s;
        }
      std::vector<float> values(static_cast<size_t>(value->numElements));
      decodeToF32(value->dtype, value->data, value->numElements, scaleInv,
                  values.data());
      it = decoded.emplace(entry.source, std::move(values)).first;
    }
    tensors.push_back({entry.key, ElementType::F32, source->shape,
                       it->second.data(), it->second.size() * sizeof(float)});
  }
  // PyTorch's safetensors loader reads "format"; the layout records which
  // keys are tied.
  metadata["format"] = "pt";
  metadata["msamp_version"] = MSAMP_VERSION_STRING;
  metadata[kStateDictLayoutKey] = formatStateDictLayout(layout);
  return writeSafeTensors(path, tensors, metadata);
}

Error Session::exportWeights(const std::string &path) const {
  // At O3 each rank holds only the masters it owns: the weights need every
  // rank's shard (msamp-run saves a checkpoint and assembles it).
  if (manifest_.rank >= 0 && worldSize() > 1)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "at O3 rank " + std::to_string(manifest_.rank) +
                     " holds only the master weights it owns: save a "
                     "checkpoint on every rank and export the weights from "
                     "it (msamp_export_checkpoint_weights)");
  // The values, from the device (a GPU step's state): one copy.
  if (Error e = downloadAll(state_))
    return e;
  std::map<std::string, StoredTensor> state;
  for (const auto &buffer : state_) {
    const TensorSpec &spec = buffer->spec();
    // One rank's stage 3 piece is the whole param.
    state[spec.name] = {spec.dtype, spec.wholeShape(), spec.numElements,
                        buffer->data()};
  }
  std::vector<LayoutEntry> layout = stateDictLayout_;
  if (layout.empty())
    layout = defaultStateDictLayout(manifest_);
  return writeWeights(
      state, layout,
      {{"level", manifest_.level}, {"step", std::to_string(completedSteps())}},
      path);
}

Error exportCheckpointWeights(const std::string &checkpoint,
                              const std::string &stepDir,
                              const std::string &path) {
  std::vector<std::unique_ptr<SafeTensorsReader>> parts(1);
  if (Error e = SafeTensorsReader::open(checkpoint, parts[0]))
    return e;
  const auto &meta = parts[0]->metadata();
  auto value = [&](const char *key) {
    auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  auto refuse = [&](const std::string &what) {
    return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                 "cannot export weights from '" + checkpoint + "': " + what);
  };
  const std::string part = value("part");
  if (part == "shard")
    return refuse("it is one rank's shard of an O3 checkpoint; give the "
                  "checkpoint itself (the file without .rank<r>), with every "
                  "shard next to it");
  if (value("level").empty())
    return refuse("its __metadata__ has no \"level\"; it is not a checkpoint "
                  "written by msamp");

  // O3: the replicated state, and each rank's shard (its FP16 masters).
  if (part == "replicated") {
    char *end = nullptr;
    const std::string text = value("shards");
    const long long shards = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || shards < 1)
      return refuse("an O3 checkpoint without a valid \"shards\" count");
    for (long long r = 0; r < shards; ++r) {
      const std::string shard = shardPath(checkpoint, r);
      std::unique_ptr<SafeTensorsReader> reader;
      if (Error e = SafeTensorsReader::open(shard, reader))
        return refuse("it has " + std::to_string(shards) + " shards and rank " +
                      std::to_string(r) + "'s is missing or unreadable (" +
                      e.message() +
                      "); the master weights each rank owns are only in its "
                      "shard");
      auto step = reader->metadata().find("step");
      if (step == reader->metadata().end() || step->second != value("step"))
        return refuse("'" + shard + "' holds step " +
                      (step == reader->metadata().end() ? "?" : step->second) +
                      ", the checkpoint step " + value("step") +
                      " (the parts must come from one save)");
      parts.push_back(std::move(reader));
    }
  }

  // The compiled step, when given, must be the checkpoint's.
  Manifest manifest;
  const bool haveStep = !stepDir.empty();
  if (haveStep) {
    if (Error e = loadManifest(stepDir + "/manifest.json", manifest))
      return e;
    if (manifest.level != value("level"))
      return refuse("it was written at level " + value("level") +
                    ", the compiled step '" + stepDir + "' is at level " +
                    manifest.level);
    std::string ours, theirs;
    if (part == "replicated") {
      ours = replicatedLayoutHash(manifest.state);
      theirs = value("layout_hash");
    } else {
      std::string text;
      if (Error e = readGraph(stepDir, text, ours))
        return e;
      theirs = value("graph_hash");
    }
    if (ours != theirs)
      return refuse("it was written for graph " + theirs +
                    ", the compiled step '" + stepDir + "' is graph " + ours +
                    " (a checkpoint of another model or other compile "
                    "options)");
  }

  std::map<std::string, StoredTensor> state;
  // O3 flat shards: a param's master and moments are pieces in several
  // shards, each with its offset (ShardPieces.h); they are concatenated.
  std::map<std::string, std::map<int64_t, const SafeTensor *>> pieces;
  for (const auto &reader : parts) {
    const bool pieced = reader->metadata().count(kShardOffsetsKey) != 0;
    for (const SafeTensor &t : reader->tensors()) {
      int64_t offset = -1;
      if (pieced &&
          reader->metadata().at(kShardOffsetsKey).find(t.name + "=") !=
              std::string::npos) {
        if (Error e = findShardOffset(reader->metadata(), t.name, offset))
          return refuse(e.message());
        if (!pieces[t.name].emplace(offset, &t).second)
          return refuse("two pieces of '" + t.name + "' start at element " +
                        std::to_string(offset));
        continue;
      }
      if (!state
               .emplace(t.name,
                        StoredTensor{t.dtype, t.shape, t.numElements, t.data})
               .second)
        return refuse("tensor '" + t.name + "' is in more than one part");
    }
  }
  std::map<std::string, std::vector<uint8_t>> assembled;
  for (auto &[name, byOffset] : pieces) {
    std::vector<uint8_t> &bytes = assembled[name];
    int64_t next = 0;
    ElementType dtype = byOffset.begin()->second->dtype;
    for (auto [offset, t] : byOffset) {
      if (offset != next || t->dtype != dtype)
        return refuse("the pieces of '" + name + "' do not join at element " +
                      std::to_string(next));
      bytes.insert(bytes.end(), t->data, t->data + t->numBytes);
      next += t->numElements;
    }
    // A stage 3 param's pieces join into the param's shape.
    std::vector<int64_t> shape = {next};
    for (const auto &reader : parts)
      if (findParamShape(reader->metadata(), name, shape))
        break;
    int64_t elements = 1;
    for (int64_t d : shape)
      elements *= d;
    if (elements != next)
      return refuse("the pieces of '" + name + "' hold " +
                    std::to_string(next) + " elements, its shape " +
                    shapeToString(shape) + " " + std::to_string(elements));
    if (!state.emplace(name, StoredTensor{dtype, shape, next, bytes.data()})
             .second)
      return refuse("tensor '" + name + "' is in more than one part");
  }

  std::vector<LayoutEntry> layout;
  auto recorded = meta.find(kStateDictLayoutKey);
  if (recorded != meta.end()) {
    if (Error e = parseStateDictLayout(recorded->second, checkpoint, layout))
      return e;
  } else if (haveStep) {
    layout = defaultStateDictLayout(manifest);
  } else {
    return refuse("it records no state_dict layout (the run was not "
                  "initialized from an msamp.export init file); give the "
                  "compiled step directory so its params and buffers can be "
                  "named");
  }
  return writeWeights(state, layout,
                      {{"level", value("level")}, {"step", value("step")}},
                      path);
}

} // namespace msamp::session
