#!/usr/bin/env bash
# CI check of the GPU kit (ctest msamp-gpu-kit, docs/GPU.md): builds the
# quick kit from this tree, copies it to another directory, runs its run.sh
# from a third, and asserts the report of a host without a GPU: exit 0, "NO
# GPU FOUND", the CUDA libraries found by the backend's search, the
# device-free tests passed, the device tests skipped for want of a device,
# and every precompiled step refused cleanly by msamp-run. On a host with a
# GPU it asserts a passing report instead.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/msamp-kit-ctest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$ROOT/scripts/gpu-kit.sh" "$WORK/built" --quick
# Runs from any directory: a copy, started from elsewhere.
mkdir -p "$WORK/elsewhere" "$WORK/cwd"
cp -a "$WORK/built" "$WORK/elsewhere/kit"
rm -rf "$WORK/built"
status=0
(cd "$WORK/cwd" && env -u LD_LIBRARY_PATH ../elsewhere/kit/run.sh "$WORK/report") || status=$?
"${MSAMP_PYTHON:-python3}" - "$WORK/report" "$status" <<'PY'
import json, sys
report_dir, status = sys.argv[1], int(sys.argv[2])
r = json.load(open(report_dir + "/report.json"))
text = open(report_dir + "/report.txt").read()
problems = []
def need(cond, what):
    if not cond:
        problems.append(what)
need(status == 0, "run.sh exited %d: %s" % (status, r.get("failures")))
need(not r["failures"], "failures: %s" % r["failures"])
need(r["libraries"].get("complete"), "CUDA libraries not found: %s" %
     r["libraries"].get("output"))
tests = {t["binary"]: t for t in r["tests"]}
for name in ("MSAMPNcclTableTests", "MSAMPCudaHostTests",
             "MSAMPCudaLibrarySearchTests"):
    t = tests.get(name, {})
    need(t.get("passed", 0) > 0 and t.get("failed") == 0,
         "%s did not pass: %s" % (name, t))
QUICK_STEPS = ["mlp-o0", "mlp-o2", "mlp-sgd-o2", "lm-o0", "lm-o2", "lm-o2-inline"]
need([s["name"] for s in r["steps"]] == QUICK_STEPS,
     "expected the quick steps %s, got %s" %
     (QUICK_STEPS, [s["name"] for s in r["steps"]]))
if r["gpu_found"]:
    need(r["result"] == "pass", "GPU report did not pass")
    need(all(s["status"] == "pass" for s in r["steps"]), "a step failed")
else:
    need(r["result"] == "pass-no-gpu", "result %s" % r["result"])
    need("NO GPU FOUND" in text, "report.txt does not say NO GPU FOUND")
    for name in ("MSAMPCudaTests", "MSAMPCudaStepTests"):
        t = tests.get(name, {})
        need(t.get("skipped", 0) > 0 and t.get("failed") == 0 and
             any("no CUDA device" in s for s in t.get("skip_reasons", [])),
             "%s did not skip for want of a device: %s" % (name, t))
    for s in r["steps"]:
        need(s["status"] == "skipped: no GPU" and s["no_gpu_exit"] != 0,
             "step %s: %s" % (s["name"], s))
    # The 2-rank checks and their CPU (MPI) references are in the kit, and
    # say why they did not run.
    need(len(r["multi_rank"]) == 2 and
         all(m["status"] == "skipped: 0 GPU(s), needs 2" and
             len(m["reference"]) == 3 for m in r["multi_rank"]),
         "multi-rank: %s" % r["multi_rank"])
    need(r["pytorch"].get("status", "").startswith("unavailable: "),
         "pytorch: %s" % r["pytorch"])
if problems:
    sys.exit("gpu-kit ctest:\n  " + "\n  ".join(problems) + "\n\n" + text)
print("gpu-kit ctest: report as expected (%s)" % r["result"])
PY
