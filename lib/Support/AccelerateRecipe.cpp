//===- AccelerateRecipe.cpp - Accelerate config files as levels -----------===//
//
// The keys and values are Accelerate's own (accelerate/utils/dataclasses.py:
// MSAMPRecipeKwargs, TERecipeKwargs, AORecipeKwargs; the fp8_config of
// `accelerate config` and of Accelerate's documentation). Where Accelerate
// normalizes a value (backend and fp8_format upper-cased, amax_compute_algo
// lower-cased, booleans through str_to_bool) this does the same, and a key
// the file leaves out takes Accelerate's default, not msamp's: Accelerate's
// TE default amax_compute_algo is most_recent where --msamp-te's (TE's own
// DelayedScaling) is max.
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Support/AccelerateRecipe.h"
#include "MSAMP/Support/Levels.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace msamp_recipe {
namespace {

/// A located error; thrown and caught inside this file only.
struct RecipeError {
  std::string message;
};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return text;
}

std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos)
    return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

/// Accelerate's str_to_bool (utils/environment.py), which its launcher and
/// parse_flag_from_env apply to every boolean: "y yes t true on 1" and
/// "n no f false off 0", any case.
std::optional<bool> parseBool(const std::string &text) {
  static const std::set<std::string> yes = {"y", "yes", "t", "true", "on", "1"};
  static const std::set<std::string> no = {"n", "no", "f", "false", "off", "0"};
  std::string word = lower(trim(text));
  if (yes.count(word))
    return true;
  if (no.count(word))
    return false;
  return std::nullopt;
}

const char *kindOf(const YAML::Node &node) {
  switch (node.Type()) {
  case YAML::NodeType::Map:
    return "a mapping";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Null:
    return "nothing";
  default:
    return "a scalar";
  }
}

/// The fp8_config keys, by the backend that reads them.
enum class Backend { MSAMP, TE, AO };

struct KeyInfo {
  const char *name;
  Backend backend;
  const char *alias; // the spelling `accelerate config` writes, or nullptr
};

// Accelerate's fp8_config keys besides `backend`. `accelerate config`
// writes three TE/MSAMP keys under other names than the ones the kwargs
// classes and the documentation use (its launcher then exports
// ACCELERATE_FP8_AMAX_HISTORY_LENGTH where TERecipeKwargs reads
// ACCELERATE_FP8_AMAX_HISTORY_LEN): files as users have them carry either.
const KeyInfo kKeys[] = {
    {"opt_level", Backend::MSAMP, "optimization_level"},
    {"margin", Backend::TE, nullptr},
    {"interval", Backend::TE, nullptr},
    {"fp8_format", Backend::TE, nullptr},
    {"amax_history_len", Backend::TE, "amax_history_length"},
    {"amax_compute_algo", Backend::TE, "amax_compute_algorithm"},
    {"override_linear_precision", Backend::TE, nullptr},
    {"use_autocast_during_eval", Backend::TE, nullptr},
    {"use_mxfp8_block_scaling", Backend::TE, nullptr},
    {"pad_inner_dim", Backend::AO, nullptr},
    {"enable_fsdp_float8_all_gather", Backend::AO, nullptr},
};

const char *backendName(Backend backend) {
  switch (backend) {
  case Backend::MSAMP:
    return "MSAMP";
  case Backend::TE:
    return "TE";
  case Backend::AO:
    return "AO";
  }
  return "";
}

class Mapper {
public:
  Mapper(const std::string &file, AccelerateRecipe &recipe)
      : file(file), recipe(recipe) {}

  void mapRoot(const YAML::Node &root);

private:
  std::string at(const YAML::Node &node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null())
      return file;
    return file + ":" + std::to_string(mark.line + 1) + ":" +
           std::to_string(mark.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node &node, const std::string &what) {
    throw RecipeError{at(node) + ": error: " + what};
  }
  void note(const YAML::Node &node, const std::string &what) {
    recipe.notes.push_back(at(node) + ": note: " + what);
  }
  void option(const std::string &text) {
    if (!recipe.pipelineOptions.empty())
      recipe.pipelineOptions += " ";
    recipe.pipelineOptions += text;
  }

