//===- StepGraph.cpp - A GPU step replayed as a CUDA graph ----------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "StepGraph.h"
#include "Error.h"

#include "MSAMP/Runtime/msamp_gpu_host.h"
#include "MSAMP/Runtime/msamp_runtime.h"

namespace msamp::session {

GraphDevice::~GraphDevice() = default;

namespace {

class RuntimeGraphDevice : public GraphDevice {
public:
  std::string beginCapture() override {
    return runtimeFailure(msamp_rt_gpu_graph_begin_capture());
  }
  std::string endCapture(void *&graph) override {
    return runtimeFailure(msamp_rt_gpu_graph_end_capture(&graph));
  }
  std::string launch(void *graph) override {
    return runtimeFailure(msamp_rt_gpu_graph_launch(graph));
  }
  void destroy(void *graph) override { msamp_rt_gpu_graph_destroy(graph); }
};

} // namespace

GraphDevice &runtimeGraphDevice() {
  static RuntimeGraphDevice device;
  return device;
}

bool parseCudaGraphsSetting(const std::string &text, bool &on) {
  if (text == "1" || text == "on") {
    on = true;
    return true;
  }
  if (text == "0" || text == "off") {
    on = false;
    return true;
  }
  return false;
}

void StepGraph::configure(bool requested, const std::string &whyNot) {
  if (graph_ && owner_)
    owner_->destroy(graph_);
  graph_ = nullptr;
  owner_ = nullptr;
  replayed_ = 0;
  note_ = requested ? whyNot : "";
  mode_ = requested && whyNot.empty() ? Mode::WarmUp : Mode::Eager;
}

void StepGraph::turnOff(GraphDevice &device, const std::string &why) {
  if (graph_)
    device.destroy(graph_);
  graph_ = nullptr;
  owner_ = nullptr;
  mode_ = Mode::Eager;
  note_ = why;
}

std::string StepGraph::run(GraphDevice &device,
                           const std::function<std::string()> &step,
                           const std::function<void()> &undo,
                           const std::function<std::string()> &checkInputs) {
  if (mode_ == Mode::Capture || mode_ == Mode::Replay)
    if (std::string error = checkInputs(); !error.empty())
      return error;
  auto eagerAfter = [&](const std::string &why) {
    turnOff(device, why);
    undo();
    return step();
  };
  switch (mode_) {
  case Mode::Eager:
    return step();
  case Mode::WarmUp: {
    std::string error = step();
    // A failed warm-up proves nothing: the next step warms up again.
    if (error.empty())
      mode_ = Mode::Capture;
    return error;
  }
  case Mode::Capture: {
    if (std::string error = device.beginCapture(); !error.empty())
      return eagerAfter("starting the capture failed: " + error);
    // Recorded into the graph, not run.
    const std::string inStep = step();
    void *graph = nullptr;
    const std::string ended = device.endCapture(graph);
    if (!inStep.empty() || !ended.empty()) {
      if (graph)
        device.destroy(graph);
      return eagerAfter("capturing the step failed: " +
                        (inStep.empty() ? ended : inStep));
    }
    graph_ = graph;
    owner_ = &device;
    mode_ = Mode::Replay;
    [[fallthrough]];
  }
  case Mode::Replay:
    if (std::string error = device.launch(graph_); !error.empty())
      return eagerAfter("launching the step's graph failed: " + error);
    ++replayed_;
    return "";
  }
  return step();
}

StepGraph::~StepGraph() {
  if (graph_ && owner_)
    owner_->destroy(graph_);
}

} // namespace msamp::session
