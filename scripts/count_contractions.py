#!/usr/bin/env python3
"""Counts the contractions of a lowered train step that stay loop nests.

Reads the IR that `--mlir-print-ir-after=convert-msamp-to-runtime` prints
(the last tensor-level IR: every GEMM the compiler recognized is a
`msamp_rt_gemm` call there, everything else becomes generated loops) and
prints one JSON object:

  gemm_calls     call sites of msamp_rt_gemm
  loop_contractions
                 linalg ops left that are contractions: a linalg.generic
                 with two inputs, a reduction iterator and a body that is
                 only a multiply-accumulate (arith.mulf + arith.addf, with
                 optional extf/truncf), plus any named matmul-family op
  loop_shapes    the iterator kinds and operand types of each of those
  row_dots       multiply-accumulate generics whose two inputs share one
                 indexing map: dot products of equal rows (no M or N
                 dimension, so no GEMM form), not counted as contractions

Usage (docs/GPU.md, "Contractions as library GEMMs"):
  msamp-opt --msamp-lower-to-gpu --mlir-print-ir-after=convert-msamp-to-runtime \
      step.mlir -o /dev/null 2> after.mlir
  python scripts/count_contractions.py after.mlir
"""

import json
import re
import sys

GENERIC = re.compile(r"linalg\.generic\s*\{[^}]*iterator_types\s*=\s*\[([^\]]*)\]"
                     r"[^}]*\}\s*ins\(([^)]*)\)")
NAMED = re.compile(r"\blinalg\.(matmul|batch_matmul|batch_reduce_matmul|"
                   r"contract|matvec|vecmat|dot|batch_matvec)\b")
GEMM_CALL = re.compile(r"call @msamp_rt_gemm(__\d+)?\(")
MAPS = re.compile(r"indexing_maps\s*=\s*\[((?:[^\[\]]|\[[^\]]*\])*)\]")
BODY_OP = re.compile(r"=\s*([a-z_]+\.[a-z_.]+)")


def body_after(text, start):
    """The text of the region that follows position `start`: from the first
    '{' after the ins/outs to its matching '}'."""
    open_at = text.index("{", start)
    depth = 0
    for pos in range(open_at, len(text)):
        if text[pos] == "{":
            depth += 1
        elif text[pos] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at:pos + 1]
    return text[open_at:]


def is_mul_add(body):
    ops = [op for op in BODY_OP.findall(body)]
    allowed = {"arith.mulf", "arith.addf", "arith.extf", "arith.truncf"}
    return (ops.count("arith.mulf") == 1 and ops.count("arith.addf") == 1 and
            all(op in allowed for op in ops))


def same_input_maps(generic):
    """Whether both inputs of the generic are read through the same
    indexing map (`indexing_maps = [#a, #a, #out]`, aliases or inline maps):
    a (batched) dot product with no M or N dimension, which the compiler
    runs as a row reduction, not a contraction a GEMM could take."""
    found = MAPS.search(generic)
    if not found:
        return False
    maps = split_top_level(found.group(1))
    return len(maps) == 3 and maps[0] == maps[1]


def split_top_level(text):
    """`a, b, c` split at the commas outside parentheses/brackets."""
    parts, depth, start = [], 0, 0
    for pos, char in enumerate(text):
        if char in "([<":
            depth += 1
        elif char in ")]>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:pos].strip())
            start = pos + 1
    parts.append(text[start:].strip())
    return parts


def count(text):
    loops = []
    dots = 0
    for match in GENERIC.finditer(text):
        iterators = [it.strip().strip('"') for it in match.group(1).split(",")]
        operands = match.group(2)
        if "reduction" not in iterators:
            continue
        # ins(%a, %b : type, type): two inputs before the colon.
        names = operands.split(":")[0]
        if names.count("%") != 2:
            continue
        if not is_mul_add(body_after(text, match.end())):
            continue
        if same_input_maps(match.group(0)):
            dots += 1
            continue
        loops.append({"iterators": iterators,
                      "types": operands.split(":", 1)[1].strip()})
    named = NAMED.findall(text)
    for name in named:
        loops.append({"iterators": [], "types": "linalg." + name})
    return {"gemm_calls": len(GEMM_CALL.findall(text)),
            "loop_contractions": len(loops), "loop_shapes": loops,
            "row_dots": dots}


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        print(json.dumps(count(f.read()), indent=1))


if __name__ == "__main__":
    main(sys.argv)
