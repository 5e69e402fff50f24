"""Launches and library calls per transformer layer, by op (docs/GPU.md
"Launches per layer", issue 23).

    python benchmarks/gpu_launch_breakdown.py L2/gpu_cost.json L4/gpu_cost.json \
        [--layers 2 4]

reads two cost reports (msamp-compile --target cuda) of the same model at
two depths and prints, for every generated kernel's `op` and every library
call's entry point, the count in each report and the difference per layer
((count at the deeper - count at the shallower) / layers added), then the
totals kernels, library_calls, gemm_pack_launches (the pack kernels
msamp_rt_gemm launches for FP8 operands not in cuBLASLt's TN layout) and
predicted_ms the same way. No GPU.
"""
import argparse
import collections
import json


def counts(report):
    kernels = collections.Counter(k["op"] for k in report["launches"])
    calls = collections.Counter(c["name"] for c in report["calls"])
    return kernels, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shallow")
    parser.add_argument("deep")
    parser.add_argument("--layers", nargs=2, type=int, default=[2, 4],
                        metavar=("SHALLOW", "DEEP"))
    args = parser.parse_args()
    reports = [json.load(open(path)) for path in (args.shallow, args.deep)]
    added = args.layers[1] - args.layers[0]
    if added <= 0:
        parser.error("--layers: the second report must be the deeper one")
    (k0, c0), (k1, c1) = counts(reports[0]), counts(reports[1])
    print(f"| | L = {args.layers[0]} | L = {args.layers[1]} | per layer |")
    print("|---|---|---|---|")
    for title, a, b in (("kernel", k0, k1), ("call", c0, c1)):
        for name in sorted(set(a) | set(b), key=lambda n: (-(b[n] - a[n]), n)):
            print(f"| {title} {name} | {a[name]} | {b[name]} | "
                  f"{(b[name] - a[name]) / added:g} |")
    for key in ("kernels", "library_calls", "gemm_pack_launches",
                "predicted_ms"):
        # Reports written before the GEMMs' packs were counted have none.
        x, y = reports[0].get(key, 0), reports[1].get(key, 0)
        print(f"| **{key}** | {x:g} | {y:g} | {(y - x) / added:g} |")


if __name__ == "__main__":
    main()