  std::string scalar(const std::string &key, const YAML::Node &value) {
    if (!value.IsScalar())
      fail(value, key + ": expected a value, got " + kindOf(value));
    return value.Scalar();
  }
  int64_t integer(const std::string &key, const YAML::Node &value,
                  int64_t min) {
    std::string text = scalar(key, value);
    int64_t number = 0;
    if (!YAML::convert<int64_t>::decode(value, number) || number < min)
      fail(value, key + ": expected an integer >= " + std::to_string(min) +
                      ", got '" + text + "'");
    return number;
  }
  bool boolean(const std::string &key, const YAML::Node &value) {
    std::string text = scalar(key, value);
    std::optional<bool> flag = parseBool(text);
    if (!flag)
      fail(value, key + ": expected true or false, got '" + text + "'");
    return *flag;
  }

  /// The map entries of `node` by key, every key once.
  std::vector<std::pair<YAML::Node, YAML::Node>>
  entries(const std::string &what, const YAML::Node &node) {
    std::vector<std::pair<YAML::Node, YAML::Node>> result;
    if (node.IsNull())
      return result;
    if (!node.IsMap())
      fail(node, what + ": expected a mapping of keys to values, got " +
                     kindOf(node));
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar())
        fail(it->first, what + ": expected a key, got " + kindOf(it->first));
      if (!seen.insert(it->first.Scalar()).second)
        fail(it->first, (what.empty() ? "" : what + ".") + it->first.Scalar() +
                            " is given twice");
      result.emplace_back(it->first, it->second);
    }
    return result;
  }

  void mapFP8(const YAML::Node &key, const YAML::Node &config,
              const std::string &mode);
  void mapMSAMP(const std::map<std::string, YAML::Node> &values);
  void mapTE(const std::map<std::string, YAML::Node> &values);
  void mapAO(const std::map<std::string, YAML::Node> &values);

  const std::string &file;
  AccelerateRecipe &recipe;
};

void Mapper::mapRoot(const YAML::Node &root) {
  if (!root.IsMap())
    fail(root, std::string("expected an Accelerate config (a mapping with "
                           "mixed_precision and fp8_config), got ") +
                   kindOf(root));
  std::optional<std::pair<YAML::Node, YAML::Node>> precision, fp8;
  std::vector<YAML::Node> ignored;
  for (auto &[key, value] : entries("", root)) {
    if (key.Scalar() == "mixed_precision")
      precision.emplace(key, value);
    else if (key.Scalar() == "fp8_config")
      fp8.emplace(key, value);
    else
      ignored.push_back(key);
  }
  if (!ignored.empty()) {
    std::string names;
    for (const YAML::Node &key : ignored)
      names += (names.empty() ? "" : ", ") + key.Scalar();
    note(ignored.front(), "ignored " + names +
                              ": msamp reads mixed_precision and fp8_config "
                              "(processes come from the launcher, mpirun)");
  }
  if (!precision)
    fail(root, "mixed_precision is missing: Accelerate would train in full "
               "precision ('no') and not read fp8_config; set it to fp8, "
               "bf16, fp16 or no");
  const YAML::Node &value = precision->second;
  // Accelerate lower-cases it (PrecisionType(mixed_precision.lower())).
  std::string mode = lower(scalar("mixed_precision", value));
  if (mode == "no") {
    recipe.level = "O0";
    recipe.mapping.push_back("mixed_precision: no -> level O0 (f32)");
  } else if (mode == "bf16" || mode == "fp16") {
    recipe.level = "amp-" + mode;
    recipe.mapping.push_back("mixed_precision: " + mode + " -> level " +
                             recipe.level + " (autocast GEMMs" +
                             (mode == "fp16" ? ", GradScaler's dynamic loss "
                                               "scale)"
                                             : ")"));
  } else if (mode != "fp8") {
    fail(value,
         "mixed_precision: expected no, fp16, bf16 or fp8, got '" + mode + "'");
  }
  if (mode == "fp8" && !fp8)
    fail(precision->first,
         "mixed_precision: fp8 needs fp8_config with a backend (Accelerate "
         "would pick the first of torchao, Transformer Engine and MS-AMP that "
         "is installed)");
  if (fp8)
    mapFP8(fp8->first, fp8->second, mode);
}

