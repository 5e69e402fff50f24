"""msamp.compile's O3 ZeRO options reach the pipeline (issue 20):
``zero_stage`` and ``bucket_mb`` become ``zero-stage=`` / ``bucket-mb=`` of
``--msamp-o3`` and change what the compiled step holds and sends."""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msamp  # noqa: E402
from msamp import graphs  # noqa: E402


@pytest.fixture(scope="module")
def mlp():
    # 10,384 params, two FP8 GEMM weights and two f32 biases.
    return graphs.build("mlp", sizes=(64, 128, 16))


def _collectives(step, op):
    """How many ``msamp.<op>`` calls the compiled step makes."""
    text = (Path(step.dir) / "train_step.mlir").read_text()
    return len(re.findall(r"\bmsamp\.%s\b" % op, text))


def test_zero_stage_reaches_the_pipeline(mlp):
    """Stage 2 (the default) keeps 1/N of the gradients on each rank, stage 1
    all of them: the memory report's weight_grads halve on 2 ranks, and only
    stage 2 reduce-scatters."""
    s2 = msamp.compile(mlp, "O3", world_size=2, rank=0)
    s1 = msamp.compile(mlp, "O3", world_size=2, rank=0, zero_stage=1)
    assert "zero-stage=1" in s1.options.split()
    grads = {stage: step.memory_report()["categories"]["weight_grads"]["bytes"]
             for stage, step in ((1, s1), (2, s2))}
    # Each rank's shard of the flat groups is half, up to 16-element padding.
    assert abs(grads[2] - grads[1] / 2) <= 16 * 4, grads
    assert _collectives(s2, "reduce_scatter") > 0
    assert _collectives(s1, "reduce_scatter") == 0
    assert _collectives(s1, "all_gather") == _collectives(s2, "all_gather")


def test_bucket_mb_reaches_the_pipeline(mlp):
    """Buckets smaller than a weight split the flat groups into more
    reduce-scatters and all-gathers; the state per rank stays the same."""
    whole = msamp.compile(mlp, "O3", world_size=2, rank=0)
    small = msamp.compile(mlp, "O3", world_size=2, rank=0, bucket_mb=0.001)
    assert "bucket-mb=0.001" in small.options.split()
    for op in ("reduce_scatter", "all_gather"):
        assert _collectives(small, op) > _collectives(whole, op), op
    assert small.memory_report()["bytes_per_param"] == \
        whole.memory_report()["bytes_per_param"]


def test_zero_stage_3_reaches_the_pipeline(mlp):
    """Stage 3 shards the weights too: each rank stores its piece of every
    param (the memory report's weights are about half of stage 2's on 2
    ranks, its param count the whole model's), and the weights are
    all-gathered where the step reads them instead of at its end."""
    s2 = msamp.compile(mlp, "O3", world_size=2, rank=0)
    s3 = msamp.compile(mlp, "O3", world_size=2, rank=0, zero_stage=3)
    assert "zero-stage=3" in s3.options.split()
    r2, r3 = s2.memory_report(), s3.memory_report()
    assert r3["params"] == r2["params"] == 10384
    w2 = r2["categories"]["weights"]["bytes"]
    w3 = r3["categories"]["weights"]["bytes"]
    assert abs(w3 - w2 / 2) <= 16 * 4, (w2, w3)
    # fc2.weight is read by its dgrad GEMM too: the FP8 group is gathered
    # in forward and in backward, the biases' group in forward only.
    assert _collectives(s3, "all_gather") == 3
    assert _collectives(s2, "all_gather") == 2


def test_bad_zero_stage_is_a_compile_error(mlp):
    with pytest.raises(msamp.CompileError, match="zero-stage 4 is not a ZeRO stage"):
        msamp.compile(mlp, "O3", world_size=2, rank=0, zero_stage=4)


if __name__ == "__main__":
    sys.exit(pytest.main([os.path.abspath(__file__), "-q"]))
