//===- Session.h - A loaded train step and the state it updates -*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The C++ object behind msamp_session (msamp_session.h documents the
// behaviour). It owns the manifest, the dlopened train_step.so, one buffer
// per argument, the loss and metric outputs, the descriptor table passed to
// msamp_train_step_packed, an optional data file, and the copy of the state
// (allocated at open) that every refused step and --eval restore.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_SESSION_H
#define MSAMP_LIB_RUNTIME_SESSION_SESSION_H

#include "Error.h"
#include "Manifest.h"
#include "SafeTensors.h"
#include "State.h"
#include "StepGraph.h"
#include "Weights.h"

#include <memory>
#include <string>
#include <vector>

namespace msamp::session {

/// FILE.ext -> FILE.rank<r>.ext: rank r's shard of an O3 checkpoint
/// (docs/Interfaces.md 5).
std::string shardPath(const std::string &path, int64_t rank);

/// Reads `dir`/train_step.mlir into `text` and its graph hash,
/// "sha256:<hex>", into `hash` (what checkpoints record as "graph_hash").
Error readGraph(const std::string &dir, std::string &text, std::string &hash);

class Session {
public:
  /// `testDevice` is for unit tests only: a step compiled for the CPU with
  /// its buffers in that device's memory (BufferDevice.h), which must
  /// outlive the session.
  static Error open(const std::string &dir, std::unique_ptr<Session> &out,
                    BufferDevice *testDevice = nullptr);
  ~Session();

  const Manifest &manifest() const { return manifest_; }
  const std::string &graphHash() const { return graphHash_; }
  double defaultLR() const { return defaultLR_; }

  const std::vector<std::unique_ptr<TensorBuffer>> &state() const {
    return state_;
  }
  const std::vector<std::unique_ptr<TensorBuffer>> &inputs() const {
    return inputs_;
  }
  TensorBuffer *findState(const std::string &name) const;
  TensorBuffer *findInput(const std::string &name) const;

  Error initialize(uint64_t seed, const std::string *initFile,
                   int64_t *numFromFile);
  /// Writes the checkpoint; at O3 this rank's shard (shardPath) and, on
  /// rank 0, the replicated state at `path`.
  Error save(const std::string &path) const;
  Error load(const std::string &path);
  /// Writes the trained weights as a PyTorch state_dict (Weights.h).
  Error exportWeights(const std::string &path) const;
  /// The state_dict layout from the init file or checkpoint the state came
  /// from; empty when it recorded none.
  const std::vector<LayoutEntry> &stateDictLayout() const {
    return stateDictLayout_;
  }

  Error setInput(const std::string &name, const void *data, int64_t numBytes);
  Error openData(const std::string &path, int64_t &numBatches,
                 int64_t &numIgnored);
  Error selectBatch(int64_t k);
  Error syntheticBatch(uint64_t seed, int64_t step, int64_t numClasses);

  Error step(float lr, uint32_t flags, float &loss);
  /// Whether a step compiled for CUDA runs as a CUDA graph (StepGraph.h);
  /// the default is $MSAMP_CUDA_GRAPHS, else on. Ignored by a CPU step.
  void setCudaGraphs(bool on);
  /// The graph's state: mode, replays and why it is off.
  const StepGraph &cudaGraph() const { return graph_; }
  /// Ranks of the run: the manifest's for a step compiled for a fixed group
  /// (O3), else the runtime collective's (a replicated step runs on any).
  int64_t worldSize() const;
  /// SHA-256 (hex) over every state tensor's name and bytes; with
  /// `replicatedOnly`, over those that data parallelism keeps identical.
  std::string stateChecksum(bool replicatedOnly) const;
  /// State that differs between data-parallel ranks by design: buffers and
  /// the delayed-scaling state of activations and output gradients.
  bool isRankLocal(const TensorSpec &spec) const;
  /// O3: hash of the names, dtypes and shapes of the non-sharded state.
  std::string replicatedLayoutHash() const;
  int64_t completedSteps() const;
  int64_t numSkipped() const { return numSkipped_; }
  /// Steps skipped in a row up to the last one (0 after a committed step),
  /// and why the last skipped step was skipped.
  int64_t consecutiveSkipped() const { return consecutiveSkipped_; }
  const std::string &lastSkipReason() const { return lastSkipReason_; }
  /// "'NAME' holds inf at element I" for the first tensor of `buffers`
  /// (with `dataOnly`, of the inputs and targets only) that holds a NaN or
  /// an infinity, else "".
  std::string
  findNonFiniteTensor(const std::vector<std::unique_ptr<TensorBuffer>> &buffers,
                      bool dataOnly) const;

  /// The clipping threshold fed as "max_grad_norm" to every following step
  /// (<= 0: no clipping). A positive value needs a step that has the input.
  Error setMaxGradNorm(double maxNorm);
  /// The metric outputs (grad_norm, nonfinite, ...), manifest order; each
  /// holds the value of the last step (0 before the first).
  const std::vector<std::unique_ptr<TensorBuffer>> &metrics() const {
    return metrics_;
  }
  Error metricValue(const std::string &name, float &value) const;
  /// The loss output the step writes (its host copy holds the last loss).
  const TensorBuffer &lossBuffer() const { return *loss_; }

