//===- StepGraphTest.cpp - the CUDA graph policy of a GPU step ------------===//
//
// Part of the msamp project.
//
// StepGraph (lib/Runtime/Session/StepGraph.h) driven by a fake device that
// records what a real one would be asked to do, and can fail each call: the
// warm-up, the capture, the replays, and every way back to eager steps.
// On a GPU, unittests/CUDA/CudaGraphStepTest.cpp runs the real thing.
//
//===----------------------------------------------------------------------===//

#include "StepGraph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msamp::session {
namespace {

/// Records every call; `capturing` is what a stream in capture mode is:
/// a step run then is recorded, not executed.
struct FakeDevice : GraphDevice {
  std::vector<std::string> calls;
  bool capturing = false;
  std::string failBegin, failEnd, failLaunch;
  int graphs = 0, destroyed = 0;
  int graphToken = 0;

  std::string beginCapture() override {
    calls.push_back("begin");
    if (!failBegin.empty())
      return failBegin;
    capturing = true;
    return "";
  }
  std::string endCapture(void *&graph) override {
    calls.push_back("end");
    capturing = false;
    graph = nullptr;
    if (!failEnd.empty())
      return failEnd;
    ++graphs;
    graph = &graphToken;
    return "";
  }
  std::string launch(void *graph) override {
    EXPECT_EQ(graph, &graphToken);
    calls.push_back("launch");
    return failLaunch;
  }
  void destroy(void *graph) override {
    EXPECT_EQ(graph, &graphToken);
    calls.push_back("destroy");
    ++destroyed;
  }
};

/// A step: "run" when executed, "record" when captured; `error` is what
/// the runtime recorded during it.
struct FakeStep {
  explicit FakeStep(FakeDevice &device) : device(device) {}
  FakeDevice &device;
  std::string error;
  int executed = 0, recorded = 0, undone = 0;
  std::function<std::string()> step() {
    return [this] {
      (device.capturing ? recorded : executed)++;
      device.calls.push_back(device.capturing ? "record" : "run");
      return error;
    };
  }
  /// The entry point's index checks of the batch: `badBatch` refuses it.
  std::string badBatch;
  int checked = 0;
  std::function<std::string()> check() {
    return [this] {
      ++checked;
      device.calls.push_back("check");
      return badBatch;
    };
  }
  std::function<void()> undo() {
    return [this] {
      ++undone;
      device.calls.push_back("undo");
    };
  }
};

using Calls = std::vector<std::string>;

TEST(StepGraph, WarmsUpCapturesThenReplays) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(/*requested=*/true, /*whyNot=*/"");
  EXPECT_EQ(graph.mode(), StepGraph::Mode::WarmUp);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(graph.run(device, s.step(), s.undo(), s.check()), "");
  EXPECT_EQ(device.calls,
            (Calls{"run", "check", "begin", "record", "end", "launch", "check",
                   "launch", "check", "launch", "check", "launch"}));
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Replay);
  EXPECT_EQ(graph.replayed(), 4);
  EXPECT_EQ(graph.note(), "");
  EXPECT_EQ(s.executed, 1);
  EXPECT_EQ(s.undone, 0);
}

TEST(StepGraph, SwitchedOffRunsEveryStepEagerlyWithoutANote) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(/*requested=*/false, "");
  for (int i = 0; i < 3; ++i)
    graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls, (Calls{"run", "run", "run"}));
  EXPECT_EQ(graph.note(), "");
  EXPECT_EQ(graph.replayed(), 0);
}

TEST(StepGraph, AStepThatCannotBeCapturedRunsEagerlyWithTheReason) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "the step's host code cannot be captured: x");
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Eager);
  graph.run(device, s.step(), s.undo(), s.check());
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls, (Calls{"run", "run"}));
  EXPECT_EQ(graph.note(), "the step's host code cannot be captured: x");
  // Switched off, the reason is not a note: nothing was asked for.
  graph.configure(false, "the step's host code cannot be captured: x");
  EXPECT_EQ(graph.note(), "");
}

TEST(StepGraph, AFailedWarmUpWarmsUpAgain) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  s.error = "index out of range";
  EXPECT_EQ(graph.run(device, s.step(), s.undo(), s.check()),
            "index out of range");
  EXPECT_EQ(graph.mode(), StepGraph::Mode::WarmUp);
  s.error = "";
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Capture);
}

TEST(StepGraph, AnErrorInsideTheCaptureFallsBackAndRunsTheStepEagerly) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  graph.run(device, s.step(), s.undo(), s.check());
  // A call of the step failed while it was recorded (a synchronization);
  // the capture ends invalidated.
  s.error = "cudaStreamSynchronize failed: operation not permitted when "
            "stream is capturing";
  device.failEnd = "cudaStreamEndCapture failed: capture invalidated";
  const std::string error = graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls,
            (Calls{"run", "check", "begin", "record", "end", "undo", "run"}));
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Eager);
  EXPECT_EQ(graph.note(),
            "capturing the step failed: cudaStreamSynchronize failed: "
            "operation not permitted when stream is capturing");
  // The eager step's own result is the step's.
  EXPECT_EQ(error, s.error);
  s.error = "";
  device.calls.clear();
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls, (Calls{"run"}));
  EXPECT_EQ(device.graphs, 0);
}