void Mapper::mapFP8(const YAML::Node &key, const YAML::Node &config,
                    const std::string &mode) {
  // Every key is checked even when mixed_precision does not read them: a
  // misspelling is an error wherever it is.
  std::optional<Backend> backend;
  std::map<std::string, YAML::Node> values; // by the kwargs' spelling
  std::vector<std::pair<YAML::Node, Backend>> present;
  for (auto &[name, value] : entries("fp8_config", config)) {
    const std::string &text = name.Scalar();
    if (text == "backend") {
      std::string spelled = upper(scalar("fp8_config.backend", value));
      if (spelled == "MSAMP")
        backend = Backend::MSAMP;
      else if (spelled == "TE")
        backend = Backend::TE;
      else if (spelled == "AO")
        backend = Backend::AO;
      else
        fail(value, "fp8_config.backend: expected MSAMP, TE or AO, got '" +
                        value.Scalar() + "'");
      continue;
    }
    const KeyInfo *info = nullptr;
    for (const KeyInfo &candidate : kKeys)
      if (text == candidate.name ||
          (candidate.alias && text == candidate.alias))
        info = &candidate;
    if (!info) {
      std::string known = "backend";
      for (const KeyInfo &candidate : kKeys)
        known += std::string(", ") + candidate.name;
      fail(name, "unknown key fp8_config." + text +
                     " (Accelerate's keys: " + known + ")");
    }
    if (values.count(info->name))
      fail(name, "fp8_config." + text + " and fp8_config." +
                     (text == info->name ? info->alias : info->name) +
                     " are the same key; give one");
    if (text != info->name)
      note(name, "fp8_config." + text +
                     " (as `accelerate config` writes it) "
                     "read as " +
                     info->name);
    values[info->name] = value;
    present.emplace_back(name, info->backend);
  }
  if (mode != "fp8") {
    note(key,
         "fp8_config is not used: mixed_precision is " + mode + ", not fp8");
    return;
  }
  if (!backend)
    fail(config.IsNull() ? key : config,
         "fp8_config.backend is missing: name MSAMP, TE or AO (Accelerate "
         "would pick the first of them that is installed)");
  for (auto &[name, owner] : present)
    if (owner != *backend)
      note(name, "fp8_config." + name.Scalar() + " is a " + backendName(owner) +
                     " key: backend " + backendName(*backend) +
                     " ignores it, as in Accelerate");
  switch (*backend) {
  case Backend::MSAMP:
    mapMSAMP(values);
    break;
  case Backend::TE:
    mapTE(values);
    break;
  case Backend::AO:
    mapAO(values);
    break;
  }
}

void Mapper::mapMSAMP(const std::map<std::string, YAML::Node> &values) {
  auto it = values.find("opt_level");
  // MSAMPRecipeKwargs' default.
  std::string level = "O2";
  if (it != values.end()) {
    // Case-sensitive: MSAMPRecipeKwargs compares with "O1" and "O2".
    level = scalar("fp8_config.opt_level", it->second);
    if (level == "O3")
      fail(it->second,
           "fp8_config.opt_level: O3 is not an Accelerate level "
           "(MSAMPRecipeKwargs takes O1 or O2; MS-AMP's O3 is configured "
           "through DeepSpeed's ZeRO config): use --opt-level O3");
    if (level != "O1" && level != "O2")
      fail(it->second, "fp8_config.opt_level: expected O1 or O2, got '" +
                           it->second.Scalar() + "'");
  }
  recipe.level = level;
  recipe.mapping.push_back("fp8_config.backend: MSAMP -> MS-AMP's levels");
  recipe.mapping.push_back("fp8_config.opt_level: " +
                           (it == values.end()
                                ? "(not set: Accelerate's default O2)"
                                : it->second.Scalar()) +
                           " -> level " + level);
}

