"""Data and checks for the data-parallel tests (test/Tools/msamp-run/
DataParallel), with numpy and the reference `safetensors` package.

  dp.py data GRAPH.mlir N STEPS OUT_N OUT_1 [--seed S] [--int-high H]
      Random inputs/targets for the data arguments of GRAPH (per-rank batch
      B, read from its signature): OUT_N holds K = N*STEPS slices of batch B
      for N ranks; OUT_1 holds STEPS slices of batch N*B for one rank, slice
      s-1 being slices (s-1)*N .. (s-1)*N+N-1 of OUT_N concatenated in rank
      order (docs/Interfaces.md 5), so both runs see the same samples per step.
  dp.py losses A.jsonl B.jsonl --rel R     every loss of A within R
                                           (relative) of B's; prints the max
  dp.py state A.safetensors B.safetensors --tol T
      every param (f32 after its .scale) of A within T of B's, relative to
      the tensor's max magnitude; prints the max
      (--atol A: the absolute difference instead; --skip REGEX: leave out
      the params whose name matches)
  dp.py ratio O0.jsonl O1.jsonl --below X  comm_bytes per step of O1 over
                                           O0's; prints it
      (--near E --rel R instead of --below: the ratio is within R of E,
      relative; with an O2 log first, whose comm_bytes is the params bytes,
      an O3 log's ratio is 2 (N-1)/N; --weights REPORT.json --world N
      instead of --near: E = (N-1)/N x (A's bytes + the report's weights
      bytes) / A's bytes, for a weight all-gathered wider than its gradient)
  dp.py memory RUN.out REPORT_0.json REPORT_1.json ...
      the per-rank memory totals msamp-run prints at O3 (measured from the
      session's allocations) equal each rank's compiler report
      (msamp-opt --msamp-memory-report=format=json) to the printed 1e-4
  dp.py tensors A.st B.st                  the checkpoints A and B (each its
      file and, at O3, its FILE.rank<r> shards) hold the same tensors, byte
      for byte, whatever their world sizes; prints the count
  dp.py zero-memory ONE.json REPORT_0.json ... REPORT_N-1.json
      O3 flat shards (issue 20), from compiler reports of one rank (ONE) and
      of every rank of a group of N: the replicated weights are ONE's on
      every rank, each rank's masters, gradients and moments are ONE's / N
      (within 2%), and over weights, masters, gradients and optimizer states
      the largest rank is within 2% of the smallest; prints the figures.
      --stage1: ZeRO stage 1, every rank keeps all the gradients;
      --stage3: ZeRO stage 3, the weights are sharded too (none replicated)
  dp.py timed LIMIT CMD...                 runs CMD, prints its output and
      "exit status S after T s"; fails unless S != 0 and T < LIMIT (a fault
      must end the job with an error, in bounded time)
"""

import json
import re
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file


def fail(message):
    print(f"dp.py: FAIL: {message}")
    sys.exit(1)


def option(args, name, default, cast=float):
    if name in args:
        i = args.index(name)
        value = cast(args[i + 1])
        del args[i:i + 2]
        return value
    return default


ARG = re.compile(r'%\w+: tensor<([0-9x]+)x(\w+)> \{msamp\.role = "(input|target)", '
                 r'msamp\.name = "([^"]+)"\}')


def data(args):
    seed = option(args, "--seed", 0, int)
    high = option(args, "--int-high", 16, int)
    graph, ranks, steps, out_n, out_1 = args
    ranks, steps = int(ranks), int(steps)
    rng = np.random.default_rng(seed)
    per_rank, single = {}, {}
    for dims, dtype, _, name in ARG.findall(open(graph).read()):
        shape = [int(d) for d in dims.split("x")]
        full = [ranks * steps] + shape
        if dtype.startswith("f"):
            value = rng.standard_normal(full).astype(np.float32)
        else:
            value = rng.integers(0, high, full).astype(
                np.int64 if dtype == "i64" else np.int32)
        per_rank[name] = value
        # Slice s-1 of the 1-rank file: the N per-rank slices of step s,
        # concatenated along the batch dimension in rank order.
        single[name] = np.ascontiguousarray(value.reshape(
            [steps, ranks * shape[0]] + shape[1:]))
    if not per_rank:
        fail(f"no input/target arguments found in {graph}")
    save_file(per_rank, out_n)
    save_file(single, out_1)


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def losses(args):
    rel = option(args, "--rel", 1e-5)
    a, b = read_log(args[0]), read_log(args[1])
    if len(a) != len(b):
        fail(f"{len(a)} steps logged vs {len(b)}")
    worst = 0.0
    for x, y in zip(a, b):
        if x["loss"] is None or y["loss"] is None:
            fail(f"step {x['step']}: non-finite loss")
        err = abs(x["loss"] - y["loss"]) / max(abs(y["loss"]), 1e-30)
        worst = max(worst, err)
        if err > rel:
            fail(f"step {x['step']}: loss {x['loss']} vs {y['loss']} "
                 f"(relative {err:.3g} > {rel})")
    print(f"losses ok: {len(a)} steps, max relative difference {worst:.3g} "
          f"(tolerance {rel})")


