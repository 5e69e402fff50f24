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

namespace msamp::session {

std::string formatParamShape(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t d : shape)
    text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

bool findParamShape(const std::map<std::string, std::string> &metadata,
                    const std::string &name, std::vector<int64_t> &shape) {
  auto it = metadata.find(kParamShapesKey);
  if (it == metadata.end())
    return false;
  const std::string &text = it->second;
  const std::string key = name + "=";
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos)
      end = text.size();
    if (text.compare(begin, key.size(), key) == 0) {
      shape.clear();
      for (size_t at = begin + key.size(); at < end;) {
        char *stop = nullptr;
        const long long d = std::strtoll(text.c_str() + at, &stop, 10);
        if (stop == text.c_str() + at || d < 0)
          return false;
        shape.push_back(d);
        at = stop - text.c_str();
        if (at < end && text[at] != 'x')
          return false;
        at += at < end ? 1 : 0;
      }
      return true;
    }
    begin = end + 1;
  }
  return false;
}

Error findShardOffset(const std::map<std::string, std::string> &metadata,
                      const std::string &name, int64_t &offset) {
  offset = 0;
  auto it = metadata.find(kShardOffsetsKey);
  if (it == metadata.end())
    return Error::success();
  const std::string &text = it->second;
  const std::string key = name + "=";
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos)
      end = text.size();
    if (text.compare(begin, key.size(), key) == 0) {
      const std::string value =
          text.substr(begin + key.size(), end - begin - key.size());
      char *stop = nullptr;
      offset = std::strtoll(value.c_str(), &stop, 10);
      if (value.empty() || *stop || offset < 0)
        return Error(MSAMP_ERROR_INCOMPATIBLE_CHECKPOINT,
                     std::string("its __metadata__ \"") + kShardOffsetsKey +
                         "\" has no valid offset for '" + name + "'");
      return Error::success();
    }
    begin = end + 1;
  }
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
