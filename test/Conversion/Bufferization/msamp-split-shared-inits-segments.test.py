# Writes the function of msamp-split-shared-inits-segments.test: 48 sums
# into one accumulator of argv[1] elements (1: a tensor<f64>), three
# copies of a block of 16 over the inputs %x0 ... %x15; private with
# argv[2] = "private".
import sys

size = int(sys.argv[1])
# "private": a function msamp-outline-repeated-blocks made (one layer).
visibility = "private " if len(sys.argv) > 2 and sys.argv[2] == "private" else ""
acc = "tensor<f64>" if size == 1 else f"tensor<{size}xf64>"
maps = ("affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>" if size == 1 else
        "affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>")
extent = 8 if size == 1 else size
n = 16
inputs = ", ".join(f"%x{k}: tensor<{extent}xf32>" for k in range(n))
iterator = '"reduction"' if size == 1 else '"parallel"'
lines = [f"func.func {visibility}@sum({inputs}) -> {acc} {{",
         "  %zero = arith.constant 0.0 : f64",
         f"  %e = tensor.empty() : {acc}",
         f"  %s0 = linalg.fill ins(%zero : f64) outs(%e : {acc}) -> {acc}"]
for i in range(3 * n):
    lines += [
        f"  %s{i + 1} = linalg.generic {{indexing_maps = [{maps}], "
        f"iterator_types = [{iterator}]}} ins(%x{i % n} : "
        f"tensor<{extent}xf32>) outs(%s{i} : {acc}) {{",
        "  ^bb0(%in: f32, %out: f64):",
        "    %w = arith.extf %in : f32 to f64",
        "    %r = arith.addf %out, %w : f64",
        "    linalg.yield %r : f64",
        f"  }} -> {acc}"]
lines += [f"  return %s{3 * n} : {acc}", "}"]
print("\n".join(lines))