TEST(StepGraph, AFailedEndOfCaptureIsTheNote) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  graph.run(device, s.step(), s.undo(), s.check());
  device.failEnd = "cudaGraphInstantiate failed (instantiating the step)";
  EXPECT_EQ(graph.run(device, s.step(), s.undo(), s.check()), "");
  EXPECT_EQ(graph.note(), "capturing the step failed: cudaGraphInstantiate "
                          "failed (instantiating the step)");
  EXPECT_EQ(s.executed, 2);
  EXPECT_EQ(s.undone, 1);
}

TEST(StepGraph, AFailedBeginRunsTheStepEagerly) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  graph.run(device, s.step(), s.undo(), s.check());
  device.failBegin = "cudaStreamBeginCapture failed";
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls, (Calls{"run", "check", "begin", "undo", "run"}));
  EXPECT_EQ(graph.note(),
            "starting the capture failed: cudaStreamBeginCapture failed");
}

TEST(StepGraph, AFailedLaunchDestroysTheGraphAndRunsEagerly) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  graph.run(device, s.step(), s.undo(), s.check());
  graph.run(device, s.step(), s.undo(), s.check());
  device.failLaunch = "cudaGraphLaunch failed";
  device.calls.clear();
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(device.calls, (Calls{"check", "launch", "destroy", "undo", "run"}));
  EXPECT_EQ(graph.note(),
            "launching the step's graph failed: cudaGraphLaunch failed");
  EXPECT_EQ(graph.replayed(), 1);
  EXPECT_EQ(device.destroyed, 1);
}

// A graph does not replay the entry point's index checks: they run alone
// before the capture and each replay, and a bad batch is refused without
// running anything; the graph stays for the next, good batch.
TEST(StepGraph, ABadBatchIsRefusedBeforeTheCaptureAndEachReplay) {
  FakeDevice device;
  FakeStep s(device);
  StepGraph graph;
  graph.configure(true, "");
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(s.checked, 0); // eager: the entry point checks
  s.badBatch = "input 'ids': value 64 at [1] is outside [0, 64)";
  EXPECT_EQ(graph.run(device, s.step(), s.undo(), s.check()), s.badBatch);
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Capture);
  s.badBatch = "";
  graph.run(device, s.step(), s.undo(), s.check());
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Replay);
  s.badBatch = "input 'ids': value -1 at [0] is outside [0, 64)";
  device.calls.clear();
  EXPECT_EQ(graph.run(device, s.step(), s.undo(), s.check()), s.badBatch);
  EXPECT_EQ(device.calls, (Calls{"check"}));
  EXPECT_EQ(graph.mode(), StepGraph::Mode::Replay);
  EXPECT_EQ(graph.note(), "");
  EXPECT_EQ(graph.replayed(), 1);
  EXPECT_EQ(s.undone, 0);
}

TEST(StepGraph, ConfiguringAgainDropsTheGraphAndWarmsUp) {
  FakeDevice device;
  FakeStep s(device);
  {
    StepGraph graph;
    graph.configure(true, "");
    graph.run(device, s.step(), s.undo(), s.check());
    graph.run(device, s.step(), s.undo(), s.check());
    EXPECT_EQ(device.graphs, 1);
    graph.configure(true, "");
    EXPECT_EQ(device.destroyed, 1);
    EXPECT_EQ(graph.mode(), StepGraph::Mode::WarmUp);
    EXPECT_EQ(graph.replayed(), 0);
    graph.run(device, s.step(), s.undo(), s.check());
    graph.run(device, s.step(), s.undo(), s.check());
    EXPECT_EQ(device.graphs, 2);
  }
  // The session's end frees the last graph.
  EXPECT_EQ(device.destroyed, 2);
}

TEST(StepGraph, Settings) {
  bool on = false;
  EXPECT_TRUE(parseCudaGraphsSetting("1", on));
  EXPECT_TRUE(on);
  EXPECT_TRUE(parseCudaGraphsSetting("off", on));
  EXPECT_FALSE(on);
  EXPECT_TRUE(parseCudaGraphsSetting("on", on));
  EXPECT_TRUE(on);
  EXPECT_TRUE(parseCudaGraphsSetting("0", on));
  EXPECT_FALSE(on);
  for (const char *bad : {"", "maybe", "true", "ON", "2"})
    EXPECT_FALSE(parseCudaGraphsSetting(bad, on)) << bad;
}

} // namespace
} // namespace msamp::session