  Error readParam(const std::string &name, float *out, int64_t count) const;
  /// Copies the bytes of state tensor or input `name` out (`numBytes`, its
  /// size) or in (msamp_session_read_tensor/write_tensor): from or to the
  /// device for a GPU step, through the buffer's host copy.
  Error readTensor(const std::string &name, void *out, int64_t numBytes) const;
  Error writeTensor(const std::string &name, const void *data,
                    int64_t numBytes);
  /// `buffer`'s host copy made current (msamp_tensor_info's data): read
  /// from the device unless it is an input, whose host copy is the source.
  Error refreshHostCopy(const TensorBuffer &buffer) const;

  /// Bytes of the buffers the session binds to the step (state, inputs,
  /// loss, metrics): what the step's arguments occupy.
  int64_t boundBytes() const;
  /// The most bytes the step's own allocations held at once, over every
  /// step run so far (msamp_rt_step_peak_bytes around each call).
  int64_t stepPeakBytes() const { return stepPeakBytes_; }

private:
  Session() = default;
  Error setCompletedSteps(int64_t steps);
  Error snapshotState();
  /// A non-finite step that ran: the state restored from the snapshot,
  /// then skipped (counted, the counter advanced) when `skip`, else the
  /// MSAMP_ERROR_NONFINITE `message`.
  Error finishNonFinite(bool skip, int64_t before, const std::string &message);
  /// Counts step `before + 1` as skipped for `message`, state untouched:
  /// what finishNonFinite does after undoing the step, and all a step
  /// refused before it ran needs.
  Error skipStep(int64_t before, const std::string &message);
  /// Reads the state_dict layout from a file's __metadata__ (none: empty)
  /// and checks that every source is a param or buffer of this step.
  Error readStateDictLayout(const SafeTensorsReader &file,
                            std::vector<LayoutEntry> &layout) const;
  Error restoreState();
  /// snapshotState (toSnapshot) and restoreState: on the device for a GPU
  /// step's state, else memcpy.
  Error copyState(bool toSnapshot);

  std::string dir_;
  Manifest manifest_;
  std::string graphHash_;
  double defaultLR_ = 1e-3;
  void (*packed_)(void **) = nullptr;
  int64_t stepPeakBytes_ = 0;
  /// msamp_train_step_check_inputs: the step's index-input checks alone.
  int32_t (*checkInputs_)(void **) = nullptr;

  std::vector<std::unique_ptr<TensorBuffer>> state_;
  std::vector<std::unique_ptr<TensorBuffer>> inputs_;
  std::unique_ptr<TensorBuffer> loss_;
  std::vector<std::unique_ptr<TensorBuffer>> metrics_;
  /// descriptors_[i] is the descriptor of argument i; then the loss, then
  /// the metrics (docs/RuntimeABI.md 11).
  std::vector<void *> descriptors_;
  TensorBuffer *stepState_ = nullptr; // the "step" state, if any
  TensorBuffer *lrInput_ = nullptr;
  TensorBuffer *maxGradNormInput_ = nullptr; // absent in older steps
  TensorBuffer *nonFiniteMetric_ = nullptr;  // absent in older steps
  TensorBuffer *rankInput_ = nullptr;
  // 1 for a training step, 0 for an evaluation: gates the step's dropout
  // (--msamp-dropout-training); absent in steps without dropout.
  TensorBuffer *trainingInput_ = nullptr;
  float maxGradNorm_ = 0.0f;
  int64_t localSteps_ = 0; // the counter when the graph has no step state
  int64_t numSkipped_ = 0;
  int64_t consecutiveSkipped_ = 0;
  std::string lastSkipReason_;
  /// Set by initialize() and load(): step() refuses to run before.
  bool initialized_ = false;

  std::unique_ptr<SafeTensorsReader> data_;
  /// The data tensor of each input/target, parallel to inputs_ (null for
  /// lr and rank).
  std::vector<const SafeTensor *> dataTensors_;
  int64_t numBatches_ = 0;

  /// The state before the current step, taken before every step: sized
  /// once at open (the memory check counts it). A GPU step's is
  /// deviceSnapshot_ instead, device memory of device_.
  std::vector<uint8_t> snapshot_;
  void *deviceSnapshot_ = nullptr;
  /// Device for a step compiled with --target cuda (Managed when its own
  /// host code reads or writes buffers): the host reaches the state only
  /// through copies (BufferDevice.h), never every step.
  BufferMemory memory_ = BufferMemory::Host;
  /// The device of a Device or Managed session's buffers and copies.
  BufferDevice *device_ = nullptr;
  /// Compiled with --target cuda: the step returns with its work enqueued
  /// and may run as a CUDA graph.
  bool cudaStep_ = false;
  std::vector<LayoutEntry> stateDictLayout_;
  /// A GPU step as a CUDA graph: why this step cannot be one ("" if it
  /// can), found at open, and the graph.
  std::string graphWhyNot_;
  StepGraph graph_;
  /// A Device or Managed session's computed-index checks: deferred to the
  /// step's one wait (msamp_rt_index_checks_begin/_end), so the step's host
  /// code reads no buffer and a graph replay checks too.
  msamp_rt_index_checks *indexChecks_ = nullptr;
};

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_SESSION_H
