//===- Manifest.cpp - The manifest of a compiled train step ---------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "Vocabulary.h"

#include "MSAMP/Support/Levels.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace msamp::session {

using json = nlohmann::json;

namespace {

bool parseDouble(const std::string &text, double &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(out);
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Parses one entry of "state" (`isState`) or "inputs".
Error parseEntry(const json &entry, const std::string &where, bool isState,
                 TensorSpec &spec) {
  auto fail = [&](const std::string &what) {
    return Error(MSAMP_ERROR_MANIFEST, where + ": " + what);
  };
  if (!entry.is_object())
    return fail("not a JSON object");
  auto name = entry.find("name");
  if (name == entry.end() || !name->is_string() ||
      name->get<std::string>().empty())
    return fail("missing or empty string \"name\"");
  spec.name = name->get<std::string>();
  std::string at = where + " ('" + spec.name + "')";
  auto failAt = [&](const std::string &what) {
    return Error(MSAMP_ERROR_MANIFEST, at + ": " + what);
  };

  auto role = entry.find("role");
  if (role == entry.end() || !role->is_string())
    return failAt("missing string \"role\"");
  spec.role = role->get<std::string>();
  msamp_role_kind kind =
      isState ? MSAMP_ROLE_KIND_STATE : MSAMP_ROLE_KIND_INPUT;
  if (!isRoleOfKind(spec.role, kind))
    return failAt("role '" + spec.role + "' is not one of " +
                  listRolesOfKind(kind));

  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array())
    return failAt("missing array \"shape\"");
  spec.shape.clear();
  spec.numElements = 1;
  for (const json &dim : *shape) {
    if (!dim.is_number_unsigned())
      return failAt("shape " + shape->dump() +
                    " must list non-negative integers (static shapes)");
    uint64_t d = dim.get<uint64_t>();
    if (d > (1ull << 40) ||
        (d != 0 && static_cast<uint64_t>(spec.numElements) > (1ull << 40) / d))
      return failAt("shape " + shape->dump() + " is too large");
    spec.numElements *= static_cast<int64_t>(d);
    spec.shape.push_back(static_cast<int64_t>(d));
  }

  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string())
    return failAt("missing string \"dtype\"");
  std::optional<ElementType> type =
      parseManifestType(dtype->get<std::string>());
  if (!type)
    return failAt("dtype '" + dtype->get<std::string>() +
                  "' is not one of f32, f16, bf16, f8E4M3FN, f8E5M2, i64, i32");
  spec.dtype = *type;
  spec.numBytes = spec.numElements * elementSize(spec.dtype);

  auto index = entry.find("index");
  if (index == entry.end() || !index->is_number_unsigned())
    return failAt("missing non-negative integer \"index\"");
  spec.index = static_cast<int64_t>(std::min<uint64_t>(
      index->get<uint64_t>(), static_cast<uint64_t>(INT64_MAX)));

  if (isState) {
    auto init = entry.find("init");
    spec.initText = "zeros";
    if (init != entry.end()) {
      if (!init->is_string())
        return failAt("\"init\" is not a string");
      spec.initText = init->get<std::string>();
    }
    std::optional<InitSpec> parsed = parseInit(spec.initText);
    if (!parsed)
      return failAt("init '" + spec.initText +
                    "' is not one of zeros, ones, from_param, seed, "
                    "normal(MEAN,STD)");
    if (parsed->kind == InitSpec::Normal && !isFloatType(spec.dtype))
      return failAt("init '" + spec.initText +
                    "' needs a floating dtype, not " + mlirName(spec.dtype));
    spec.init = *parsed;
  }

  auto sharded = entry.find("sharded");
  if (sharded != entry.end()) {
    if (!isState || !sharded->is_boolean())
      return failAt("\"sharded\" must be a boolean of a state entry");
    spec.sharded = sharded->get<bool>();
  }

  auto offset = entry.find("shard_offset");
  if (offset != entry.end()) {
    if (!spec.sharded || !offset->is_number_unsigned())
      return failAt("\"shard_offset\" must be a non-negative integer of a "
                    "sharded state entry");
    spec.shardOffset = static_cast<int64_t>(
        std::min<uint64_t>(offset->get<uint64_t>(), INT64_MAX));
  }

