//===- ManifestTest.cpp - manifest.json parsing and validation ------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A manifest as msamp-compile writes it parses into the specs the session
// allocates from; every way it can be wrong is an MSAMP_ERROR_MANIFEST whose
// message names the entry and the field.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "MSAMP/Support/HostCpuFeatures.h"

#include "gtest/gtest.h"

#include <nlohmann/json.hpp>

using namespace msamp::session;
using json = nlohmann::json;

namespace {

/// The O1 MLP's manifest, trimmed (WriteManifest.cpp's format).
json validManifest() {
  return json::parse(R"json({
    "abi_version": 3, "level": "O1", "world_size": 1,
    "state": [
      {"name":"fc1.weight","role":"param","shape":[5,3],"dtype":"f16",
       "init":"normal(0,0.02)","index":0,"updated_by":1},
      {"name":"fc1.bias","role":"param","shape":[5],"dtype":"f32",
       "init":"zeros","index":1,"updated_by":2},
      {"name":"fc1.weight.exp_avg","role":"opt_state","shape":[5,3],
       "dtype":"f32","init":"zeros","index":2},
      {"name":"step","role":"step","shape":[],"dtype":"i64","init":"zeros",
       "index":3},
      {"name":"fc1.weight.scale","role":"scaling_state","shape":[],
       "dtype":"f32","init":"from_param","index":7},
      {"name":"fc1.fprop.input.amax_history","role":"scaling_state",
       "shape":[16],"dtype":"f32","init":"zeros","index":8}
    ],
    "inputs": [
      {"name":"lr","role":"hyperparam","shape":[],"dtype":"f32","index":4},
      {"name":"x","role":"input","shape":[4,3],"dtype":"f32","index":5},
      {"name":"y","role":"target","shape":[4],"dtype":"i64","index":6,
       "num_classes":3}
    ],
    "outputs": [{"name":"loss","role":"loss","shape":[],"dtype":"f32",
                 "index":0}]
  })json");
}

/// Parses `doc` and expects an error whose message contains `fragment`.
void expectInvalid(const json &doc, const std::string &fragment) {
  Manifest m;
  Error e = parseManifest(doc.dump(), "manifest.json", m);
  ASSERT_TRUE(e) << "accepted; expected an error with: " << fragment;
  EXPECT_EQ(e.code(), MSAMP_ERROR_MANIFEST);
  EXPECT_NE(e.message().find("manifest.json"), std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find(fragment), std::string::npos) << e.message();
}

TEST(ManifestTest, ParamPieceHasItsParamsShape) {
  // ZeRO stage 3: a param held as a 1-D piece names its param's shape.
  json doc = validManifest();
  doc["state"][0]["shape"] = {9};
  doc["state"][0]["sharded"] = true;
  doc["state"][0]["shard_offset"] = 6;
  doc["state"][0]["param_shape"] = {5, 3};
  Manifest m;
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  const TensorSpec &piece = m.state[0];
  EXPECT_TRUE(piece.isParamPiece());
  EXPECT_EQ(piece.numElements, 9);
  EXPECT_EQ(piece.wholeElements(), 15);
  EXPECT_EQ(piece.wholeShape(), (std::vector<int64_t>{5, 3}));
  // A whole tensor is its own param.
  EXPECT_FALSE(m.state[1].isParamPiece());
  EXPECT_EQ(m.state[1].wholeElements(), 5);
  EXPECT_EQ(m.state[1].wholeShape(), m.state[1].shape);

  doc["state"][0]["shard_offset"] = 7; // 7 + 9 > 15
  expectInvalid(doc, "does not fit in param_shape [5,3]");
  doc["state"][0].erase("shard_offset");
  expectInvalid(doc, "\"param_shape\" must be the shape of a param held as a "
                     "sharded piece");
}