def read_params(path):
    with safe_open(path, "np") as f:
        keys = set(f.keys())
        out = {}
        for name in keys:
            if name.endswith((".scale", ".amax_history", ".exp_avg",
                              ".exp_avg_sq", ".momentum_buffer", ".master")):
                continue
            if "." + name.split(".")[-1] in (".step",) or name == "step":
                continue
            value = f.get_tensor(name)
            if value.dtype.kind not in "f" and str(value.dtype) not in (
                    "float8_e4m3fn", "float8_e5m2"):
                continue
            value = value.astype(np.float64)
            if name + ".scale" in keys:
                value = value / float(f.get_tensor(name + ".scale"))
            out[name] = value
        return out


def state(args):
    tol = option(args, "--tol", 1e-5)
    atol = option(args, "--atol", None)
    skip = option(args, "--skip", None, str)
    a, b = read_params(args[0]), read_params(args[1])
    if skip:
        a = {k: v for k, v in a.items() if not re.search(skip, k)}
        b = {k: v for k, v in b.items() if not re.search(skip, k)}
    if set(a) != set(b):
        fail(f"different tensors: {sorted(set(a) ^ set(b))}")
    worst, where = 0.0, ""
    for name in sorted(a):
        scale = 1.0 if atol is not None else max(np.max(np.abs(b[name])), 1e-30)
        err = float(np.max(np.abs(a[name] - b[name]))) / scale
        if err > worst:
            worst, where = err, name
    kind = "absolute" if atol is not None else "relative"
    tol = atol if atol is not None else tol
    if worst > tol:
        fail(f"{where}: max {kind} difference {worst:.3g} > {tol}")
    print(f"state ok: {len(a)} tensors, max {kind} difference {worst:.3g} "
          f"({where or '-'}; tolerance {tol})")


def ratio(args):
    below = option(args, "--below", 0.5)
    near = option(args, "--near", None)
    rel = option(args, "--rel", 0.01)
    weights = option(args, "--weights", None, str)
    world = option(args, "--world", None, int)
    o0, o1 = read_log(args[0]), read_log(args[1])
    b0 = {e["comm_bytes"] for e in o0}
    b1 = {e["comm_bytes"] for e in o1}
    if len(b0) != 1 or len(b1) != 1:
        fail(f"comm_bytes varies between steps: {sorted(b0)} / {sorted(b1)}")
    b0, b1 = b0.pop(), b1.pop()
    r = b1 / b0
    if weights is not None:
        with open(weights) as f:
            w = json.load(f)["categories"]["weights"]["bytes"]
        near = (world - 1) / world * (b0 + w) / b0
        print(f"weights {w} bytes: expected ratio {near:.4f}")
    if near is not None:
        print(f"comm_bytes per step: {b0}, {b1}, ratio {r:.4f}")
        if not abs(r - near) <= rel * near:
            fail(f"ratio {r:.4f} is not within {rel} of {near}")
        return
    print(f"comm_bytes per step: O0 {b0}, O1 {b1}, ratio {r:.4f}")
    if not r < below:
        fail(f"ratio {r:.4f} is not below {below}")


def memory(args):
    out, reports = args[0], args[1:]
    line = [l for l in open(out) if l.startswith("memory: total bytes/param per rank")]
    if len(line) != 1:
        fail(f"{out}: no per-rank memory line")
    measured = [float(x) for x in re.findall(r"rank \d+ ([0-9.]+)", line[0])]
    compiled = [json.load(open(r))["bytes_per_param"] for r in reports]
    if len(measured) != len(compiled):
        fail(f"{len(measured)} ranks measured, {len(compiled)} reports")
    for r, (m, c) in enumerate(zip(measured, compiled)):
        if abs(m - c) > 1e-4:
            fail(f"rank {r}: {m} bytes/param allocated, compiler says {c}")
    print("memory ok: " + ", ".join(f"rank {r} {m}" for r, m in enumerate(measured)))


