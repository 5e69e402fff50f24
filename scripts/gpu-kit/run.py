"""The GPU kit's checks and timings (run by run.sh; docs/GPU.md).

    python3 run.py KIT_DIR REPORT_DIR

In order: the host (glibc against what the kit needs, the NVIDIA driver
against CUDA's minimum), the CUDA libraries (bin/msamp-cuda-libs: the
backend's own search), versions, the CUDA test binaries (kernels, GEMM,
collectives; device-free ones everywhere), every precompiled step against
its CPU reference losses, FP8 vs BF16 GEMM timings, step timings, and
PyTorch BF16 eager / torch.compile timings when torch imports. Without a GPU
only what needs none runs, and the report says that no GPU was found.

Standard library only: the host's python3 may have nothing else.
"""
import glob
import json
import os
import platform
import re
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time

CUDA_DRIVER_MIN = {13: 580, 12: 525}  # CUDA major -> minimum driver branch

# $MSAMP_KIT_DEADLINE_S bounds the whole run: every command gets at most the
# time left, and once it is spent the remaining ones are reported as not run
# (timeouts, status 124) instead of the run being killed from outside with
# no report written; one command gets at most half of the time left, so a
# hang early on leaves time for the later checks. Leased GPU time is often counted in minutes.
DEADLINE = None


def time_left():
    return None if DEADLINE is None else DEADLINE - time.time()


def sh(cmd, env=None, timeout=600, cwd=None):
    """(exit status, stdout+stderr); a missing program or a timeout is
    reported as status 127 / 124 with the reason as output."""
    left = time_left()
    if left is not None:
        if left < 1:
            return 124, "(not run: the kit's deadline, MSAMP_KIT_DEADLINE_S, " \
                "has passed)"
        # One hung command may take half of what is left, not all of it.
        timeout = min(timeout, left, max(30.0, left / 2))
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except FileNotFoundError as e:
        return 127, str(e)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return 124, out + "\n(timed out after %d s)" % timeout


class Report:
    def __init__(self, kit, out):
        self.kit, self.out = kit, out
        self.data = {"kit": {}, "host": {}, "libraries": {}, "tests": [],
                     "steps": [], "multi_rank": [], "gemm": [],
                     "step_timing": [], "step_timing_pairs": [],
                     "pytorch": {}, "profile": {}, "failures": []}

    def fail(self, what):
        self.data["failures"].append(what)
        print("FAIL: " + what, flush=True)

    def say(self, text):
        print(text, flush=True)


def site_packages():
    dirs = list(site.getsitepackages())
    user = site.getusersitepackages()
    if isinstance(user, str):
        dirs.append(user)
    return [d for d in dirs if os.path.isdir(d)]


def glibc_tuple(text):
    m = re.search(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_host(r, kit_info):
    host = r.data["host"]
    host["machine"] = platform.machine()
    host["kernel"] = platform.release()
    libc = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else ""
    host["glibc"] = libc
    need = kit_info.get("glibc_min", "")
    have_t, need_t = glibc_tuple(libc), glibc_tuple(need)
    host["glibc_ok"] = bool(have_t and need_t and have_t >= need_t)
    if not host["glibc_ok"]:
        r.fail("glibc: the kit needs glibc >= %s, this host has '%s'" %
               (need, libc or "none found"))
    if platform.machine() not in ("x86_64", "AMD64"):
        r.fail("machine: the kit is built for x86_64, this host is %s" %
               platform.machine())
    # The driver: nvidia-smi, else the kernel module's version file.
    driver, gpus = "", []
    code, out = sh(["nvidia-smi", "--query-gpu=name,driver_version,"
                    "memory.total,compute_cap", "--format=csv,noheader"],
                   timeout=60)
    if code == 0:
        for line in out.strip().splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 4:
                gpus.append({"name": parts[0], "driver": parts[1],
                             "memory": parts[2], "compute_cap": parts[3]})
                driver = parts[1]
    elif os.path.exists("/proc/driver/nvidia/version"):
        text = open("/proc/driver/nvidia/version").read()
        m = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)",
                      text)
        driver = m.group(1) if m else ""
    host["nvidia_smi"] = "ok" if code == 0 else out.strip()[:200]
    host["driver"] = driver
    host["gpus"] = gpus
    major = kit_info.get("cuda_major", 13)
    need_driver = CUDA_DRIVER_MIN.get(major, 0)
    host["driver_min"] = need_driver
    if driver:
        host["driver_ok"] = int(driver.split(".")[0]) >= need_driver
        if not host["driver_ok"]:
            r.fail("driver: CUDA %d needs driver >= %d, this host has %s" %
                   (major, need_driver, driver))
    else:
        host["driver_ok"] = False
    host["gpu_found"] = bool(gpus) and host["driver_ok"]
    if not gpus:
        r.say("NO GPU FOUND: %s; running only what needs none" %
              ("no NVIDIA driver (no nvidia-smi, no /proc/driver/nvidia)"
               if not driver else "nvidia-smi lists no GPU"))
    return host["gpu_found"]