  // ZeRO stage 3: a param held as a piece (its own "shape"), of a param
  // of "param_shape".
  auto whole = entry.find("param_shape");
  if (whole != entry.end()) {
    if (spec.role != "param" || spec.shardOffset < 0 || !whole->is_array())
      return failAt("\"param_shape\" must be the shape of a param held as a "
                    "sharded piece (with \"shard_offset\")");
    spec.paramShape.clear();
    spec.paramElements = 1;
    for (const json &dim : *whole) {
      if (!dim.is_number_unsigned() || dim.get<uint64_t>() > (1ull << 40))
        return failAt("param_shape " + whole->dump() +
                      " must list non-negative integers");
      spec.paramShape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
      if (spec.paramElements >
          (1ll << 40) / std::max<int64_t>(spec.paramShape.back(), 1))
        return failAt("param_shape " + whole->dump() + " is too large");
      spec.paramElements *= spec.paramShape.back();
    }
    if (spec.shape.size() != 1 ||
        spec.shardOffset + spec.numElements > spec.paramElements)
      return failAt("a piece of " + std::to_string(spec.numElements) +
                    " elements at " + std::to_string(spec.shardOffset) +
                    " does not fit in param_shape " + whole->dump());
  }

  auto classes = entry.find("num_classes");
  if (classes != entry.end()) {
    if (!classes->is_number_unsigned() || classes->get<uint64_t>() == 0)
      return failAt("\"num_classes\" must be a positive integer");
    spec.numClasses = static_cast<int64_t>(
        std::min<uint64_t>(classes->get<uint64_t>(), INT64_MAX));
  }

  // The run's seed is written as one i64 (Philox's 64-bit key).
  if (isState && spec.init.kind == InitSpec::Seed &&
      (spec.numElements != 1 || spec.dtype != ElementType::I64))
    return failAt("init 'seed' needs one i64, found " +
                  std::string(mlirName(spec.dtype)) + " " +
                  shapeToString(spec.shape));
  // The roles the session itself writes have a fixed form.
  if (spec.role == "step" &&
      (spec.numElements != 1 || spec.dtype != ElementType::I64))
    return failAt("the step counter must be one i64, found " +
                  std::string(mlirName(spec.dtype)) + " " +
                  shapeToString(spec.shape));
  if (spec.role == roleName(MSAMP_ROLE_HYPERPARAM)) {
    if (spec.name != "lr" && spec.name != "max_grad_norm" &&
        spec.name != "training")
      return failAt("unknown hyperparam (this runtime feeds only 'lr', "
                    "'max_grad_norm' and 'training')");
    if (spec.numElements != 1 || spec.dtype != ElementType::F32)
      return failAt("'" + spec.name + "' must be one f32, found " +
                    std::string(mlirName(spec.dtype)) + " " +
                    shapeToString(spec.shape));
  }
  if (spec.role == "rank" &&
      (spec.numElements != 1 ||
       (spec.dtype != ElementType::I32 && spec.dtype != ElementType::I64)))
    return failAt("the rank must be one i32 or i64");
  return Error::success();
}

/// Parses the "metric" entries of "outputs" into `metrics`. Other outputs
/// (the loss, state updates) are described by "state" already and are not
/// read. A metric is one f32 that the step writes after the loss, so its
/// form is fixed.
Error parseMetrics(const json &outputs, const std::string &source,
                   std::vector<TensorSpec> &metrics) {
  if (!outputs.is_array())
    return Error(MSAMP_ERROR_MANIFEST,
                 source + ": \"outputs\" is not an array");
  std::set<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json &entry = outputs[i];
    std::string where = source + ": outputs[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return Error(MSAMP_ERROR_MANIFEST, where + ": not a JSON object");
    auto role = entry.find("role");
    if (role == entry.end() || !role->is_string() ||
        role->get<std::string>() != roleName(MSAMP_ROLE_METRIC))
      continue;
    auto fail = [&](const std::string &what) {
      return Error(MSAMP_ERROR_MANIFEST, where + ": " + what);
    };
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() ||
        name->get<std::string>().empty())
      return fail("a metric needs a non-empty string \"name\"");
    TensorSpec spec;
    spec.name = name->get<std::string>();
    spec.role = roleName(MSAMP_ROLE_METRIC);
    auto shape = entry.find("shape");
    auto dtype = entry.find("dtype");
    if (shape == entry.end() || !shape->is_array() || !shape->empty() ||
        dtype == entry.end() || !dtype->is_string() ||
        dtype->get<std::string>() != "f32")
      return fail("metric '" + spec.name +
                  "' must have shape [] and dtype f32");
    auto index = entry.find("index");
    if (index != entry.end() && index->is_number_unsigned())
      spec.index = static_cast<int64_t>(std::min<uint64_t>(
          index->get<uint64_t>(), static_cast<uint64_t>(INT64_MAX)));
    spec.dtype = ElementType::F32;
    spec.numElements = 1;
    spec.numBytes = static_cast<int64_t>(sizeof(float));
    if (!names.insert(spec.name).second)
      return fail("metric '" + spec.name + "' appears twice");
    metrics.push_back(std::move(spec));
  }
  return Error::success();
}

} // namespace

