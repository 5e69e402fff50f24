#!/usr/bin/env python3
"""Mutation fuzzer of msamp's MLIR input path (issue 16; docs/Robustness.md).

Mutates the repo's contract graphs (fixed seed: the same cases every run) and
checks each mutant against this oracle:

  * whatever `mlir-opt-22` rejects (or crashes on), msamp-compile rejects with
    exit status 1 and a located error (`FILE:LINE:COL: error:`);
  * whatever msamp-compile accepts, msamp-run runs a step of (--steps 1
    --synthetic); a clean refusal of the step (exit 1 and a message, e.g. a
    non-finite loss from a mutated constant) is counted, not a failure;
  * nothing crashes (a signal, or an exit status other than 0 and 1) and
    nothing hangs (--timeout seconds per tool run);
  * no data is lost: the step runs with --save and --log-json; a run that
    exits 0 leaves a readable checkpoint and a logged step, and no run
    leaves a half-written checkpoint (.tmp) or a broken log line.

With --valgrind N, the first N mutants that mlir-opt-22 rejects are also
parsed by msamp-opt under valgrind, which must report nothing: the heap
corruption of MLIR 22's parser (docs/Robustness.md) does not always crash.

Exit status 0 when no case failed; failing mutants are kept in --keep-dir.

  scripts/fuzz-mlir-input.py --build-dir build --cases 1400    # CI: ~3 min
  scripts/fuzz-mlir-input.py --build-dir build --cases 2000 --seed 7
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Seeds: contract graphs the repo keeps (never files outside the checkout).
SEEDS = [
    REPO / "test" / "Transforms" / "Inputs" / "mlp.mlir",
]
LOCATED = re.compile(r"^[^\n]*:\d+:\d+: error: ", re.M)
SSA = re.compile(r"%[A-Za-z_0-9$.-]+")
INT = re.compile(r"(?<![\w.])\d+(?![\w.])")
FLOAT = re.compile(r"(?<![\w.])\d+\.\d+(e[-+]?\d+)?")
TYPE = re.compile(r"\b(f32|f16|bf16|f64|i1|i32|i64|index)\b")
STRING = re.compile(r'"[^"\n]*"')
INTERESTING_INTS = ["0", "1", "-1", "3", "2147483648", "4294967297",
                    "99999999999999999999"]
INTERESTING_FLOATS = ["1.0e+39", "0.0", "-0.0", "1.0e-45", "3.4e+38",
                      "0x7FC00000", "1.0e+308"]
TYPES = ["f32", "f16", "bf16", "f64", "i1", "i32", "i64", "index",
         "f8E4M3FN", "complex<f32>", "tensor<2xf32>", "none"]
STRINGS = ['"param"', '"input"', '"target"', '"loss"', '"grad"', '""',
           '"forward_backward"', '"train_step"', '"fc1.weight"',
           '"parallel"', '"reduction"', '"adamw"', '"sgd"', '"\\00"']
PUNCT = list("{}()<>[],:=%^@#\"!-*/x?0")


def mutate_once(text, rng):
    """One random edit of `text` (line, token or character level)."""
    lines = text.split("\n")
    kind = rng.randrange(14)
    if kind == 0 and len(lines) > 1:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif kind == 1:  # duplicate a line
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 2 and len(lines) > 2:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:  # a block label copied to another line (issue 16)
        labels = [ln for ln in lines if ln.strip().startswith("^")]
        if labels:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(labels))
    else:
        return mutate_token(text, rng, kind)
    return "\n".join(lines)


def replace_match(text, pattern, rng, choices):
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def mutate_token(text, rng, kind):
    if kind == 4:  # an SSA name for another one of the file
        names = sorted(set(SSA.findall(text)))
        return replace_match(text, SSA, rng, names) if names else text
    if kind == 5:
        return replace_match(text, INT, rng, INTERESTING_INTS)
    if kind == 6:
        return replace_match(text, FLOAT, rng, INTERESTING_FLOATS)
    if kind == 7:
        return replace_match(text, TYPE, rng, TYPES)
    if kind == 8:
        return replace_match(text, STRING, rng, STRINGS)
    if kind == 9 and text:  # delete a character
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1:]
    if kind == 10:  # insert a character
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(PUNCT) + text[i:]
    if kind == 11 and text:  # truncate
        return text[:rng.randrange(len(text))]
    if kind == 12:  # drop an msamp attribute
        m = list(re.finditer(r"msamp\.\w+ = \"[^\"]*\",? ?", text))
        if m:
            m = rng.choice(m)
            return text[:m.start()] + text[m.end():]
        return text
    # kind 13: a tensor dimension for an interesting size
    return replace_match(text, re.compile(r"(?<=[<x])\d+(?=x)"), rng,
                         ["0", "1", "7", "2147483648", "?"])


def run(args, timeout):
    """(status, output); status is 'hang' on a timeout, else the exit code
    (negative: killed by that signal)."""
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return "hang", out


def crashed(status):
    return status != "hang" and status not in (0, 1)


def check_case(text, name, work, tools, opts, use_valgrind):
    """Runs one mutant, written to work/name; returns (outcome, detail,
    whether valgrind ran). Failing outcomes start with 'FAIL'."""
    src = work / name
    src.write_text(text)
    out_dir = work / "out"
    shutil.rmtree(out_dir, ignore_errors=True)
    ref, _ = run([tools["mlir-opt"], str(src), "-o", os.devnull],
                 opts.timeout)
    ref_rejects = ref != 0
    status, log = run([tools["msamp-compile"], str(src), "--opt-level",
                       opts.level, "-o", str(out_dir)], opts.timeout)
    if status == "hang":
        return "FAIL hang (msamp-compile)", log, False
    if crashed(status):
        return f"FAIL crash (msamp-compile exit {status})", log, False
    outcome, detail = None, log
    valgrind_ran = use_valgrind and ref_rejects
    if valgrind_ran:
        vstatus, vlog = run(["valgrind", "-q", "--error-exitcode=99",
                             tools["msamp-opt"], str(src), "-o", os.devnull],
                            opts.timeout * 20)
        if vstatus not in (0, 1):
            outcome, detail = f"FAIL valgrind (msamp-opt exit {vstatus})", vlog
    if outcome:
        pass
    elif status == 1:
        if ref_rejects and not LOCATED.search(log):
            outcome = "FAIL unlocated error"
        else:
            outcome = "clean error" if ref_rejects else "contract error"
    elif ref_rejects:
        outcome = "FAIL accepted what mlir-opt-22 rejects"
    if outcome:
        return outcome, detail, valgrind_ran
    ckpt, log_json = work / "ck.safetensors", work / "log.jsonl"
    for stale in (ckpt, log_json, Path(str(ckpt) + ".tmp")):
        stale.unlink(missing_ok=True)
    rstatus, rlog = run([tools["msamp-run"], str(out_dir), "--steps", "1",
                         "--synthetic", "--save", str(ckpt),
                         "--log-json", str(log_json)], opts.timeout)
    if rstatus == "hang":
        return "FAIL hang (msamp-run)", rlog, False
    if crashed(rstatus):
        return f"FAIL crash (msamp-run exit {rstatus})", rlog, False
    lost = lost_output(rstatus, ckpt, log_json)
    if lost:
        return f"FAIL data lost ({lost})", rlog, False
    return ("ran a step" if rstatus == 0 else "step refused"), rlog, False


def lost_output(status, ckpt, log_json):
    """What msamp-run lost or left broken, or None. A run that exits 0 has
    saved a readable checkpoint and logged its step; any run leaves no
    half-written checkpoint (.tmp) and only whole JSON lines in its log."""
    if Path(str(ckpt) + ".tmp").exists():
        return "a .tmp checkpoint was left behind"
    lines = log_json.read_text().splitlines() if log_json.exists() else []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            return f"a broken --log-json line: {line[:80]!r}"
    if status != 0:
        return None
    if not lines:
        return "exit 0 with an empty --log-json"
    try:
        with open(ckpt, "rb") as f:
            size = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(size))
    except (OSError, ValueError) as e:
        return f"exit 0 without a readable checkpoint ({e})"
    if not any(k != "__metadata__" for k in header):
        return "exit 0 with a checkpoint holding no tensors"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=500,
                    help="mutants to check (default 500: ~3 minutes)")
    ap.add_argument("--max-edits", type=int, default=3)
    ap.add_argument("--level", default="O1",
                    help="msamp-compile --opt-level (default O1)")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds per tool run before it counts as a hang")
    ap.add_argument("--valgrind", type=int, default=0, metavar="N",
                    help="also parse the first N rejected mutants with "
                    "msamp-opt under valgrind")
    ap.add_argument("--keep-dir", default=None,
                    help="where failing mutants are written (default: a "
                    "temporary directory, printed)")
    opts = ap.parse_args()

    bin_dir = Path(opts.build_dir) / "bin"
    tools = {t: str(bin_dir / t)
             for t in ("msamp-compile", "msamp-opt", "msamp-run")}
    tools["mlir-opt"] = shutil.which("mlir-opt-22") or \
        "/usr/lib/llvm-22/bin/mlir-opt"
    for name, path in tools.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"fuzz-mlir-input: {name} not found at {path}")
    if opts.valgrind and not shutil.which("valgrind"):
        sys.exit("fuzz-mlir-input: --valgrind needs valgrind "
                 "(scripts/setup.sh installs it)")

    rng = random.Random(opts.seed)
    seeds = [p.read_text() for p in SEEDS]
    counts = collections.Counter()
    failures = []
    keep = Path(opts.keep_dir or tempfile.mkdtemp(prefix="msamp-fuzz-"))
    keep.mkdir(parents=True, exist_ok=True)
    valgrind_left = opts.valgrind
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="msamp-fuzz-work-") as tmp:
        work = Path(tmp)
        for case in range(opts.cases):
            text = rng.choice(seeds)
            for _ in range(rng.randint(1, opts.max_edits)):
                text = mutate_once(text, rng)
            # File names of varying length: heap corruption shows as a crash
            # only for some allocation sizes, and locations hold the name.
            name = "c" * rng.randint(1, 40) + ".mlir"
            use_valgrind = valgrind_left > 0
            outcome, detail, valgrind_ran = check_case(
                text, name, work, tools, opts, use_valgrind)
            valgrind_left -= valgrind_ran
            counts[outcome] += 1
            if outcome.startswith("FAIL"):
                path = keep / f"case-{opts.seed}-{case}.mlir"
                path.write_text(text)
                (keep / f"case-{opts.seed}-{case}.log").write_text(
                f"file name: {name}\n{detail}")
                failures.append((case, outcome, path))
                print(f"case {case}: {outcome}: {path}", flush=True)
    elapsed = time.monotonic() - start

    print(f"fuzz-mlir-input: seed {opts.seed}, {opts.cases} cases in "
          f"{elapsed:.0f} s")
    for outcome, n in sorted(counts.items()):
        print(f"  {outcome}: {n}")
    if failures:
        print(f"{len(failures)} failing cases kept in {keep}")
        return 1
    if not opts.keep_dir:
        shutil.rmtree(keep, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