def find_libraries(r, env):
    tool = os.path.join(r.kit, "bin", "msamp-cuda-libs")
    code, out = sh([tool], env=env, timeout=60)
    libs = r.data["libraries"]
    libs["output"] = out.strip().splitlines()
    libs["complete"] = code == 0
    for line in libs["output"]:
        r.say("  " + line)
    # The library versions, as each library reports its own (no GPU
    # needed): cudaRuntimeGetVersion, cublasLtGetVersion, ncclGetVersion.
    libs["versions"] = {}
    for line in libs["output"]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "found":
            version = library_version(parts[1], parts[2])
            libs["versions"][parts[1]] = version
            r.say("  version of %s: %s" % (parts[1], version))
    ld = ""
    if code in (0, 1):
        _, ld = sh([tool, "--ld-path"], env=env, timeout=60)
        ld = ld.strip()
    else:
        r.fail("msamp-cuda-libs exited with %d: %s" % (code, out.strip()))
    libs["ld_path"] = ld
    return code == 0, ld


def library_version(soname, path):
    """The version `path` reports of itself, or why it could not."""
    import ctypes
    try:
        lib = ctypes.CDLL(path)
        if soname.startswith("libcudart"):
            v = ctypes.c_int(0)
            lib.cudaRuntimeGetVersion(ctypes.byref(v))
            return "%d.%d" % (v.value // 1000, v.value % 1000 // 10)
        if soname.startswith("libcublasLt"):
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            v = lib.cublasLtGetVersion()
            return "%d.%d.%d" % (v // 10000, v % 10000 // 100, v % 100)
        if soname.startswith("libnccl"):
            v = ctypes.c_int(0)
            lib.ncclGetVersion(ctypes.byref(v))
            return "%d.%d.%d" % (v.value // 10000, v.value % 10000 // 100,
                                 v.value % 100)
    except (OSError, AttributeError) as e:
        return "unknown (%s)" % e
    return "unknown"


def run_tests(r, env, gpu):
    """Each test binary with --gtest_output=json; counts and failures."""
    tests_dir = os.path.join(r.kit, "tests")
    out_dir = os.path.join(r.out, "tests")
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(tests_dir)):
        path = os.path.join(tests_dir, name)
        if not name.startswith("MSAMP") or not os.access(path, os.X_OK) \
                or name.endswith(".so"):
            continue
        result = os.path.join(out_dir, name + ".json")
        start = time.time()
        code, out = sh([path, "--gtest_output=json:" + result], env=env,
                       timeout=480)
        entry = {"binary": name, "exit": code,
                 "seconds": round(time.time() - start, 1)}
        open(os.path.join(out_dir, name + ".log"), "w").write(out)
        passed = failed = skipped = 0
        # gtest's JSON has no skip message; its text log has it on the line
        # after "FILE:LINE: Skipped".
        skip_reasons = set(m[:160] for m in
                           re.findall(r": Skipped\n(.*)", out))
        if os.path.exists(result):
            for suite in json.load(open(result)).get("testsuites", []):
                for t in suite.get("testsuite", []):
                    if t.get("result") == "SKIPPED" or \
                            t.get("status") == "NOTRUN":
                        skipped += 1
                    elif t.get("failures"):
                        failed += 1
                    else:
                        passed += 1
        entry.update(passed=passed, failed=failed, skipped=skipped,
                     skip_reasons=sorted(skip_reasons)[:5])
        if code != 0 and failed == 0:
            entry["note"] = out.strip().splitlines()[-1:] if out else []
        r.data["tests"].append(entry)
        r.say("  %-30s %3d passed %3d failed %3d skipped  (%s s)" %
              (name, passed, failed, skipped, entry["seconds"]))
        if code != 0 or failed:
            r.fail("test binary %s: exit %d, %d failed (log: tests/%s.log)" %
                   (name, code, failed, name))
        # Without a GPU the device tests must skip for that reason, not
        # for another or not at all.
        if not gpu and skipped and \
                not any("no CUDA device" in m for m in skip_reasons):
            r.fail("%s: tests skipped, but not for 'no CUDA device': %s" %
                   (name, sorted(skip_reasons)[:3]))


def read_losses(path):
    losses = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                losses.append(json.loads(line).get("loss"))
    return losses


class MemorySampler(threading.Thread):
    """Peak device memory of a process tree, sampled with nvidia-smi."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_mib, self.stop = 0, False

    def run(self):
        while not self.stop:
            code, out = sh(["nvidia-smi", "--query-gpu=memory.used",
                            "--format=csv,noheader,nounits"], timeout=10)
            if code == 0:
                for v in out.split():
                    if v.isdigit():
                        self.peak_mib = max(self.peak_mib, int(v))
            time.sleep(0.2)


def step_command(r, env, name, steps, seed, log=None, cubins=False,
                 require_cubins=True):
    """(msamp-run's command line, its environment) for `steps` steps of the
    precompiled step `name` on the GPU from synthetic data; with `cubins`
    its kernels come from the kit's ahead-of-time cubins."""
    step_dir = os.path.join(r.kit, "steps", name)
    e = dict(env)
    if cubins:
        e["MSAMP_CUDA_CUBIN_DIR"] = os.path.join(step_dir, "cubin")
        if require_cubins:
            e["MSAMP_CUDA_REQUIRE_CUBIN"] = "1"
    cmd = [os.path.join(r.kit, "bin", "msamp-run"), step_dir, "--backend",
           "cuda", "--cuda-chip", "sm_90", "--steps", str(steps),
           "--synthetic", "--seed", str(seed), "--quiet"]
    if log:
        cmd += ["--log-json", log]
    return cmd, e


def compare_losses(losses, reference, tolerance):
    """(within tolerance, worst relative error): every step's loss there,
    finite, and within `tolerance` of the reference relatively."""
    worst = 0.0
    ok = len(losses) == len(reference)
    for got, want in zip(losses, reference):
        if got is None or want is None or got != got:
            ok = False
            continue
        worst = max(worst, abs(got - want) / max(1e-6, abs(want)))
    return ok and worst <= tolerance, worst


def run_step(r, env, step, steps, log, cubins, graphs=True):
    """msamp-run on the precompiled step; `graphs` False runs every step
    eagerly (MSAMP_CUDA_GRAPHS=0), True as the session's CUDA graph (the
    default, docs/GPU.md "The step as a CUDA graph")."""
    cmd, e = step_command(r, env, step["name"], steps, step["seed"], log,
                          cubins)
    e["MSAMP_CUDA_GRAPHS"] = "1" if graphs else "0"
    start = time.time()
    code, out = sh(cmd + step.get("run_args", []), env=e, timeout=540)
    return code, out, time.time() - start


def check_steps(r, env, gpu, sm90):
    steps = json.load(open(os.path.join(r.kit, "steps", "steps.json")))
    out_dir = os.path.join(r.out, "steps")
    os.makedirs(out_dir, exist_ok=True)
    for step in steps:
        entry = {"name": step["name"], "level": step["level"],
                 "tolerance": step["tolerance"],
                 "reference": step["reference"]}
        r.data["steps"].append(entry)
        if not gpu:
            # What needs no GPU: the kit's msamp-run, session and runtime
            # load and refuse the CUDA step with the backend's reason.
            code, out, _ = run_step(r, env, step, 1,
                                    os.path.join(out_dir, step["name"] +
                                                 ".jsonl"), False)
            entry["status"] = "skipped: no GPU"
            entry["no_gpu_exit"] = code
            entry["no_gpu_message"] = out.strip().splitlines()[-1:] \
                if out.strip() else []
            if code == 0 or "cuda" not in out.lower():
                r.fail("step %s: without a GPU msamp-run should refuse the "
                       "CUDA backend, got exit %d: %s" %
                       (step["name"], code, out.strip()[-300:]))
            continue
        log = os.path.join(out_dir, step["name"] + ".jsonl")
        code, out, secs = run_step(r, env, step, len(step["reference"]), log,
                                   sm90)
        open(os.path.join(out_dir, step["name"] + ".log"), "w").write(out)
        losses = read_losses(log)
        entry.update(losses=losses, exit=code, seconds=round(secs, 2),
                     cubins=sm90)
        ok, worst = compare_losses(losses, step["reference"],
                                   step["tolerance"])
        ok = ok and code == 0
        entry["max_rel_error"] = worst
        entry["status"] = "pass" if ok else "FAIL"
        # Whether the session replayed the step as a CUDA graph (it says in
        # one line why not), and the same steps eagerly next to it.
        note = [l for l in out.splitlines() if "CUDA graphs off:" in l]
        entry["cuda_graph"] = note[0].split("CUDA graphs off: ", 1)[1] \
            if note else ("used" if code == 0 else "-")
        eager_log = os.path.join(out_dir, step["name"] + ".eager.jsonl")
        ecode, eout, _ = run_step(r, env, step, len(step["reference"]),
                                  eager_log, sm90, graphs=False)
        eager = read_losses(eager_log)
        entry["eager_losses"] = eager
        entry["graph_vs_eager"] = "bit-identical" if ecode == 0 and \
            eager == losses else "differ"
        eok, eworst = compare_losses(eager, step["reference"],
                                     step["tolerance"])
        if not (eok and ecode == 0):
            ok = False
            entry["status"] = "FAIL"
        r.say("  %-16s %s  max rel %.2e (tol %.0e), graph: %s, vs eager: %s"
              % (step["name"], entry["status"], worst, step["tolerance"],
                 entry["cuda_graph"], entry["graph_vs_eager"]))
        if not ok:
            r.fail("step %s: losses %s vs CPU %s (tol %g, exit %d)%s" %
                   (step["name"], losses, step["reference"],
                    step["tolerance"], code,
                    ": " + out.strip()[-300:] if code else ""))


def check_multi_rank(r, env, gpu, sm90):
    """Each multi_rank.json entry: the step on 2 data-parallel ranks, one
    GPU each, meeting through NCCL (MSAMP_WORLD_SIZE, MSAMP_RANK,
    MSAMP_NCCL_ID; RuntimeABI.md 10.5), against the same 2-rank job on the
    CPU (Open MPI) at kit build. Skipped, and said so, with fewer GPUs."""
    path = os.path.join(r.kit, "steps", "multi_rank.json")
    entries = json.load(open(path)) if os.path.exists(path) else []
    gpus = len(r.data["host"]["gpus"])
    if not entries:
        r.data["multi_rank"].append({"status": "skipped: the kit has no "
                                     "multi-rank reference (no MPI where "
                                     "it was built)"})
        r.say("  SKIPPED: no multi-rank reference in this kit")
    for entry in entries:
        result = {"name": entry["step"] + " x%d ranks" % entry["ranks"],
                  "tolerance": entry["tolerance"],
                  "reference": entry["reference"]}
        r.data["multi_rank"].append(result)
        if not gpu or gpus < entry["ranks"]:
            result["status"] = "skipped: %d GPU(s), needs %d" % (
                gpus if gpu else 0, entry["ranks"])
            r.say("  %-16s %s" % (result["name"], result["status"]))
            continue
        tmp = tempfile.mkdtemp()
        log = os.path.join(tmp, "rank0.jsonl")
        procs = []
        for rank in range(entry["ranks"]):
            # Every rank names the same --log-json (the ranks must agree on
            # their options); rank 0 writes it.
            cmd, e = step_command(r, env, entry["step"],
                                  len(entry["reference"]), entry["seed"], log,
                                  sm90)
            e.update(MSAMP_WORLD_SIZE=str(entry["ranks"]),
                     MSAMP_RANK=str(rank), MSAMP_LOCAL_RANK=str(rank),
                     MSAMP_NCCL_ID=os.path.join(tmp, "nccl.id"),
                     MSAMP_NCCL_TIMEOUT_S="120")
            out = open(os.path.join(tmp, "rank%d.log" % rank), "w")
            procs.append((subprocess.Popen(cmd, env=e, stdout=out,
                                           stderr=subprocess.STDOUT), out))
        left = time_left()
        limit = 300 if left is None else max(1.0, min(300, left / 2))
        codes = []
        for proc, out in procs:
            try:
                codes.append(proc.wait(timeout=limit))
            except subprocess.TimeoutExpired:
                proc.kill()
                codes.append(124)
            out.close()
        text = "".join(open(os.path.join(tmp, "rank%d.log" % k)).read()
                       for k in range(len(procs)))
        open(os.path.join(r.out, "multi_rank_%s.log" % entry["step"]),
             "w").write(text)
        losses = read_losses(log)
        ok, worst = compare_losses(losses, entry["reference"],
                                   entry["tolerance"])
        ok = ok and all(c == 0 for c in codes)
        result.update(losses=losses, exits=codes, max_rel_error=worst,
                      status="pass" if ok else "FAIL")
        r.say("  %-16s %s  max rel %.2e (tol %.0e)" %
              (result["name"], result["status"], worst, entry["tolerance"]))
        if not ok:
            r.fail("multi-rank %s: exits %s, losses %s vs CPU %s: %s" %
                   (result["name"], codes, losses, entry["reference"],
                    text.strip()[-300:]))
        shutil.rmtree(tmp, ignore_errors=True)


# The sections of a run, in order; MSAMP_KIT_ONLY=a,b runs only those (the
# report says which were left out): a rerun of one check on a GPU lent by
# the minute.
SECTIONS = ("tests", "steps", "multi-rank", "gemm", "timing", "profile",
            "pytorch")

TIMED_STEPS = 22  # the first two (warm-up, capture) are not counted


def step_times(log):
    """The "step_ms" of every line of a --log-step-time log, in order."""
    times = []
    with open(log) as f:
        for line in f:
            if line.strip():
                times.append(json.loads(line).get("step_ms"))
    return times


def upper_median(values):
    """The middle value of `values` (the upper one of an even count), the
    kit's median of step times, rounds and differences."""
    return sorted(values)[len(values) // 2]


def pair_text(pair):
    """One line of a paired_differences entry, for the log and the report."""
    return "%s - %s: %s ms/step per round, median %s" % (
        pair["step"], pair["vs"], pair["ms_difference_rounds"],
        pair["ms_difference_median"])


def timing_rounds():
    """$MSAMP_KIT_TIMING_ROUNDS: how many times the graph timing of every
    timed step runs, in rounds (A B C, A B C, ...), so that two steps are
    compared on the same machine minutes apart rather than once each; 1
    when unset. A bad value is a failure of the run."""
    text = os.environ.get("MSAMP_KIT_TIMING_ROUNDS", "1")
    if not text.isdigit() or not 1 <= int(text) <= 20:
        raise ValueError("MSAMP_KIT_TIMING_ROUNDS must be 1 to 20, not %r"
                         % text)
    return int(text)


def paired_differences(entries):
    """For each timed step X that has a twin X-inline: X's graph ms/step
    minus the twin's, per round (the two ran next to each other), and
    their median. Entries: time_steps' step_timing entries."""
    by_name = {e["name"]: e for e in entries if "ms_per_step_rounds" in e}
    pairs = []
    for name, e in sorted(by_name.items()):
        twin = by_name.get(name + "-inline")
        if not twin:
            continue
        diffs = [round(a - b, 2) for a, b in zip(e["ms_per_step_rounds"],
                                                  twin["ms_per_step_rounds"])]
        pairs.append({"step": name, "vs": twin["name"],
                      "ms_difference_rounds": diffs,
                      "ms_difference_median":
                          upper_median(diffs) if diffs else None})
    return pairs


def time_steps(r, env, rounds=1):
    """ms/step of the timed steps, from msamp-run's own per-step wall times
    (--log-step-time: each step until its work finished on the GPU): the
    median of steps 3 to TIMED_STEPS, so the eager warm-up step and the
    step that captures the graph are reported apart, and process start-up
    is never in it; and sampled peak memory. As a CUDA graph in each of
    `rounds` rounds over all timed steps (ms_per_step: the median of the
    rounds' medians), eagerly in the first."""
    steps = [s for s in json.load(open(os.path.join(r.kit, "steps",
                                                     "steps.json")))
             if s.get("timed")]
    entries = {s["name"]: {"name": s["name"], "level": s["level"]}
               for s in steps}
    peaks = {s["name"]: 0 for s in steps}

    def timed_run(step, graphs, entry):
        log = os.path.join(tmp, "timed.jsonl")
        step_run = dict(step)
        step_run["run_args"] = step.get("run_args", []) + ["--log-step-time"]
        code, out, _ = run_step(r, env, step_run, TIMED_STEPS, log, True,
                                graphs)
        times = step_times(log) if code == 0 else []
        if code or len(times) != TIMED_STEPS or None in times:
            entry["status"] = "FAIL"
            r.fail("timing %s (%s): msamp-run exited %d with %d step "
                   "times: %s" % (step["name"], "graph" if graphs else "eager",
                                  code, len(times), out.strip()[-300:]))
            return None
        steady = sorted(times[2:])
        if graphs:
            note = [l for l in out.splitlines() if "CUDA graphs off:" in l]
            entry["cuda_graph"] = note[0].split("CUDA graphs off: ", 1)[1] \
                if note else "used"
        return steady, times[:2]

    tmp = tempfile.mkdtemp()
    for round_ in range(rounds):
        for step in steps:
            entry = entries[step["name"]]
            if entry.get("status") == "FAIL":
                continue
            sampler = MemorySampler()
            sampler.start()
            # As a CUDA graph (from the second step on) and, in the first
            # round, eagerly, one after the other on the same GPU.
            for graphs, key in ((True, "ms_per_step"),
                                (False, "ms_per_step_eager")):
                if not graphs and round_ > 0:
                    continue
                result = timed_run(step, graphs, entry)
                if result is None:
                    continue
                steady, first_two = result
                median = round(upper_median(steady), 2)
                if graphs:
                    entry.setdefault("ms_per_step_rounds", []).append(median)
                    entry[key + "_min"] = round(
                        min(steady[0], entry.get(key + "_min", steady[0])), 2)
                else:
                    entry[key] = median
                    entry[key + "_min"] = round(steady[0], 2)
                if round_ == 0:
                    entry[key + "_first_two"] = [round(t, 1)
                                                 for t in first_two]
            sampler.stop = True
            sampler.join()
            peaks[step["name"]] = max(peaks[step["name"]], sampler.peak_mib)
    shutil.rmtree(tmp, ignore_errors=True)
    for step in steps:
        entry = entries[step["name"]]
        if entry.get("ms_per_step_rounds"):
            entry["ms_per_step"] = upper_median(entry["ms_per_step_rounds"])
        if entry.get("status") != "FAIL":
            entry["peak_device_mib_sampled"] = peaks[step["name"]]
            entry["predicted_ms"] = step.get("predicted_ms")
        r.data["step_timing"].append(entry)
        r.say("  %-16s %s" % (step["name"], entry))
    r.data["step_timing_pairs"] = paired_differences(
        r.data["step_timing"])
    for pair in r.data["step_timing_pairs"]:
        r.say("  " + pair_text(pair))


def time_gemms(r, env):
    shapes = json.load(open(os.path.join(r.kit, "steps",
                                          "gemm_shapes.json")))
    bench = os.path.join(r.kit, "bin", "cuda_gemm_bench")
    code, out = sh([bench, "--shapes", ",".join(shapes), "--iters", "20"],
                   env=env, timeout=300)
    open(os.path.join(r.out, "gemm_bench.log"), "w").write(out)
    if code != 0:
        r.fail("cuda_gemm_bench exited %d: %s" % (code, out.strip()[-300:]))
    for line in out.splitlines():
        if line.startswith("RESULT"):
            fields = dict(f.split("=", 1) for f in line.split()[1:]
                          if "=" in f)
            r.data["gemm"].append(fields)
            r.say("  " + line)
    # The runtime's Adam and state scan (docs/GPU.md "Runtime kernels at
    # bandwidth"): their RESULT lines join the GEMM ones.
    bench = os.path.join(r.kit, "bin", "cuda_runtime_bw_bench")
    code, out = sh([bench, "--iters", "20"], env=env, timeout=300)
    open(os.path.join(r.out, "runtime_bw_bench.log"), "w").write(out)
    if code != 0:
        r.fail("cuda_runtime_bw_bench exited %d: %s"
               % (code, out.strip()[-300:]))
    for line in out.splitlines():
        if line.startswith("RESULT"):
            r.data["gemm"].append(dict(f.split("=", 1)
                                       for f in line.split()[1:] if "=" in f))
            r.say("  " + line)


def find_ncu():
    for candidate in [shutil.which("ncu"), "/usr/local/cuda/bin/ncu"] + \
            sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"),
                   reverse=True):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def kernel_family(name):
    """Where a kernel comes from: the compiler's, the runtime's, cuBLASLt."""
    if name.startswith("train_step"):
        return "generated"
    if "msamp::" in name:
        return "runtime"
    if any(k in name for k in ("nvjet", "xmma", "gemm", "cublas",
                               "splitKreduce")):
        return "cublasLt"
    return "other"


def profile_step(r, env):
    """With MSAMP_KIT_PROFILE=1: every kernel of one GPT-2-small O2 step
    timed by ncu (one metric, gpu__time_duration), summed by family and by
    kernel. The first step also pays the first touch of every buffer."""
    prof = r.data["profile"]
    ncu = find_ncu()
    steps = json.load(open(os.path.join(r.kit, "steps", "steps.json")))
    step = next((s for s in steps if s["name"] == "gpt2s-o2"), None)
    if not ncu or not step:
        prof["status"] = "unavailable: %s" % (
            "no ncu (Nsight Compute) on this host" if not ncu
            else "this kit has no GPT-2-small step")
        r.say("  " + prof["status"])
        return
    cmd, e = step_command(r, env, step["name"], 1, step["seed"],
                          cubins=True, require_cubins=False)
    csv_path = os.path.join(r.out, "ncu-gpt2s-o2.csv")
    code, out = sh([ncu, "--clock-control", "none", "--metrics",
                    "gpu__time_duration.sum", "--csv", "--page", "raw"] + cmd,
                   env=e, timeout=400)
    open(csv_path, "w").write(out)
    import csv
    rows = [row for row in csv.reader(out.splitlines())]
    header = next((i for i, row in enumerate(rows) if "Kernel Name" in row),
                  None)
    if code != 0 or header is None:
        prof["status"] = "failed: ncu exited %d: %s" % (code,
                                                       out.strip()[-300:])
        r.say("  " + prof["status"])
        return
    names = rows[header]
    ki, ti = names.index("Kernel Name"), \
        names.index("gpu__time_duration.sum")
    gi = names.index("Grid Size") if "Grid Size" in names else None
    families, kernels = {}, {}
    for row in rows[header + 1:]:
        try:
            ns = float(row[ti].replace(",", ""))
        except (ValueError, IndexError):
            continue  # the units row
        family = kernel_family(row[ki])
        key = row[ki].split("(")[0][:80]
        if family == "generated" and gi is not None:
            # Every generated kernel has the same name: tell them apart by
            # their grid.
            key += " grid " + row[gi]
        for table, k in ((families, family), (kernels, key)):
            n, t = table.get(k, (0, 0.0))
            table[k] = (n + 1, t + ns / 1e6)
    prof["status"] = "measured"
    prof["kernels"] = sum(n for n, _ in families.values())
    prof["kernel_ms"] = round(sum(t for _, t in families.values()), 2)
    prof["families"] = {k: {"kernels": n, "ms": round(t, 2)}
                        for k, (n, t) in families.items()}
    prof["top"] = [{"kernel": k, "launches": n, "ms": round(t, 2)}
                   for k, (n, t) in sorted(kernels.items(),
                                           key=lambda kv: -kv[1][1])[:10]]
    r.say("  one step: %d kernels, %.1f ms of kernel time; %s" % (
        prof["kernels"], prof["kernel_ms"], ", ".join(
            "%s %.1f ms (%d)" % (k, v["ms"], v["kernels"])
            for k, v in sorted(prof["families"].items()))))


TORCH_SCRIPT = r'''
import json, sys, time
import torch, torch.nn as nn
cfg = json.loads(sys.argv[1])
torch.backends.cuda.matmul.allow_tf32 = False
class Block(nn.Module):
    def __init__(s, d, h, f):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        s.attn = nn.MultiheadAttention(d, h, batch_first=True)
        s.mlp = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Linear(f, d))
    def forward(s, x, mask):
        y = s.ln1(x)
        x = x + s.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
        return x + s.mlp(s.ln2(x))
class LM(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.emb = nn.Embedding(c["vocab"], c["dim"])
        s.pos = nn.Parameter(torch.zeros(c["seq"], c["dim"]))
        s.blocks = nn.ModuleList(Block(c["dim"], c["heads"], c["ffn"])
                                 for _ in range(c["layers"]))
        s.ln = nn.LayerNorm(c["dim"])
        s.head = nn.Linear(c["dim"], c["vocab"], bias=False)
    def forward(s, ids, mask):
        x = s.emb(ids) + s.pos
        for b in s.blocks:
            x = b(x, mask)
        return s.head(s.ln(x))
dev = "cuda"
m = LM(cfg).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
ids = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device=dev)
tgt = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device=dev)
mask = torch.triu(torch.full((cfg["seq"], cfg["seq"]), float("-inf"),
                             device=dev, dtype=torch.bfloat16), 1)
def step(model):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(
        model(ids, mask).float().view(-1, cfg["vocab"]), tgt.view(-1))
    loss.backward()
    opt.step()
def timed(model, n=20):
    # The median of n steps, each until its work finished (as msamp-run's
    # step_ms), after warm-up steps that also let torch.compile settle.
    for _ in range(5):
        step(model)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        step(model)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1000)
    return sorted(times)[n // 2], torch.cuda.max_memory_allocated()
out = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
ms, mem = timed(m)
out["eager_bf16_ms"], out["eager_peak_mib"] = round(ms, 2), mem >> 20
try:
    ms, mem = timed(torch.compile(m))
    out["compile_bf16_ms"], out["compile_peak_mib"] = round(ms, 2), mem >> 20
except Exception as e:
    out["compile_bf16"] = "unavailable: %s: %s" % (type(e).__name__,
                                                   str(e)[:200])
print("TORCH " + json.dumps(out))
'''


def time_pytorch(r, gpu, model):
    pt = r.data["pytorch"]
    code, out = sh([sys.executable, "-c",
                    "import torch; print(torch.__version__, "
                    "torch.cuda.is_available())"], timeout=120)
    if code != 0:
        pt["status"] = "unavailable: import torch failed: %s" % \
            (out.strip().splitlines() or ["?"])[-1]
    elif not gpu or "True" not in out:
        pt["status"] = "unavailable: torch %s sees no CUDA device" % \
            out.split()[0]
    elif model is None:
        pt["status"] = "unavailable: this is a --quick kit (no GPT-2-small)"
    else:
        code, out = sh([sys.executable, "-c", TORCH_SCRIPT,
                        json.dumps(model)], timeout=540)
        lines = [l for l in out.splitlines() if l.startswith("TORCH ")]
        if code == 0 and lines:
            pt.update(json.loads(lines[-1][6:]))
            pt["status"] = "measured"
        else:
            pt["status"] = "unavailable: the PyTorch run failed: %s" % \
                out.strip()[-300:]
    r.say("  PyTorch: %s" % pt.get("status"))


def write_report(r, gpu):
    d = r.data
    lines = ["msamp GPU kit report", "=" * 20,
             "kit: commit %s, built %s%s" % (
                 d["kit"].get("commit"), d["kit"].get("date"),
                 " (quick)" if d["kit"].get("quick") else ""),
             "host: %s, glibc %s, driver %s" % (
                 d["host"].get("machine"), d["host"].get("glibc"),
                 d["host"].get("driver") or "none"),
             "GPU: %s" % (", ".join(g["name"] for g in d["host"]["gpus"])
                          if gpu else "NO GPU FOUND (only GPU-free checks ran)"),
             "CUDA libraries: %s" % (
                 "found (%s)" % ", ".join(
                     "%s %s" % kv for kv in
                     sorted(d["libraries"].get("versions", {}).items()))
                 if d["libraries"].get("complete")
                 else "MISSING (see report.json)"),
             "", "%-32s %6s %6s %7s" % ("tests", "pass", "fail", "skip")]
    for t in d["tests"]:
        lines.append("%-32s %6d %6d %7d" % (t["binary"], t["passed"],
                                            t["failed"], t["skipped"]))
    lines += ["", "%-18s %-5s %-10s %s" % ("step", "level", "max rel",
                                           "status")]
    for s in d["steps"]:
        lines.append("%-18s %-5s %-10s %s" % (
            s["name"], s["level"],
            "%.2e" % s["max_rel_error"] if "max_rel_error" in s else "-",
            s["status"]))
    for m in d["multi_rank"]:
        lines.append("%-18s %-5s %-10s %s" % (
            m.get("name", "multi-rank"), "",
            "%.2e" % m["max_rel_error"] if "max_rel_error" in m else "-",
            m["status"]))
    if d["gemm"]:
        lines += ["", "GEMM (TFLOP/s): " + "; ".join(
            " ".join("%s=%s" % kv for kv in g.items()) for g in d["gemm"])]
    for s in d["steps"]:
        if "cuda_graph" in s:
            lines.append("CUDA graph of %s: %s; losses vs eager steps: %s" % (
                s["name"], s["cuda_graph"], s.get("graph_vs_eager")))
    for t in d["step_timing"]:
        lines.append("step time %s %s: %s ms/step as a CUDA graph (%s), %s "
                     "eager (predicted %s), peak %s MiB" % (
                         t["name"], t["level"], t.get("ms_per_step"),
                         t.get("cuda_graph"), t.get("ms_per_step_eager"),
                         t.get("predicted_ms"),
                         t.get("peak_device_mib_sampled")))
    for pair in d.get("step_timing_pairs", []):
        lines.append("step time " + pair_text(pair))
    if d["profile"].get("status") == "measured":
        lines.append("kernel time of one GPT-2-small O2 step (ncu): %s ms "
                     "in %d kernels; %s" % (
                         d["profile"]["kernel_ms"], d["profile"]["kernels"],
                         ", ".join("%s %s ms" % (k, v["ms"]) for k, v in
                                   sorted(d["profile"]["families"].items()))))
    elif d["profile"]:
        lines.append("kernel profile: %s" % d["profile"]["status"])
    lines += ["PyTorch: %s" % json.dumps(d["pytorch"]), "",
              "RESULT: %s" % ("FAIL (%d): %s" % (len(d["failures"]),
                                                 "; ".join(d["failures"]))
                              if d["failures"] else
                              "PASS" + ("" if gpu else
                                        " (no GPU found: GPU checks "
                                        "skipped)"))]
    d["gpu_found"] = gpu
    d["result"] = "fail" if d["failures"] else ("pass" if gpu else
                                                "pass-no-gpu")
    json.dump(d, open(os.path.join(r.out, "report.json"), "w"), indent=1)
    text = "\n".join(lines) + "\n"
    open(os.path.join(r.out, "report.txt"), "w").write(text)
    print("\n" + text, end="")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: run.py KIT_DIR REPORT_DIR\n")
        return 2
    kit, out = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    os.makedirs(out, exist_ok=True)
    global DEADLINE
    if os.environ.get("MSAMP_KIT_DEADLINE_S"):
        DEADLINE = time.time() + float(os.environ["MSAMP_KIT_DEADLINE_S"])
    r = Report(kit, out)
    kit_info = json.load(open(os.path.join(kit, "kit.json")))
    r.data["kit"] = kit_info
    r.say("== msamp GPU kit %s (%s)" % (kit_info.get("commit"), kit))
    r.say("== host")
    gpu = check_host(r, kit_info)
    env = dict(os.environ)
    env["MSAMP_PYTHON_SITE_PACKAGES"] = ":".join(site_packages())
    env["TMPDIR"] = tempfile.mkdtemp(prefix="msamp-kit-")
    env["MSAMP_CACHE_DIR"] = os.path.join(env["TMPDIR"], "cache")
    env["MSAMP_FAKE_CUDA_LIB"] = os.path.join(kit, "tests",
                                              "libMSAMPFakeCudaLib.so")
    env["MSAMP_RUN"] = os.path.join(kit, "bin", "msamp-run")
    # MSAMPCudaSessionTests runs the precompiled steps (no compiler here).
    env["MSAMP_TEST_CUDA_STEPS"] = os.path.join(kit, "steps")
    r.say("== CUDA libraries")
    # The kit's C++ runtime also for the binaries with no RUNPATH (those
    # that link no msamp library: msamp-cuda-libs, device-free tests).
    env["LD_LIBRARY_PATH"] = ":".join(
        p for p in [os.path.join(kit, "lib"),
                    os.environ.get("LD_LIBRARY_PATH", "")] if p)
    libs_ok, ld = find_libraries(r, env)
    # Test binaries link cudart directly (before any search could run).
    env["LD_LIBRARY_PATH"] = ":".join(
        p for p in [os.path.join(kit, "lib"), ld,
                    os.environ.get("LD_LIBRARY_PATH", "")] if p)
    if gpu and not libs_ok:
        r.fail("CUDA libraries missing on a GPU host (see above)")
    gpu = gpu and libs_ok
    sm90 = gpu and any(g.get("compute_cap") == "9.0"
                       for g in r.data["host"]["gpus"])
    if gpu and not sm90:
        r.say("  (not sm_90: the steps' kernels are JIT-compiled from PTX)")
    r.say("== versions")
    code, version = sh([env["MSAMP_RUN"], "--version"], env=env, timeout=60)
    r.data["host"]["msamp_run_version"] = version.strip()
    r.say("  " + version.strip())
    if code != 0:
        r.fail("msamp-run --version exited %d: %s" % (code, version.strip()))
    only = set(filter(None, os.environ.get("MSAMP_KIT_ONLY", "").split(",")))
    unknown = only - set(SECTIONS)
    if unknown:
        r.fail("MSAMP_KIT_ONLY names no section %s (sections: %s)" %
               (", ".join(sorted(unknown)), ", ".join(SECTIONS)))
        only = set()

    try:
        rounds = timing_rounds()
    except ValueError as e:
        r.fail(str(e))
        rounds = 1

    def wanted(section):
        if not only or section in only:
            return True
        r.say("== %s: not run (MSAMP_KIT_ONLY)" % section)
        return False
    if wanted("tests"):
        r.say("== tests")
        run_tests(r, env, gpu)
    if wanted("steps"):
        r.say("== precompiled steps vs the CPU reference")
        check_steps(r, env, gpu, sm90)
    if wanted("multi-rank"):
        r.say("== multi-rank (NCCL, one GPU per rank) vs the CPU under MPI")
        check_multi_rank(r, env, gpu, sm90)
    if gpu and wanted("gemm"):
        r.say("== FP8 vs BF16 GEMM")
        time_gemms(r, env)
    if gpu and wanted("timing"):
        r.say("== step timing")
        time_steps(r, env, rounds)
    if gpu and os.environ.get("MSAMP_KIT_PROFILE") == "1" and \
            wanted("profile"):
        r.say("== kernel profile (ncu)")
        profile_step(r, env)
    if wanted("pytorch"):
        r.say("== PyTorch")
        time_pytorch(r, gpu, kit_info.get("torch_model"))
    write_report(r, gpu)
    shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    return 1 if r.data["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