TEST(ManifestTest, RngStateIsOneI64SeededByTheRun) {
  // The dropout seed (docs/Randomness.md): role rng_state, init "seed".
  json doc = validManifest();
  doc["state"][2] = json::parse(R"json({"name":"rng.seed","role":"rng_state",
      "shape":[],"dtype":"i64","init":"seed","index":2})json");
  Manifest m;
  Error e = parseManifest(doc.dump(), "manifest.json", m);
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(m.state[2].role, "rng_state");
  EXPECT_EQ(m.state[2].init.kind, InitSpec::Seed);
  // The seed is a 64-bit key: nothing else can hold it.
  doc["state"][2]["dtype"] = "f32";
  expectInvalid(doc, "state[2] ('rng.seed'): init 'seed' needs one i64, "
                     "found f32 []");
  doc["state"][2]["dtype"] = "i64";
  doc["state"][2]["shape"] = json::array({2});
  expectInvalid(doc, "init 'seed' needs one i64, found i64 [2]");
}

TEST(ManifestTest, ParsesCompilerOutput) {
  Manifest m;
  Error e = parseManifest(validManifest().dump(), "manifest.json", m);
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(m.level, "O1");
  EXPECT_EQ(m.worldSize, 1);
  EXPECT_EQ(m.numArgs, 9);
  ASSERT_EQ(m.state.size(), 6u);
  ASSERT_EQ(m.inputs.size(), 3u);
  const TensorSpec &w = m.state[0];
  EXPECT_EQ(w.name, "fc1.weight");
  EXPECT_EQ(w.dtype, ElementType::F16);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(w.numElements, 15);
  EXPECT_EQ(w.numBytes, 30);
  EXPECT_EQ(w.init.kind, InitSpec::Normal);
  EXPECT_DOUBLE_EQ(w.init.mean, 0.0);
  EXPECT_DOUBLE_EQ(w.init.stddev, 0.02);
  EXPECT_EQ(m.state[3].shape, std::vector<int64_t>{});
  EXPECT_EQ(m.state[3].numElements, 1);
  EXPECT_EQ(m.state[4].init.kind, InitSpec::FromParam);
  EXPECT_EQ(m.state[4].index, 7);
  EXPECT_EQ(m.inputs[2].numClasses, 3);
  EXPECT_FALSE(m.lr.has_value());
}

TEST(ManifestTest, ReferenceLevels) {
  // The reference rows of MS-AMP's level table are levels like O0-O3.
  for (const char *level : {"amp-bf16", "amp-fp16", "te"}) {
    json doc = validManifest();
    doc["level"] = level;
    Manifest m;
    ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m)) << level;
    EXPECT_EQ(m.level, level);
  }
}

TEST(ManifestTest, OptionalOptimizerLR) {
  json doc = validManifest();
  doc["optimizer"] = {{"kind", "adamw"}, {"lr", 0.25}};
  Manifest m;
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  ASSERT_TRUE(m.lr.has_value());
  EXPECT_DOUBLE_EQ(*m.lr, 0.25);
}

TEST(ManifestTest, OptionalHostCpu) {
  json doc = validManifest();
  Manifest m;
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  EXPECT_FALSE(m.hostCpu.has_value());
  doc["host_cpu"] = {{"name", "x86-64-v3"},
                     {"features", {"avx", "avx2", "fma"}}};
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  ASSERT_TRUE(m.hostCpu.has_value());
  EXPECT_EQ(m.hostCpu->name, "x86-64-v3");
  EXPECT_EQ(m.hostCpu->features,
            (std::vector<std::string>{"avx", "avx2", "fma"}));

  const char *expected = "\"host_cpu\" must be";
  doc["host_cpu"]["features"] = {"avx", 2};
  expectInvalid(doc, expected);
  doc["host_cpu"]["features"] = "avx2";
  expectInvalid(doc, expected);
  doc["host_cpu"] = "x86-64-v3";
  expectInvalid(doc, expected);
}

TEST(ManifestTest, OptionalGpuArena) {
  json doc = validManifest();
  Manifest m;
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  EXPECT_FALSE(m.gpuArena.has_value());
  doc["gpu_arena"] = {{"device_bytes", 335616}, {"host_bytes", 7936}};
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  ASSERT_TRUE(m.gpuArena.has_value());
  EXPECT_EQ(m.gpuArena->deviceBytes, 335616);
  EXPECT_EQ(m.gpuArena->hostBytes, 7936);

  const char *expected = "\"gpu_arena\" must be";
  doc["gpu_arena"]["host_bytes"] = -1;
  expectInvalid(doc, expected);
  doc["gpu_arena"] = {{"device_bytes", "big"}, {"host_bytes", 0}};
  expectInvalid(doc, expected);
  doc["gpu_arena"] = {{"device_bytes", 1}};
  expectInvalid(doc, expected);
  doc["gpu_arena"] = 12;
  expectInvalid(doc, expected);
}

