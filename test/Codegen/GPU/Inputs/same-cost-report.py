"""Checks that two gpu_cost.json files describe the same step: the totals and,
in order, each launch's and library call's operation, FLOPs and bytes (the
kernel names say which function a kernel was outlined from, so they may
differ). Used by msamp-gpu-outline-layers.test."""
import json
import sys

a, b = (json.load(open(path)) for path in sys.argv[1:3])
for key in ("kernels", "distinct_kernels", "library_calls", "host_syncs",
            "flops", "bytes", "predicted_ms", "cuda_graph_blocker"):
    assert a[key] == b[key], (key, a[key], b[key])
for key in ("launches", "calls", "gemm_packs"):
    left = [(e["op"], e["flops"], e["bytes"]) for e in a[key]]
    right = [(e["op"], e["flops"], e["bytes"]) for e in b[key]]
    assert left == right, key
print(f"same launches and calls: {a['kernels']} launches, "
      f"{a['library_calls']} library calls, {a['host_syncs']} host syncs, "
      f"graph blocker {a['cuda_graph_blocker']!r}")
