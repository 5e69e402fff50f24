"""The GPU step's full sums (loss, gradient norm): threads, loads per thread
step and atomic adds per step, counted in the compiler's IR (docs/GPU.md
"Full sums at bandwidth (issue 23)"). No GPU.

    python benchmarks/gpu_atomic_sums.py MSAMP_OPT STEP.mlir

runs `MSAMP_OPT STEP.mlir --msamp-lower-to-gpu` (STEP.mlir: a compiled
step's tensor-level train_step.mlir, or `msamp-opt --msamp-o2` output),
printing the IR after msamp-gpu-merge-atomic-sums and, where the build has
it, after msamp-gpu-block-atomic-sums, and prints one row per atomic-sum
kernel: its threads T, its parts (one per full sum), the loads one thread
issues per step of its longest part, and the atomic adds it makes per step:
in the loop form every part's thread makes one (T_k for a part guarded by
t < T_k), in the block form thread 0 of each block one per accumulator.
"""
import argparse
import re
import subprocess

PARALLEL = re.compile(r"^(\s*)scf\.parallel \((%\w+)\) = \(%\w+\) to \(%c(\d+)")
GUARD = re.compile(r"(%\w+) = arith\.cmpi ult, (%\w+), %c(\d+)")
FOR = re.compile(r"scf\.for .* iter_args\((.*)\) -> \((.*)\)")
LAUNCH = re.compile(r"gpu\.launch blocks\(.*?\) in \(%\w+ = %c(\d+)[_\d]*,"
                    r".*threads\(.*?\) in \(%\w+ = %c(\d+)[_\d]*,")


def ir_after(opt, step, passes):
    args = [opt, step, "--msamp-lower-to-gpu", "-o", "/dev/null"]
    args += [f"--mlir-print-ir-after={p}" for p in passes]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    dumps = {}
    for dump in out.stderr.split("// -----// IR Dump After ")[1:]:
        name = dump.split(" ")[0]
        dumps[name] = dumps.get(name, "") + dump
    return dumps


def loop_kernels(ir):
    """Each scf.parallel holding atomic adds: (T, parts, atomics, loads)."""
    rows, lines = [], ir.splitlines()
    i = 0
    while i < len(lines):
        m = PARALLEL.match(lines[i])
        if not m:
            i += 1
            continue
        indent, iv, threads = len(m.group(1)), m.group(2), int(m.group(3))
        body, j = [], i + 1
        while j < len(lines) and not (
                lines[j].startswith(" " * indent + "}")
                and len(lines[j]) - len(lines[j].lstrip()) == indent):
            body.append(lines[j])
            j += 1
        i = j
        guards, parts, atomics, loads = {}, 0, 0, 1
        for line in body:
            g = GUARD.search(line)
            if g and g.group(2) == iv:
                guards[g.group(1)] = int(g.group(3))
            f = FOR.search(line)
            if f:
                loads = max(loads, f.group(2).count(",") + 1)
        open_guards = []  # (indentation, T_k) of the enclosing guards
        for line in body:
            indent = len(line) - len(line.lstrip())
            open_guards = [(i, t) for i, t in open_guards if i < indent]
            s = re.search(r"scf\.if (%\w+) ", line)
            if s and s.group(1) in guards:
                open_guards.append((indent, guards[s.group(1)]))
            if "memref.atomic_rmw addf" in line:
                parts += 1
                atomics += min([threads] + [t for _, t in open_guards])
        if parts:
            rows.append((threads, parts, atomics, loads))
    return rows


def block_kernels(ir):
    """Each gpu.launch with an atomic add: (blocks x threads, atomics)."""
    rows, current = [], None
    for line in ir.splitlines():
        m = LAUNCH.search(line)
        if m:
            current = [int(m.group(1)), int(m.group(2)), 0]
            rows.append(current)
        elif current and "memref.atomic_rmw addf" in line:
            current[2] += 1
        elif current and "gpu.terminator" in line:
            current = None
    return [(b * t, b * a) for b, t, a in rows if a]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("msamp_opt")
    parser.add_argument("step")
    args = parser.parse_args()
    help_text = subprocess.run([args.msamp_opt, "--help"], capture_output=True,
                               text=True).stdout
    passes = ["msamp-gpu-merge-atomic-sums"]
    if "msamp-gpu-block-atomic-sums" in help_text:
        passes.append("msamp-gpu-block-atomic-sums")
    dumps = ir_after(args.msamp_opt, args.step, passes)
    loops = loop_kernels(dumps["MSAMPGPUMergeAtomicSums"])
    print("| kernel | threads | parts | loads per thread step | atomic adds "
          "(loop form) | atomic adds (block form) |")
    print("|---|---|---|---|---|---|")
    blocks = (block_kernels(dumps["MSAMPGPUBlockAtomicSums"])
              if len(passes) > 1 else [])
    total_loop = total_block = 0
    for k, (threads, parts, atomics, loads) in enumerate(loops):
        block = blocks[k][1] if k < len(blocks) else None
        total_loop += atomics
        total_block += block or 0
        print(f"| {k} | {threads:,} | {parts} | {loads} | {atomics:,} | "
              f"{'-' if block is None else f'{block:,}'} |")
    print(f"| total | | | | {total_loop:,} | "
          f"{'-' if not blocks else f'{total_block:,}'} |")


if __name__ == "__main__":
    main()
