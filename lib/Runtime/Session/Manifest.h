//===- Manifest.h - The manifest of a compiled train step -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// manifest.json as msamp-compile writes it (lib/Transforms/WriteManifest.cpp
// documents the format; docs/Interfaces.md 4 is normative): what the session
// allocates, initializes, checkpoints and binds, argument by argument.
//
// The parser checks everything the session relies on, so that a bad manifest
// is an error message naming the entry and the field, never a crash later:
// types of every field, known roles and dtypes, static non-negative shapes,
// parsable "init" values, unique names, and argument indices that cover
// 0..N-1 exactly once over "state" and "inputs", and well-formed "metric"
// outputs. Unknown keys are ignored (a newer compiler may add some); a
// different "abi_version" is refused.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_MANIFEST_H
#define MSAMP_LIB_RUNTIME_SESSION_MANIFEST_H

#include "ElementType.h"
#include "Error.h"
#include "MSAMP/Runtime/msamp_session.h"

#include <optional>
#include <string>
#include <vector>

namespace msamp::session {

/// The manifest format this runtime reads (msamp_session.h).
constexpr int64_t kManifestABIVersion = MSAMP_MANIFEST_VERSION;

/// How a state tensor starts (the manifest's "init").
struct InitSpec {
  // Seed: the run's seed as one i64 (the rng_state of dropout).
  enum Kind { Zeros, Ones, Normal, FromParam, Seed } kind = Zeros;
  double mean = 0.0, stddev = 0.0; // Normal
};

/// One argument of @train_step.
struct TensorSpec {
  std::string name;
  std::string role;
  std::vector<int64_t> shape;
  ElementType dtype = ElementType::F32;
  InitSpec init;        // state only
  std::string initText; // as written, for messages
  int64_t index = 0;    // argument index
  int64_t numElements = 1;
  int64_t numBytes = 0;
  /// Optional "num_classes" of an integer target: the range [0, C) of
  /// synthetic targets. 0 when absent.
  int64_t numClasses = 0;
  /// O3: state only this rank holds ("sharded": true), saved in its shard
  /// of a checkpoint.
  bool sharded = false;
  /// O3 flat shards ("shard_offset"): a sharded piece of a param's
  /// flattened state starting at this element of the param; -1 for a whole
  /// tensor.
  int64_t shardOffset = -1;
  /// ZeRO stage 3 ("param_shape"): a param stored as this rank's piece
  /// (`shape` is the piece's) of a param of this shape; -1 elements when
  /// absent (the tensor is whole).
  std::vector<int64_t> paramShape;
  int64_t paramElements = -1;
  /// The shape and elements of the whole tensor: the param of a piece.
  const std::vector<int64_t> &wholeShape() const {
    return paramElements >= 0 ? paramShape : shape;
  }
  int64_t wholeElements() const {
    return paramElements >= 0 ? paramElements : numElements;
  }
  /// Whether this is a param of which the rank holds a piece (stage 3).
  bool isParamPiece() const { return role == "param" && shardOffset >= 0; }
};

struct Manifest {
  int64_t abiVersion = 0;
  std::string level;
  int64_t worldSize = 1;
  /// O3: the rank the step was compiled for; -1 for a replicated step.
  int64_t rank = -1;
  std::vector<TensorSpec> state;  // manifest order (argument order)
  std::vector<TensorSpec> inputs; // manifest order
  /// The "metric" entries of "outputs" (--msamp-grad-stats: grad_norm,
  /// nonfinite), in manifest order: each one f32 the step writes into an
  /// output argument after the loss. Empty for steps compiled without them.
  /// `index` is the result index of @train_step (informational).
  std::vector<TensorSpec> metrics;
  /// Arguments of @train_step, state + inputs (the loss and metric outputs
  /// not counted).
  int64_t numArgs = 0;
  /// Optional "optimizer": {"lr": X}; absent in ABI v1 manifests so far.
  std::optional<double> lr;
  /// Optional "object": {"file": "train_step.so", "bytes": N, "sha256":
  /// HEX}, written by msamp-compile after linking; checked before loading.
  struct Object {
    int64_t bytes = 0;
    std::string sha256;
  };
  std::optional<Object> object;
  /// Optional "host_cpu": {"name": CPU, "features": [...]}: the CPU the
  /// step's host code was generated for and which of HostCpuFeatures.h's
  /// features it has; checked against this machine before loading.
  struct HostCpu {
    std::string name;
    std::vector<std::string> features;
  };
  std::optional<HostCpu> hostCpu;
  /// Optional "gpu_arena": {"device_bytes": N, "host_bytes": M}: a step
  /// compiled with --target cuda views its buffers in a device arena of N
  /// bytes and a pinned host arena of M (msamp-gpu-static-arena); the
  /// session counts N in its memory check and reserves both at open.
  struct GpuArena {
    int64_t deviceBytes = 0;
    int64_t hostBytes = 0;
  };
  std::optional<GpuArena> gpuArena;
};

/// Parses "normal(0,0.02)", "zeros", "ones", "from_param".
std::optional<InitSpec> parseInit(const std::string &text);

/// Parses and validates manifest JSON text; `source` names it in messages.
Error parseManifest(const std::string &text, const std::string &source,
                    Manifest &out);

/// Reads and parses a manifest file.
Error loadManifest(const std::string &path, Manifest &out);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_MANIFEST_H
