//===- ShardPieces.h - O3 flat-shard pieces of a checkpoint -----*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// Resharding an O3 checkpoint of even flat shards (issue 20): each rank's
// shard holds its pieces of the params' flattened masters and moments, and
// the shard's __metadata__ "shard_offsets" ("name=offset;...") says where
// each piece starts in its param. A rank of a group of another size cuts its
// own pieces (TensorSpec::shardOffset) from every writer's piece of the same
// name that overlaps them; together they must cover it exactly.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_SHARDPIECES_H
#define MSAMP_LIB_RUNTIME_SESSION_SHARDPIECES_H

#include "Error.h"
#include "Manifest.h"
#include "SafeTensors.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace msamp::session {

/// The shard __metadata__ key of the pieces' offsets.
inline constexpr const char *kShardOffsetsKey = "shard_offsets";

/// ZeRO stage 3: the shard __metadata__ key of the params' shapes of the
/// param pieces ("name=2x3;..."), and the key ("1") of a checkpoint whose
/// params are in the shards (a group of stage 1-2 assembles them from the
/// pieces; one of stage 3 cuts its pieces from a stage 1-2 param).
inline constexpr const char *kParamShapesKey = "param_shapes";
inline constexpr const char *kWeightsShardedKey = "weights_sharded";

/// `shape` as "2x3" ("" for a scalar).
std::string formatParamShape(const std::vector<int64_t> &shape);

/// The shape recorded for `name` in a shard's "param_shapes"; false when
/// there is none.
bool findParamShape(const std::map<std::string, std::string> &metadata,
                    const std::string &name, std::vector<int64_t> &shape);

/// The offset recorded for `name` in a shard's metadata; a tensor without
/// one is whole (offset 0).
Error findShardOffset(const std::map<std::string, std::string> &metadata,
                      const std::string &name, int64_t &offset);

/// The pieces this rank assembles, per state index.
class ShardPieces {
public:
  /// Copies the overlap of the writer's piece `t` (starting at `offset` of
  /// the param) with the piece `spec` (state index `i`) describes.
  Error add(size_t i, const TensorSpec &spec, const SafeTensor &t,
            int64_t offset);
  /// Whether the pieces added for `i` cover all of `spec`'s elements, each
  /// once.
  bool complete(size_t i, const TensorSpec &spec) const;
  /// Writes the assembled bytes of `i`.
  void copyTo(size_t i, void *data) const;

private:
  struct Assembly {
    std::vector<uint8_t> bytes;
    int64_t covered = 0;
  };
  std::map<size_t, Assembly> assemblies;
};

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_SHARDPIECES_H