void Mapper::mapTE(const std::map<std::string, YAML::Node> &values) {
  recipe.level = "te";
  recipe.mapping.push_back(
      "fp8_config.backend: TE -> level te (Transformer Engine's "
      "DelayedScaling: FP8 GEMMs, f32 weights, gradients and Adam states)");
  auto find = [&](const char *name) -> const YAML::Node * {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
  // One line per knob: its value (or Accelerate's default) -> the option.
  auto knob = [&](const char *name, const std::string &value, bool given,
                  const std::string &optionText) {
    recipe.mapping.push_back(
        std::string("fp8_config.") + name + ": " +
        (given ? value : "(not set: Accelerate's default " + value + ")") +
        " -> " + optionText);
    option(optionText);
  };

  std::string format = "HYBRID";
  if (const YAML::Node *node = find("fp8_format")) {
    format = upper(scalar("fp8_config.fp8_format", *node));
    if (format == "E5M2")
      fail(*node, "fp8_config.fp8_format: E5M2 is not supported: msamp runs "
                  "HYBRID (E4M3 forward operands, E5M2 output gradients) or "
                  "E4M3 everywhere, not E5M2 forward operands");
    if (format != "HYBRID" && format != "E4M3")
      fail(*node, "fp8_config.fp8_format: expected HYBRID or E4M3, got '" +
                      node->Scalar() + "'");
  }
  knob("fp8_format", format, find("fp8_format"), "fp8-format=" + lower(format));

  int64_t history = 1024;
  if (const YAML::Node *node = find("amax_history_len"))
    history = integer("fp8_config.amax_history_len", *node, 1);
  knob("amax_history_len", std::to_string(history), find("amax_history_len"),
       "amax-history-len=" + std::to_string(history));

  std::string algo = "most_recent";
  if (const YAML::Node *node = find("amax_compute_algo")) {
    algo = lower(scalar("fp8_config.amax_compute_algo", *node));
    if (algo != "max" && algo != "most_recent")
      fail(*node,
           "fp8_config.amax_compute_algo: expected max or most_recent, got '" +
               node->Scalar() + "'");
  }
  knob("amax_compute_algo", algo, find("amax_compute_algo"),
       "amax-compute-algo=" + algo);

  int64_t margin = 0;
  if (const YAML::Node *node = find("margin"))
    margin = integer("fp8_config.margin", *node, 0);
  knob("margin", std::to_string(margin), find("margin"),
       "margin=" + std::to_string(margin));

  int64_t interval = 1;
  if (const YAML::Node *node = find("interval"))
    interval = integer("fp8_config.interval", *node, 1);
  knob("interval", std::to_string(interval), find("interval"),
       "interval=" + std::to_string(interval));

  // (fprop, dgrad, wgrad): a YAML list, or the string "(false, false,
  // false)" of Accelerate's documentation and "false,false,false" of its
  // --fp8_override_linear_precision flag.
  bool high[3] = {false, false, false};
  if (const YAML::Node *node = find("override_linear_precision")) {
    const char *key = "fp8_config.override_linear_precision";
    std::vector<std::string> items;
    if (node->IsSequence()) {
      for (const YAML::Node &item : *node)
        items.push_back(scalar(key, item));
    } else {
      std::string text = trim(scalar(key, *node));
      if (text.size() >= 2 && ((text.front() == '(' && text.back() == ')') ||
                               (text.front() == '[' && text.back() == ']')))
        text = text.substr(1, text.size() - 2);
      std::stringstream stream(text);
      for (std::string item; std::getline(stream, item, ',');)
        items.push_back(item);
    }
    if (items.size() != 3)
      fail(*node, std::string(key) +
                      ": expected three booleans (fprop, dgrad, wgrad), got " +
                      std::to_string(items.size()) + " value(s)");
    for (int i = 0; i < 3; ++i) {
      std::optional<bool> flag = parseBool(items[i]);
      if (!flag)
        fail(*node, std::string(key) + ": expected true or false, got '" +
                        trim(items[i]) + "'");
      high[i] = *flag;
    }
  }
  static const char *const gemms[] = {"fprop", "dgrad", "wgrad"};
  std::string triple, options;
  for (int i = 0; i < 3; ++i) {
    triple += std::string(i ? ", " : "(") + (high[i] ? "true" : "false");
    if (high[i]) {
      std::string text = std::string(gemms[i]) + "-hp=true";
      options += (options.empty() ? "" : " ") + text;
      option(text);
    }
  }
  triple += ")";
  recipe.mapping.push_back(
      "fp8_config.override_linear_precision: " +
      (find("override_linear_precision")
           ? triple
           : "(not set: Accelerate's default " + triple + ")") +
      " -> " +
      (options.empty() ? "fprop, dgrad and wgrad GEMMs in FP8" : options));

  if (const YAML::Node *node = find("use_autocast_during_eval"))
    note(*node, std::string("fp8_config.use_autocast_during_eval: ") +
                    (boolean("fp8_config.use_autocast_during_eval", *node)
                         ? "true is what msamp-run --eval does"
                         : "false is not what msamp-run --eval does") +
                    " (it evaluates through the compiled step's FP8 GEMMs); "
                    "an f32 evaluation runs the weights it exports "
                    "(--export-weights) at O0");
  if (const YAML::Node *node = find("use_mxfp8_block_scaling")) {
    if (boolean("fp8_config.use_mxfp8_block_scaling", *node))
      fail(*node, "fp8_config.use_mxfp8_block_scaling: true is not "
                  "supported: msamp scales per tensor, not in MXFP8's "
                  "32-element blocks");
    note(*node, "fp8_config.use_mxfp8_block_scaling: false: per-tensor "
                "scaling, msamp's only kind");
  }
}

void Mapper::mapAO(const std::map<std::string, YAML::Node> &values) {
  // AORecipeKwargs builds torchao's default Float8LinearConfig: dynamic
  // (current) per-tensor scales, exact (round_scales_to_power_of_2 off),
  // E4M3 inputs and weights, E5M2 output gradients; the model's own f32
  // weights, gradients and optimizer: the te level's state with current
  // scaling. Accelerate converts the Linear layers its default filter
  // (filter_first_and_last_linear_layers) passes.
  recipe.level = "te";
  recipe.mapping.push_back(
      "fp8_config.backend: AO -> level te, fp8-format=hybrid scaling=current "
      "(torchao's Float8Linear defaults: current per-tensor scaling with "
      "exact scales, E4M3 forward operands, E5M2 output gradients; f32 "
      "weights, gradients and Adam states)");
  option("fp8-format=hybrid scaling=current");
  recipe.mapping.push_back(
      "Accelerate's filter_first_and_last_linear_layers -> keep-first-last="
      "true dim-multiple=16 (the first and last Linear layers, and those "
      "with a dimension that is not a multiple of 16, stay f32)");
  option("keep-first-last=true dim-multiple=16");
  if (auto it = values.find("pad_inner_dim"); it != values.end())
    note(it->second,
         std::string("fp8_config.pad_inner_dim: ") +
             (boolean("fp8_config.pad_inner_dim", it->second) ? "true"
                                                              : "false") +
             " changes nothing here: msamp's FP8 GEMMs take any inner "
             "dimension (torch._scaled_mm needs multiples of 16), and "
             "Accelerate's filter keeps unaligned layers in f32 either way");
  if (auto it = values.find("enable_fsdp_float8_all_gather");
      it != values.end())
    note(it->second,
         std::string("fp8_config.enable_fsdp_float8_all_gather: ") +
             (boolean("fp8_config.enable_fsdp_float8_all_gather", it->second)
                  ? "true"
                  : "false") +
             " changes nothing here: msamp has no FSDP all-gather of "
             "weights (data-parallel ranks hold all of them; O3 shards "
             "MS-AMP's state instead)");
}

} // namespace

