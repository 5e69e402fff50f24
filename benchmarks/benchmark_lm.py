"""The benchmark LM of docs/Benchmarks.md (3.77M params: 2 layers, width
384, 6 heads, 64 tokens, batch 8, FFN 1536, vocabulary 256), defined once
for every benchmark script that trains it."""

BENCHMARK_LM = dict(layers=2, dim=384, heads=6, seq=64, batch=8, ffn=1536,
                    vocab=256)


def add_arguments(parser):
    """--layers, --dim, ... with the benchmark LM's sizes as defaults."""
    for key, value in BENCHMARK_LM.items():
        parser.add_argument(f"--{key}", type=int, default=value)


def generator_args(sizes=None):
    """`python -m msamp.graphs transformer-lm` arguments for `sizes` (a dict
    with BENCHMARK_LM's keys, or an argparse namespace; default the LM)."""
    sizes = vars(sizes) if sizes is not None and not isinstance(
        sizes, dict) else (sizes or BENCHMARK_LM)
    return [arg for key in BENCHMARK_LM
            for arg in (f"--{key}", str(sizes[key]))]