def zero_memory(args):
    stage1, stage3 = "--stage1" in args, "--stage3" in args
    reports = [json.load(open(p)) for p in args
               if p not in ("--stage1", "--stage3")]
    one, ranks = reports[0], reports[1:]
    n = len(ranks)
    sharded = ("master_weights", "optimizer_m", "optimizer_v")
    replicated = ("weights", "weight_grads") if stage1 else ("weights",)
    if not stage1:
        sharded += ("weight_grads",)
    if stage3:
        replicated, sharded = (), sharded + ("weights",)
    model = replicated + sharded

    def total(r, keys):
        return sum(r["categories"][k]["bytes"] for k in keys)

    totals = []
    for rank, r in enumerate(ranks):
        if r["world_size"] != n or r["rank"] != rank:
            fail(f"report {rank} is rank {r['rank']} of {r['world_size']}")
        for k in replicated:
            if r["categories"][k] != one["categories"][k]:
                fail(f"rank {rank}: {k} differ from one rank's")
        share = total(r, sharded) * n / total(one, sharded)
        if abs(share - 1) > 0.02:
            fail(f"rank {rank}: sharded state x N is {share:.4f} of one rank's")
        totals.append(total(r, model))
    balance = max(totals) / min(totals)
    if balance > 1.02:
        fail(f"largest rank {max(totals)} bytes, smallest {min(totals)}: "
             f"{balance:.4f}")
    per_param = [t / one["params"] for t in totals]
    print(f"zero-memory ok: N={n}, {one['params']} params, bytes/param "
          f"{min(per_param):.4f}..{max(per_param):.4f}, max/min {balance:.4f}")


def raw_tensors(path, offsets=None, shapes=None):
    """name -> (dtype, shape, bytes) of a safetensors file, any dtype. With
    `offsets` (a dict), the file's O3 flat-shard piece offsets (its
    __metadata__ "shard_offsets") are added to it; with `shapes`, the
    shapes of the params whose pieces it holds (ZeRO stage 3,
    "param_shapes": name=2x3;...)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", None) or {}
    if offsets is not None:
        for item in meta.get("shard_offsets", "").split(";"):
            if item:
                name, offset = item.rsplit("=", 1)
                offsets[name] = int(offset)
    if shapes is not None:
        for item in meta.get("param_shapes", "").split(";"):
            if item:
                name, shape = item.rsplit("=", 1)
                shapes[name] = tuple(int(d) for d in shape.split("x") if d)
    return {k: (v["dtype"], tuple(v["shape"]),
                blob[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]])
            for k, v in header.items()}


def checkpoint_tensors(path):
    """Every tensor of a checkpoint; at O3 the pieces of a param's master
    and moments (one per rank that holds part of it) joined in offset
    order, so that checkpoints of different world sizes compare (and a ZeRO
    stage 3 param's pieces in its shape, as stages 1-2 store it)."""
    import glob
    import os
    stem, ext = os.path.splitext(path)
    out = raw_tensors(path)
    pieces, shapes = {}, {}
    for shard in sorted(glob.glob(glob.escape(stem) + ".rank*" + ext)):
        offsets = {}
        for name, t in raw_tensors(shard, offsets, shapes).items():
            if name in offsets:
                pieces.setdefault(name, []).append((offsets[name], t))
                continue
            if name in out:
                fail(f"{name} is in {shard} and in another part of {path}")
            out[name] = t
    for name, parts in pieces.items():
        parts.sort(key=lambda p: p[0])
        data, size = b"", 0
        for offset, (dtype, shape, blob) in parts:
            if offset != size:
                fail(f"the pieces of {name} in {path} do not join at {size}")
            data += blob
            size += shape[0]
        out[name] = (parts[0][1][0], shapes.get(name, (size,)), data)
    return out


def tensors(args):
    a, b = checkpoint_tensors(args[0]), checkpoint_tensors(args[1])
    if set(a) != set(b):
        fail(f"different tensors: {sorted(set(a) ^ set(b))}")
    for name in sorted(a):
        if a[name] != b[name]:
            fail(f"tensor {name} differs")
    print(f"tensors ok: {len(a)} tensors byte-identical")


def timed(args):
    import subprocess
    import time
    limit, cmd = float(args[0]), args[1:]
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             timeout=limit + 30)
        status, text = out.returncode, out.stdout
    except subprocess.TimeoutExpired as e:
        status, text = "timeout", (e.stdout or b"").decode(errors="replace")
    elapsed = time.monotonic() - start
    print(text)
    print(f"exit status {status} after {elapsed:.1f} s")
    if status == 0 or status == "timeout" or elapsed >= limit:
        fail(f"expected a non-zero exit within {limit} s")


try:
    import ml_dtypes

    np.float8_e4m3fn = ml_dtypes.float8_e4m3fn
    np.float8_e5m2 = ml_dtypes.float8_e5m2
except ImportError:
    pass

if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    {"data": data, "losses": losses, "state": state, "ratio": ratio,
     "memory": memory, "timed": timed, "tensors": tensors,
     "zero-memory": zero_memory}[cmd](rest)
