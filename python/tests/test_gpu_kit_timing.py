"""The GPU kit's timing rounds (scripts/gpu-kit/run.py, docs/GPU.md
"Running it"): MSAMP_KIT_TIMING_ROUNDS is read and checked, and a step and
its -inline twin are compared round by round (the two ran next to each
other), which is what a noisy machine needs: on one H100 the same step's
time moved by 2.5 ms between runs minutes apart (docs/GPU.md, "GPU
results"). Runs without a GPU: only the pure functions are exercised."""
import importlib.util
import os

import pytest

RUN_PY = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                      "gpu-kit", "run.py")


def load_run_py():
    spec = importlib.util.spec_from_file_location("gpu_kit_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rounds_default_to_one_and_are_checked(monkeypatch):
    kit = load_run_py()
    monkeypatch.delenv("MSAMP_KIT_TIMING_ROUNDS", raising=False)
    assert kit.timing_rounds() == 1
    monkeypatch.setenv("MSAMP_KIT_TIMING_ROUNDS", "3")
    assert kit.timing_rounds() == 3
    for bad in ("0", "21", "-1", "two", ""):
        monkeypatch.setenv("MSAMP_KIT_TIMING_ROUNDS", bad)
        with pytest.raises(ValueError, match="MSAMP_KIT_TIMING_ROUNDS"):
            kit.timing_rounds()


def test_a_step_is_compared_with_its_inline_twin_round_by_round():
    kit = load_run_py()
    entries = [
        # The second machine of 2026-11-27, as it would have paired them.
        {"name": "gpt2s-o2", "ms_per_step_rounds": [33.67, 36.0, 33.45]},
        {"name": "gpt2s-o2-inline", "ms_per_step_rounds": [35.38, 32.54, 34.97]},
        {"name": "gpt2s-o0", "ms_per_step_rounds": [39.66, 39.31, 38.73]},
        {"name": "failed-o2", "status": "FAIL"},
        {"name": "failed-o2-inline", "ms_per_step_rounds": [1.0]},
    ]
    pairs = kit.paired_differences(entries)
    assert pairs == [{"step": "gpt2s-o2", "vs": "gpt2s-o2-inline",
                      "ms_difference_rounds": [-1.71, 3.46, -1.52],
                      "ms_difference_median": -1.52}]


def test_rounds_interleave_the_steps_and_pair_them(tmp_path, monkeypatch):
    # time_steps with msamp-run replaced: every call writes TIMED_STEPS step
    # times, the steady ones a function of the step and the call's order, so
    # the medians show which round each came from.
    kit = load_run_py()
    steps_dir = tmp_path / "kit" / "steps"
    steps_dir.mkdir(parents=True)
    import json
    (steps_dir / "steps.json").write_text(json.dumps([
        {"name": "s-o2", "level": "O2", "seed": 7, "timed": True,
         "predicted_ms": 1.5},
        {"name": "s-o2-inline", "level": "O2", "seed": 7, "timed": True},
        {"name": "untimed", "level": "O0", "seed": 7}]))
    calls = []

    def fake_run_step(r, env, step, steps, log, cubins, graphs=True):
        calls.append((step["name"], graphs))
        base = {"s-o2": 10.0, "s-o2-inline": 12.0}[step["name"]]
        steady = base + len(calls)  # later calls slower: drift
        with open(log, "w") as f:
            for i in range(steps):
                f.write(json.dumps({"step_ms": 100.0 if i < 2 else steady})
                        + "\n")
        return 0, "", 0.0

    monkeypatch.setattr(kit, "run_step", fake_run_step)
    monkeypatch.setattr(kit, "sh", lambda *a, **k: (1, ""))  # no nvidia-smi
    r = kit.Report(str(tmp_path / "kit"), str(tmp_path / "out"))
    kit.time_steps(r, {}, rounds=2)
    # Round 1: graph and eager of each; round 2: graphs only.
    assert calls == [("s-o2", True), ("s-o2", False),
                     ("s-o2-inline", True), ("s-o2-inline", False),
                     ("s-o2", True), ("s-o2-inline", True)]
    a, b = r.data["step_timing"]
    assert a["ms_per_step_rounds"] == [11.0, 15.0]
    assert b["ms_per_step_rounds"] == [15.0, 18.0]
    assert a["ms_per_step"] == 15.0 and a["ms_per_step_eager"] == 12.0
    assert a["cuda_graph"] == "used" and a["predicted_ms"] == 1.5
    assert a["ms_per_step_first_two"] == [100.0, 100.0]
    assert not r.data["failures"]
    assert r.data["step_timing_pairs"] == [
        {"step": "s-o2", "vs": "s-o2-inline",
         "ms_difference_rounds": [-4.0, -3.0], "ms_difference_median": -3.0}]
