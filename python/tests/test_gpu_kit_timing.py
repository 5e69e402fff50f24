"""The GPU kit's timing rounds (scripts/gpu-kit/run.py, docs/GPU.md
"Running it"): MSAMP_KIT_TIMING_ROUNDS is read and checked, and a step and
its -inline twin are compared round by round (the two ran next to each
other), which is what a noisy machine needs: on one H100 the same step's
time moved by 2.5 ms between runs minutes apart (docs/GPU.md, "Fourth
loan"). Runs without a GPU: only the pure functions are exercised."""
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