std::optional<InitSpec> parseInit(const std::string &text) {
  InitSpec spec;
  if (text == "zeros") {
    spec.kind = InitSpec::Zeros;
    return spec;
  }
  if (text == "ones") {
    spec.kind = InitSpec::Ones;
    return spec;
  }
  if (text == "from_param") {
    spec.kind = InitSpec::FromParam;
    return spec;
  }
  if (text == "seed") {
    spec.kind = InitSpec::Seed;
    return spec;
  }
  const std::string prefix = "normal(";
  if (text.size() > prefix.size() + 1 &&
      text.compare(0, prefix.size(), prefix) == 0 && text.back() == ')') {
    std::string args =
        text.substr(prefix.size(), text.size() - prefix.size() - 1);
    size_t comma = args.find(',');
    if (comma == std::string::npos)
      return std::nullopt;
    double mean, stddev;
    if (!parseDouble(trim(args.substr(0, comma)), mean) ||
        !parseDouble(trim(args.substr(comma + 1)), stddev) || stddev < 0)
      return std::nullopt;
    spec.kind = InitSpec::Normal;
    spec.mean = mean;
    spec.stddev = stddev;
    return spec;
  }
  return std::nullopt;
}

Error parseManifest(const std::string &text, const std::string &source,
                    Manifest &out) {
  auto fail = [&](const std::string &what) {
    return Error(MSAMP_ERROR_MANIFEST, source + ": " + what);
  };
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    return fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    return fail("not a JSON object");

  Manifest m;
  auto abi = doc.find("abi_version");
  if (abi == doc.end() || !abi->is_number_integer())
    return fail("missing integer \"abi_version\"");
  m.abiVersion = abi->get<int64_t>();
  if (m.abiVersion != kManifestABIVersion)
    return fail("abi_version is " + std::to_string(m.abiVersion) +
                ", this runtime reads version " +
                std::to_string(kManifestABIVersion) +
                "; recompile the model with this msamp");

  auto level = doc.find("level");
  if (level == doc.end() || !level->is_string())
    return fail("missing string \"level\"");
  m.level = level->get<std::string>();
  if (!msamp_levels::lookupLevel(m.level))
    return fail("level '" + m.level + "' is not one of " +
                msamp_levels::levelNames());

  auto worldSize = doc.find("world_size");
  if (worldSize != doc.end()) {
    if (!worldSize->is_number_unsigned() || worldSize->get<uint64_t>() == 0 ||
        worldSize->get<uint64_t>() > (1u << 20))
      return fail("\"world_size\" must be a positive integer");
    m.worldSize = worldSize->get<int64_t>();
  }
  auto rank = doc.find("rank");
  if (rank != doc.end()) {
    if (!rank->is_number_unsigned() ||
        rank->get<uint64_t>() >= static_cast<uint64_t>(m.worldSize))
      return fail("\"rank\" must be an integer in [0, world_size)");
    m.rank = rank->get<int64_t>();
  }

  std::set<std::string> names;
  for (bool isState : {true, false}) {
    const char *key = isState ? "state" : "inputs";
    auto list = doc.find(key);
    if (list == doc.end() || !list->is_array())
      return fail(std::string("missing array \"") + key + "\"");
    for (size_t i = 0; i < list->size(); ++i) {
      TensorSpec spec;
      std::string where = source + ": " + key + "[" + std::to_string(i) + "]";
      if (Error e = parseEntry((*list)[i], where, isState, spec))
        return e;
      if (!names.insert(spec.name).second)
        return fail("name '" + spec.name + "' appears twice");
      (isState ? m.state : m.inputs).push_back(std::move(spec));
    }
  }

  // Every argument is bound by index: 0..N-1, each exactly once.
  m.numArgs = static_cast<int64_t>(m.state.size() + m.inputs.size());
  std::vector<const TensorSpec *> byIndex(m.numArgs, nullptr);
  for (const auto *list : {&m.state, &m.inputs})
    for (const TensorSpec &spec : *list) {
      if (spec.index >= m.numArgs)
        return fail("'" + spec.name + "' has index " +
                    std::to_string(spec.index) + ", but there are only " +
                    std::to_string(m.numArgs) + " arguments");
      if (byIndex[spec.index])
        return fail("'" + spec.name + "' and '" + byIndex[spec.index]->name +
                    "' both have index " + std::to_string(spec.index));
      byIndex[spec.index] = &spec;
    }

  int numSteps = 0;
  for (const TensorSpec &spec : m.state)
    numSteps += spec.role == "step";
  if (numSteps > 1)
    return fail("more than one state has role 'step'");

  // Optional: manifests of tests and of other producers may leave it out.
  auto outputs = doc.find("outputs");
  if (outputs != doc.end())
    if (Error e = parseMetrics(*outputs, source, m.metrics))
      return e;

  auto optimizer = doc.find("optimizer");
  if (optimizer != doc.end() && optimizer->is_object()) {
    auto lr = optimizer->find("lr");
    if (lr != optimizer->end()) {
      if (!lr->is_number())
        return fail("optimizer \"lr\" is not a number");
      m.lr = lr->get<double>();
    }
  }
  auto object = doc.find("object");
  if (object != doc.end()) {
    auto bytes = object->is_object() ? object->find("bytes") : object->end();
    auto sha = object->is_object() ? object->find("sha256") : object->end();
    if (!object->is_object() || bytes == object->end() ||
        !bytes->is_number_integer() || bytes->get<int64_t>() < 0 ||
        sha == object->end() || !sha->is_string() ||
        sha->get<std::string>().size() != 64)
      return fail("\"object\" must be {\"file\": ..., \"bytes\": N >= 0, "
                  "\"sha256\": 64 hex digits}");
    m.object = Manifest::Object{bytes->get<int64_t>(), sha->get<std::string>()};
  }
  auto cpu = doc.find("host_cpu");
  if (cpu != doc.end()) {
    auto name = cpu->is_object() ? cpu->find("name") : cpu->end();
    auto features = cpu->is_object() ? cpu->find("features") : cpu->end();
    bool ok = cpu->is_object() && name != cpu->end() && name->is_string() &&
              features != cpu->end() && features->is_array();
    Manifest::HostCpu hostCpu;
    if (ok) {
      hostCpu.name = name->get<std::string>();
      for (const auto &feature : *features) {
        ok = ok && feature.is_string();
        if (feature.is_string())
          hostCpu.features.push_back(feature.get<std::string>());
      }
    }
    if (!ok)
      return fail("\"host_cpu\" must be {\"name\": CPU, \"features\": "
                  "[names]}");
    m.hostCpu = std::move(hostCpu);
  }
  auto arena = doc.find("gpu_arena");
  if (arena != doc.end()) {
    auto bytesOf = [&](const char *key) -> int64_t {
      if (!arena->is_object())
        return -1;
      auto it = arena->find(key);
      return it != arena->end() && it->is_number_integer() ? it->get<int64_t>()
                                                           : -1;
    };
    Manifest::GpuArena gpuArena{bytesOf("device_bytes"), bytesOf("host_bytes")};
    if (gpuArena.deviceBytes < 0 || gpuArena.hostBytes < 0)
      return fail("\"gpu_arena\" must be {\"device_bytes\": N >= 0, "
                  "\"host_bytes\": M >= 0}");
    m.gpuArena = gpuArena;
  }
  out = std::move(m);
  return Error::success();
}

Error loadManifest(const std::string &path, Manifest &out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Error(MSAMP_ERROR_MANIFEST,
                 "cannot read '" + path + "': " + systemError(errno));
  std::stringstream text;
  text << file.rdbuf();
  return parseManifest(text.str(), path, out);
}

} // namespace msamp::session
