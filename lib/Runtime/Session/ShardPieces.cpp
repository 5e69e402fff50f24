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
  const int64_t first = std::max(offset, spec.shardOffset);
  const int64_t last =
      std::min(offset + t.numElements, spec.shardOffset + spec.numElements);
  if (first >= last)
    return Error::success();
  std::memcpy(a.bytes.data() + (first - spec.shardOffset) * size,
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
