//===- StepGraph.h - A GPU step replayed as a CUDA graph --------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The session runs a step compiled for CUDA as one CUDA graph (docs/GPU.md
// "The step as a CUDA graph"): the first step runs eagerly (the warm-up:
// kernel modules load, cuBLASLt finds its algorithms and workspace), the
// second is captured from the backend's stream, instantiated and launched,
// and every later one relaunches that graph. The step's buffers (state,
// inputs, loss, metrics) are the session's, at fixed addresses, and its
// per-step values (lr, step, training) live in them: a replay reads what
// the session wrote there for this step.
//
// Anything that keeps a step out of a graph turns graphs off for the rest of
// the session with a one-line note: the switch (msamp-run --cuda-graphs=off,
// MSAMP_CUDA_GRAPHS=0), a step whose host code does more than enqueue work
// (msamp-gpu-graph-check, recorded in train_step.so), data-parallel ranks,
// or a capture, instantiation or launch that fails; a step that failed that
// way had not run and is run eagerly at once. This class is that policy;
// GraphDevice is the runtime under it, which unit tests replace.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_STEPGRAPH_H
#define MSAMP_LIB_RUNTIME_SESSION_STEPGRAPH_H

#include <functional>
#include <string>

namespace msamp::session {

/// The runtime's CUDA graph calls (msamp_rt_gpu_graph_*). Each returns ""
/// or the error message.
class GraphDevice {
public:
  virtual ~GraphDevice();
  virtual std::string beginCapture() = 0;
  /// Ends the capture and instantiates it into `graph` (null on failure).
  virtual std::string endCapture(void *&graph) = 0;
  virtual std::string launch(void *graph) = 0;
  virtual void destroy(void *graph) = 0;
};

/// The msamp_rt_gpu_graph_* functions of libmsamp_runtime.
GraphDevice &runtimeGraphDevice();

/// The value of $MSAMP_CUDA_GRAPHS or of msamp-run --cuda-graphs: "1" or
/// "on" enables graphs, "0" or "off" disables them; true when `text` is one
/// of those (`on` set), else false.
bool parseCudaGraphsSetting(const std::string &text, bool &on);

class StepGraph {
public:
  enum class Mode {
    Eager,   ///< graphs off (see note())
    WarmUp,  ///< the next step runs eagerly, the one after is captured
    Capture, ///< the next step is captured, then launched
    Replay,  ///< every step launches the graph
  };

  /// Graphs for this step: `requested` by the switch, and `whyNot` (why
  /// the step cannot be a graph; "" if it can). Resets to the warm-up.
  void configure(bool requested, const std::string &whyNot);
  /// Turns graphs off for `why` (kept as the note), freeing the graph.
  void turnOff(GraphDevice &device, const std::string &why);

  /// Runs one step: `step` enqueues it (the packed entry point) and returns
  /// the error the runtime recorded meanwhile ("" if none, cleared either
  /// way). Eagerly, or captured and launched, or relaunched. A step that a
  /// failed capture or launch kept from running (graphs are then off, with
  /// the note) is run eagerly after `undo` (the session restores the state
  /// it copied before the step: nothing ran, but a partly captured step is
  /// not trusted). Returns the runtime's error of the step that ran.
  /// `checkInputs` is the entry point's own host code, its index checks of
  /// the batch (RuntimeABI.md 11.1), which a graph does not replay: before
  /// a capture or a replay it runs alone, and its error refuses the step
  /// (nothing runs, the graph stays).
  std::string run(GraphDevice &device, const std::function<std::string()> &step,
                  const std::function<void()> &undo,
                  const std::function<std::string()> &checkInputs);

  Mode mode() const { return mode_; }
  /// Why graphs are off ("" while on, or off by the switch): printed once.
  const std::string &note() const { return note_; }
  /// Steps launched from the graph so far (the captured one included).
  long long replayed() const { return replayed_; }

  ~StepGraph();

private:
  Mode mode_ = Mode::Eager;
  std::string note_;
  void *graph_ = nullptr;
  GraphDevice *owner_ = nullptr; // destroys graph_
  long long replayed_ = 0;
};

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_STEPGRAPH_H
