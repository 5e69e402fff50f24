"""The least predicted_ms a step can reach while attention runs as separate
GEMMs and a softmax (docs/GPU.md "How low predicted_ms can go without fused
attention", issue 23). No GPU.

    python benchmarks/gpu_ratio_bound.py L2/gpu_cost.json L4/gpu_cost.json \
        --batch 8 --heads 12 --seq 1024 --vocab 50257

Each report (msamp-compile --target cuda) is costed with its own model
(`model`: peaks, efficiencies, launch cost). The bound counts only work no
schedule of separate kernels can avoid, each at the model's best case:

- every GEMM call at its FLOP time (flops / (efficiency x peak of its unit))
  plus one launch, bytes not counted;
- attention's softmax chains over [batch x heads, seq, seq] (found by their
  bytes in `launches`: forward 2 x S, backward 3 x S, S = batch x heads x
  seq^2 x 4 bytes): the scores read and the probabilities written (kept for
  backward), the probabilities and their gradient read and the scores'
  gradient written, which the GEMMs on either side take from memory;
- the cross-entropy over the vocabulary: its logits (a GEMM's output) read
  once.

and prints it next to 2 x floor_ms, the issue's goal. A bound above the goal
means no change to the other kernels can meet it; only fused attention
(the S x S tensors never in memory) can.
"""
import argparse
import json


def bound(report, attention_bytes, logits_bytes):
    model = report["model"]
    peak = {"fp8": model["fp8_tflops"], "bf16": model["bf16_tflops"],
            "f32": model["f32_tflops"]}
    launch = model["launch_us"] * 1e-6
    bandwidth = model["memory_efficiency"] * model["memory_tb_per_s"] * 1e12

    gemms = [c for c in report["calls"] if c["op"] == "gemm"]
    gemm_s = sum(c["flops"] / (model["compute_efficiency"] *
                               peak[c["unit"]] * 1e12) + launch
                 for c in gemms)

    # Each row chain counted once, by its bytes: the cross-entropy reads
    # the logits and writes their gradient (2 x the logits), a softmax
    # forward 2 x S, a backward 3 x S (and a little more: a chain may
    # read a row statistic too).
    def between(kernel, low, high):
        return low <= kernel["bytes"] < high

    softmax_s = cross_entropy_s = 0.0
    num_softmax = 0
    for kernel in report["launches"]:
        if kernel["op"] != "row_chain":
            continue
        if between(kernel, 2 * logits_bytes, 3 * logits_bytes):
            cross_entropy_s += logits_bytes / bandwidth + launch
        elif between(kernel, 2 * attention_bytes, 4 * attention_bytes):
            multiple = 2 if kernel["bytes"] < 3 * attention_bytes else 3
            softmax_s += multiple * attention_bytes / bandwidth + launch
            num_softmax += 1
    return {
        "gemm calls": len(gemms),
        "gemm ms": gemm_s * 1e3,
        "softmax chains": num_softmax,
        "softmax ms": softmax_s * 1e3,
        "cross-entropy ms": cross_entropy_s * 1e3,
        "bound ms": (gemm_s + softmax_s + cross_entropy_s) * 1e3,
        "2 x floor ms": 2 * report["floor_ms"],
        "predicted ms": report["predicted_ms"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--heads", type=int, required=True)
    parser.add_argument("--seq", type=int, required=True)
    parser.add_argument("--vocab", type=int, required=True)
    args = parser.parse_args()
    attention_bytes = args.batch * args.heads * args.seq * args.seq * 4
    logits_bytes = args.batch * args.seq * args.vocab * 4
    rows = [bound(json.load(open(path)), attention_bytes, logits_bytes)
            for path in args.reports]
    print("| | " + " | ".join(args.reports) + " |")
    print("|---|" + "---|" * len(rows))
    for key in rows[0]:
        cells = [f"{r[key]:.2f}" if isinstance(r[key], float) else
                 str(r[key]) for r in rows]
        print(f"| {key} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