/// A CPU with AVX2 but no AVX-512.
bool avx2Only(const std::string &name) { return name.rfind("avx512", 0) != 0; }

TEST(HostCpuFeatures, MissingAreThoseOfTheListThisCpuLacks) {
  // A step compiled on an AVX-512 machine, loaded on an AVX2 one.
  EXPECT_EQ(msamp_cpu::missingCpuFeatures(
                {"avx", "avx2", "avx512f", "avx512bw", "fma"}, avx2Only),
            (std::vector<std::string>{"avx512f", "avx512bw"}));
  // Names outside the list (a newer compiler's) are not checked.
  EXPECT_TRUE(
      msamp_cpu::missingCpuFeatures({"avx512-future", "amx-tile"}, avx2Only)
          .empty());
  // This machine has every feature of its own list.
  std::vector<std::string> own;
  std::string list = msamp_cpu::hostCpuFeatureList();
  for (size_t at = 0; !list.empty() && at != std::string::npos;) {
    size_t comma = list.find(',', at);
    own.push_back(
        list.substr(at, comma == std::string::npos ? comma : comma - at));
    at = comma == std::string::npos ? comma : comma + 1;
  }
  EXPECT_TRUE(msamp_cpu::missingCpuFeatures(own).empty()) << list;
}

TEST(ManifestTest, OptionalObject) {
  json doc = validManifest();
  Manifest m;
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  EXPECT_FALSE(m.object.has_value());
  const std::string sha(64, 'a');
  doc["object"] = {
      {"file", "train_step.so"}, {"bytes", 14552}, {"sha256", sha}};
  ASSERT_FALSE(parseManifest(doc.dump(), "manifest.json", m));
  ASSERT_TRUE(m.object.has_value());
  EXPECT_EQ(m.object->bytes, 14552);
  EXPECT_EQ(m.object->sha256, sha);

  const char *expected = "\"object\" must be";
  doc["object"]["bytes"] = -1;
  expectInvalid(doc, expected);
  doc["object"]["bytes"] = "14552";
  expectInvalid(doc, expected);
  doc["object"]["bytes"] = 14552;
  doc["object"]["sha256"] = "abc";
  expectInvalid(doc, expected);
  doc["object"] = "train_step.so";
  expectInvalid(doc, expected);
}

TEST(ManifestTest, InitSpellings) {
  EXPECT_EQ(parseInit("zeros")->kind, InitSpec::Zeros);
  EXPECT_EQ(parseInit("ones")->kind, InitSpec::Ones);
  EXPECT_EQ(parseInit("from_param")->kind, InitSpec::FromParam);
  auto n = parseInit("normal(1.5, 0.25)");
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(n->mean, 1.5);
  EXPECT_DOUBLE_EQ(n->stddev, 0.25);
  EXPECT_FALSE(parseInit("normal(0)"));
  EXPECT_FALSE(parseInit("normal(0,-1)"));
  EXPECT_FALSE(parseInit("normal(a,b)"));
  EXPECT_FALSE(parseInit("uniform(0,1)"));
  EXPECT_FALSE(parseInit(""));
}

TEST(ManifestTest, DocumentErrors) {
  Manifest m;
  Error e = parseManifest("{\"abi_version\": ", "manifest.json", m);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("not valid JSON"), std::string::npos);
  expectInvalid(json::array(), "not a JSON object");

  json doc = validManifest();
  doc["abi_version"] = 1;
  expectInvalid(doc, "abi_version is 1, this runtime reads version 3");
  doc = validManifest();
  doc.erase("abi_version");
  expectInvalid(doc, "missing integer \"abi_version\"");
  doc = validManifest();
  doc["level"] = "O7";
  expectInvalid(doc,
                "level 'O7' is not one of O0, O1, O2, O3, amp-bf16, amp-fp16 "
                "or te");
  doc = validManifest();
  doc.erase("level");
  expectInvalid(doc, "missing string \"level\"");
  doc = validManifest();
  doc["world_size"] = 0;
  expectInvalid(doc, "\"world_size\" must be a positive integer");
  // O3: the rank a program was compiled for lies inside its group.
  doc = validManifest();
  doc["world_size"] = 2;
  doc["rank"] = 2;
  expectInvalid(doc, "\"rank\" must be an integer in [0, world_size)");
  doc = validManifest();
  doc["rank"] = -1;
  expectInvalid(doc, "\"rank\" must be an integer in [0, world_size)");
  doc = validManifest();
  doc.erase("state");
  expectInvalid(doc, "missing array \"state\"");
  doc = validManifest();
  doc["inputs"] = json::object();
  expectInvalid(doc, "missing array \"inputs\"");
}