bool parseAccelerateRecipe(const std::string &text, const std::string &file,
                           AccelerateRecipe &recipe, std::string &error) {
  recipe = AccelerateRecipe();
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) {
      error = file + ": error: empty; expected an Accelerate config with "
                     "mixed_precision and fp8_config";
      return false;
    }
    Mapper(file, recipe).mapRoot(root);
    return true;
  } catch (const RecipeError &e) {
    error = e.message;
  } catch (const YAML::Exception &e) {
    // yaml-cpp's what() repeats the 1-based position; state it our way.
    error = file;
    if (!e.mark.is_null())
      error += ":" + std::to_string(e.mark.line + 1) + ":" +
               std::to_string(e.mark.column + 1);
    error += ": error: not valid YAML: " + e.msg;
  }
  recipe = AccelerateRecipe();
  return false;
}

bool loadAccelerateRecipe(const std::string &file, AccelerateRecipe &recipe,
                          std::string &error) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  if (in)
    text << in.rdbuf();
  if (!in || in.bad()) {
    error = file + ": error: cannot read the recipe file";
    return false;
  }
  return parseAccelerateRecipe(text.str(), file, recipe, error);
}

bool mergeRecipe(const AccelerateRecipe &recipe, const std::string &file,
                 std::optional<std::string> &optLevel,
                 std::string &pipelineOptions, std::string &error) {
  if (optLevel && *optLevel != recipe.level) {
    error = "--opt-level " + *optLevel + " disagrees with --recipe " + file +
            ", which asks for level " + recipe.level;
    return false;
  }
  const std::string &ours = recipe.pipelineOptions;
  std::string_view shared = msamp_levels::sharedOption(ours, pipelineOptions);
  if (!shared.empty()) {
    error = "--pipeline-options sets '" +
            std::string(shared.substr(0, shared.find('='))) +
            "', which --recipe " + file + " sets (" + std::string(shared) + ")";
    return false;
  }
  optLevel = recipe.level;
  if (!ours.empty())
    pipelineOptions =
        ours + (pipelineOptions.empty() ? "" : " " + pipelineOptions);
  return true;
}

std::string describeRecipe(const AccelerateRecipe &recipe,
                           const std::string &file) {
  std::string text = "recipe " + file + ": level " + recipe.level;
  if (!recipe.pipelineOptions.empty())
    text += " {" + recipe.pipelineOptions + "}";
  text += "\n";
  for (const std::string &line : recipe.mapping)
    text += "  " + line + "\n";
  for (const std::string &line : recipe.notes)
    text += line + "\n";
  return text;
}

} // namespace msamp_recipe
