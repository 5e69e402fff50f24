"""Checks a gpu_cost.json against the cost model of issue 22, recomputed here
independently of the compiler: every entry's time_us is
max(flops / (0.7 x peak of its unit), bytes / (0.8 x 3.35 TB/s)) + 4 us, and
the totals are the sums of the entries (kernels, distinct_kernels,
library_calls, gemm_pack_launches, flops, bytes, predicted_ms,
fp8_gemm_share, floor_ms).
With a second argument, the step's train_step.ll (msamp-compile --emit-llvm):
host_syncs must be the object's synchronizing call sites: its stream
synchronizations (the optimizers read step and lr on the device, and every
runtime call on a compiled step's device buffers returns without waiting).
Prints "gpu_cost.json: consistent" or exits 1 naming the first mismatch."""
import json
import math
import sys

PEAK = {"fp8": 1979e12, "bf16": 989e12, "f32": 67e12}


def close(a, b, what):
    # The report prints 6 significant digits (half a unit in the last place is
    # at most 5e-6 relative).
    if not math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-12):
        sys.exit(f"gpu_cost.json: {what} is {a}, expected {b}")


def main(path, ll_path):
    with open(path) as f:
        report = json.load(f)
    # The GEMMs' pack launches count in the time and bytes (not as calls).
    entries = report["launches"] + report["calls"] + report["gemm_packs"]
    total_s = fp8_s = gemm_floor_s = 0.0
    for e in entries:
        seconds = max(e["flops"] / (0.7 * PEAK[e["unit"]]),
                      e["bytes"] / (0.8 * 3.35e12)) + 4e-6
        close(e["time_us"], seconds * 1e6, f"time_us of {e['name']}")
        total_s += seconds
        if e["op"] == "gemm":
            gemm_floor_s += e["flops"] / PEAK[e["unit"]]
            if e["unit"] == "fp8":
                fp8_s += seconds
    assert all(e["unit"] == "f32" for e in report["launches"])
    if report["kernels"] != len(report["launches"]):
        sys.exit("gpu_cost.json: kernels is not the number of launches")
    distinct = len({e["name"] for e in report["launches"]})
    if report["distinct_kernels"] != distinct:
        sys.exit("gpu_cost.json: distinct_kernels is not the distinct names")
    if report["library_calls"] != len(report["calls"]):
        sys.exit("gpu_cost.json: library_calls is not the number of calls")
    if report["gemm_pack_launches"] != len(report["gemm_packs"]):
        sys.exit("gpu_cost.json: gemm_pack_launches is not the number of packs")
    if any(e["op"] != "gemm_pack" or e["flops"] for e in report["gemm_packs"]):
        sys.exit("gpu_cost.json: a gemm_packs entry is no FLOP-free pack")
    if report["flops"] != sum(e["flops"] for e in entries):
        sys.exit("gpu_cost.json: flops is not the sum")
    if report["bytes"] != sum(e["bytes"] for e in entries):
        sys.exit("gpu_cost.json: bytes is not the sum")
    close(report["predicted_ms"], total_s * 1e3, "predicted_ms")
    close(report["fp8_gemm_share"], fp8_s / total_s, "fp8_gemm_share")
    floor = report["floor"]
    minimal = (2 * floor["state_bytes"] + 2 * floor["kept_for_backward_bytes"]
               + floor["input_bytes"])
    if floor["minimal_bytes"] != minimal:
        sys.exit("gpu_cost.json: minimal_bytes is not 2 state + 2 kept + input")
    close(floor["gemm_ms"], gemm_floor_s * 1e3, "floor.gemm_ms")
    close(floor["memory_ms"], minimal / 3.35e12 * 1e3, "floor.memory_ms")
    close(report["floor_ms"], max(gemm_floor_s, minimal / 3.35e12) * 1e3,
          "floor_ms")
    if ll_path:
        # The step's object, read independently of the report's entries: a
        # step without launches inside loops runs each call site once.
        text = open(ll_path).read()
        waits = text.count("call void @msamp_rt_gpu_stream_synchronize(")
        if waits != report["host_syncs"]:
            sys.exit(f"gpu_cost.json: host_syncs is {report['host_syncs']}, "
                     f"but the object has {waits} stream synchronization "
                     f"call sites")
    print("gpu_cost.json: consistent")


main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