TEST(ManifestTest, EntryErrors) {
  auto withState = [](size_t i, const char *key, json value) {
    json doc = validManifest();
    if (value.is_null())
      doc["state"][i].erase(key);
    else
      doc["state"][i][key] = value;
    return doc;
  };
  expectInvalid(withState(0, "name", nullptr),
                "state[0]: missing or empty string \"name\"");
  expectInvalid(withState(0, "name", ""), "missing or empty string \"name\"");
  expectInvalid(withState(1, "role", "input"),
                "state[1] ('fc1.bias'): role 'input' is not one of param");
  expectInvalid(withState(1, "role", nullptr), "missing string \"role\"");
  expectInvalid(withState(1, "sharded", "yes"),
                "state[1] ('fc1.bias'): \"sharded\" must be a boolean of a "
                "state entry");
  expectInvalid(withState(0, "shape", json::array({5, -3})),
                "state[0] ('fc1.weight'): shape [5,-3] must list "
                "non-negative integers");
  expectInvalid(withState(0, "shape", "5x3"), "missing array \"shape\"");
  expectInvalid(withState(0, "dtype", "f64"),
                "dtype 'f64' is not one of f32, f16, bf16");
  expectInvalid(withState(0, "dtype", nullptr), "missing string \"dtype\"");
  expectInvalid(withState(0, "init", "uniform(0,1)"),
                "init 'uniform(0,1)' is not one of zeros, ones, from_param");
  expectInvalid(withState(0, "init", 3), "\"init\" is not a string");
  expectInvalid(withState(3, "init", "normal(0,1)"),
                "needs a floating dtype, not i64");
  expectInvalid(withState(0, "index", nullptr),
                "missing non-negative integer \"index\"");
  expectInvalid(withState(3, "dtype", "i32"),
                "the step counter must be one i64, found i32 []");

  json doc = validManifest();
  doc["inputs"][0]["dtype"] = "f16";
  expectInvalid(doc, "'lr' must be one f32, found f16 []");
  doc = validManifest();
  doc["inputs"][0]["name"] = "momentum";
  expectInvalid(doc, "unknown hyperparam");
  // The dropout gate (--msamp-dropout-training) is a hyperparam the session
  // feeds, held to the same form.
  doc = validManifest();
  doc["inputs"][0]["name"] = "training";
  doc["inputs"][0]["dtype"] = "i32";
  expectInvalid(doc, "'training' must be one f32, found i32 []");
  doc = validManifest();
  doc["inputs"][1]["role"] = "param";
  expectInvalid(doc, "inputs[1] ('x'): role 'param' is not one of input");
  doc = validManifest();
  doc["inputs"][2]["num_classes"] = 0;
  expectInvalid(doc, "\"num_classes\" must be a positive integer");
}

TEST(ManifestTest, NamesAndIndices) {
  json doc = validManifest();
  doc["inputs"][1]["name"] = "fc1.bias";
  expectInvalid(doc, "name 'fc1.bias' appears twice");
  doc = validManifest();
  doc["inputs"][1]["index"] = 0;
  expectInvalid(doc, "'x' and 'fc1.weight' both have index 0");
  doc = validManifest();
  doc["inputs"][1]["index"] = 9;
  expectInvalid(doc, "'x' has index 9, but there are only 9 arguments");
  doc = validManifest();
  doc["state"].push_back({{"name", "step2"},
                          {"role", "step"},
                          {"shape", json::array()},
                          {"dtype", "i64"},
                          {"index", 9}});
  expectInvalid(doc, "more than one state has role 'step'");
}

} // namespace
