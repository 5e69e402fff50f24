//===- Weights.h - Trained weights as a PyTorch state_dict ------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of "the trained weights" (docs/Interfaces.md 5
// --export-weights, msamp.state_dict in Python): a safetensors file with one
// tensor per entry of the PyTorch module's state_dict, under its name.
//
// The state_dict layout says which state tensor each entry comes from. The
// exporter (python/msamp/export.py) records it in the init file's
// __metadata__ under kStateDictLayoutKey as a JSON array of [key, source]
// pairs in state_dict order: tied weights are several keys with one source
// (named_parameters() lists a shared Parameter once), buffers are their own
// source. A session initialized from such a file keeps the layout and writes
// it into its checkpoints, so a resumed run still knows it. Without one the
// layout is every param, then every buffer, in manifest order, under its
// manifest name.
//
// Values, per entry with source S:
//   - floating state: f32, the value the session holds: the FP16 master
//     "S.master" when there is one (O3: only its owner rank has it, in its
//     checkpoint shard), else S itself, decoded and multiplied by the
//     inverse of its "<tensor>.scale" when it has one (exactly
//     msamp_session_read_param's arithmetic);
//   - integer state (i64/i32 buffers such as position ids or BatchNorm's
//     num_batches_tracked): the stored integers, in their dtype.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_WEIGHTS_H
#define MSAMP_LIB_RUNTIME_SESSION_WEIGHTS_H

#include "ElementType.h"
#include "Error.h"
#include "Manifest.h"

#include <map>
#include <string>
#include <vector>

namespace msamp::session {

/// The __metadata__ key of the state_dict layout in init files, checkpoints
/// and exported weights.
inline constexpr const char *kStateDictLayoutKey = "msamp_state_dict";

/// One state_dict entry: its PyTorch name and the state tensor it comes from.
struct LayoutEntry {
  std::string key;
  std::string source;
};

/// Parses a layout (see the file comment); `where` names it in messages.
/// Keys must be unique and sources non-empty.
Error parseStateDictLayout(const std::string &json, const std::string &where,
                           std::vector<LayoutEntry> &out);

/// The layout as JSON text (the inverse of parseStateDictLayout).
std::string formatStateDictLayout(const std::vector<LayoutEntry> &layout);

/// The default layout: params, then buffers, in manifest order.
std::vector<LayoutEntry> defaultStateDictLayout(const Manifest &manifest);

/// A state tensor wherever it lives: a session's buffer or a tensor of a
/// checkpoint file.
struct StoredTensor {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  int64_t numElements = 0;
  const void *data = nullptr;
};

/// Writes the weights of `layout` from `state` to `path` (safetensors,
/// atomically) with `metadata` plus the layout itself. An entry whose source
/// is not in `state` is an error naming both.
Error writeWeights(const std::map<std::string, StoredTensor> &state,
                   const std::vector<LayoutEntry> &layout,
                   std::map<std::string, std::string> metadata,
                   const std::string &path);

/// The weights of a checkpoint written by msamp_session_save (at O3: the
/// replicated file and every rank's shard next to it). `stepDir` (may be
/// empty) is the compiled step the checkpoint belongs to: it must match the
/// checkpoint's level and graph (or, at O3, the layout of the replicated
/// state), and supplies the default layout when the checkpoint records
/// none.
Error exportCheckpointWeights(const std::string &checkpoint,
                              const std::string &stepDir,
                              const std::string &path);

/// SHA-256 over the names, dtypes and shapes of the state an O3 group
/// replicates (every entry of `state` that is not "sharded").
std::string replicatedLayoutHash(const std::vector<TensorSpec> &state);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_WEIGHTS_H
