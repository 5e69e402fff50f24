"""benchmarks/gpu_ratio_bound.py on a small hand-made cost report: each term
of the bound is the model's best case for the work it names, computed with
the report's own model, and other kernels add nothing."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_ratio_bound.py"

MODEL = {"fp8_tflops": 2000, "bf16_tflops": 1000, "f32_tflops": 50,
         "compute_efficiency": 0.5, "memory_tb_per_s": 2.0,
         "memory_efficiency": 0.5, "launch_us": 4}

# batch 1, heads 2, seq 4: S = 1 * 2 * 16 * 4 = 128 bytes of scores;
# vocab 16: logits 1 * 4 * 16 * 4 = 256 bytes.
SHAPE = ["--batch", "1", "--heads", "2", "--seq", "4", "--vocab", "16"]


def report():
    return {
        "model": MODEL,
        "floor_ms": 1.0,
        "predicted_ms": 9.0,
        "calls": [
            {"name": "msamp_rt_gemm", "op": "gemm", "unit": "fp8",
             "flops": 10**12, "bytes": 10**12, "time_us": 0},
            {"name": "msamp_rt_gemm", "op": "gemm", "unit": "f32",
             "flops": 10**10, "bytes": 5, "time_us": 0},
            {"name": "msamp_rt_quantize", "op": "runtime", "unit": "f32",
             "flops": 0, "bytes": 10**12, "time_us": 0},
        ],
        "launches": [
            {"name": "k0", "op": "row_chain", "unit": "f32", "flops": 0,
             "bytes": 2 * 128, "time_us": 0},  # softmax forward
            {"name": "k1", "op": "row_chain", "unit": "f32", "flops": 0,
             "bytes": 3 * 128 + 8, "time_us": 0},  # softmax backward
            # The cross-entropy: logits read, their gradient written.
            {"name": "k2", "op": "row_chain", "unit": "f32", "flops": 0,
             "bytes": 2 * 256, "time_us": 0},
            # A LayerNorm: no term.
            {"name": "k4", "op": "row_chain", "unit": "f32", "flops": 0,
             "bytes": 64, "time_us": 0},
            {"name": "k3", "op": "linalg.generic", "unit": "f32",
             "flops": 0, "bytes": 10**12, "time_us": 0},
        ],
    }


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_ratio_bound", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_term_is_the_models_best_case():
    terms = load_script().bound(report(), attention_bytes=128, logits_bytes=256)
    launch = 4e-3  # ms
    fp8 = 1e12 / (0.5 * 2000e12) * 1e3 + launch
    f32 = 1e10 / (0.5 * 50e12) * 1e3 + launch
    assert terms["gemm calls"] == 2
    assert terms["gemm ms"] == pytest.approx(fp8 + f32)
    bandwidth = 0.5 * 2.0e12
    assert terms["softmax chains"] == 2
    assert terms["softmax ms"] == pytest.approx(
        (2 * 128 + 3 * 128) / bandwidth * 1e3 + 2 * launch)
    # The logits read once (not their gradient's write).
    assert terms["cross-entropy ms"] == pytest.approx(
        256 / bandwidth * 1e3 + launch)
    assert terms["bound ms"] == pytest.approx(
        terms["gemm ms"] + terms["softmax ms"] + terms["cross-entropy ms"])
    assert terms["2 x floor ms"] == 2.0
    assert terms["predicted ms"] == 9.0


def test_prints_a_table(tmp_path):
    path = tmp_path / "gpu_cost.json"
    path.write_text(json.dumps(report()))
    out = subprocess.run([sys.executable, str(SCRIPT), str(path), *SHAPE],
                         check=True, capture_output=True, text=True).stdout
    assert "| bound ms |" in out
    assert "| 2 x floor ms | 2.00 |" in out
