//===- ShardPieces.cpp - O3 flat-shard pieces of a checkpoint -------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "ShardPieces.h"
#include "ElementType.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace msamp::session {

std::string formatParamShape(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

namespace {

/// The value of `name` in the "name=value;name=value" list that the
/// checkpoint's __metadata__ holds under `key`; nullopt when either is
/// missing.
std::optional<std::string>
findEntry(const std::map<std::string, std::string> &metadata, const char *key,
          const std::string &name) {
  auto it = metadata.find(key);
  if (it == metadata.end())
    return std::nullopt;
  const std::string &text = it->second;
  const std::string prefix = name + "=";
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos)
      end = text.size();
    if (text.compare(begin, prefix.size(), prefix) == 0)
      return text.substr(begin + prefix.size(), end - begin - prefix.size());
    begin = end + 1;
  }
  return std::nullopt;
}

} // namespace

bool findParamShape(const std::map<std::string, std::string> &metadata,
                    const std::string &name, std::vector<int64_t> &shape) {
  std::optional<std::string> value = findEntry(metadata, kParamShapesKey, name);
  if (!value)
    return false;
  shape.clear();
  const char *text = value->c_str();
  const size_t size = value->size();
  for (size_t at = 0; at < size;) {
    char *stop = nullptr;
    const long long d = std::strtoll(text + at, &stop, 10);
    if (stop == text + at || d < 0)
      return false;
    shape.push_back(d);
    at = stop - text;
    if (at < size && text[at] != 'x')
      return false;
    at += at < size ? 1 : 0;
  }
  return true;
}

Error findShardOffset(const std::map<std::string, std::string> &metadata,
                      const std::string &name, int64_t &offset) {
  offset = 0;
  std::optional<std::string> value =
      findEntry(metadata, kShardOffsetsKey, name);
  if (!value)
    return Error::success();
  char *stop = nullptr;
  offset = std::strtoll(value->c_str(), &stop, 10);
  if (value->empty() || *stop || offset < 0)
    return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                 std::string("its __metadata__ \"") + kShardOffsetsKey +
                     "\" has no valid offset for '" + name + "'");
  return Error::success();
}

Error ShardPieces::add(size_t i, const TensorSpec &spec, const SafeTensor &t,
                       int64_t offset) {
  const int64_t size = elementSize(spec.dtype);
  Assembly &a = assemblies[i];
  if (a.bytes.empty())
    a.bytes.resize(static_cast<size_t>(spec.numBytes));
  // A whole tensor (a param replicated at stages 1-2) starts at 0.
  const int64_t base = std::max<int64_t>(spec.shardOffset, 0);
  const int64_t first = std::max(offset, base);
  const int64_t last =
      std::min(offset + t.numElements, base + spec.numElements);
  if (first >= last)
    return Error::success();
  std::memcpy(a.bytes.data() + (first - base) * size,
              t.data + (first - offset) * size,
              static_cast<size_t>((last - first) * size));
  a.covered += last - first;
  return Error::success();
}

bool ShardPieces::complete(size_t i, const TensorSpec &spec) const {
  auto it = assemblies.find(i);
  return it != assemblies.end() && it->second.covered == spec.numElements;
}

void ShardPieces::copyTo(size_t i, void *data) const {
  const Assembly &a = assemblies.at(i);
  std::memcpy(data, a.bytes.data(), a.bytes.size());
}

} // namespace msamp::session
