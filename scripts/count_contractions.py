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


def count(text):
    loops = []
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
        loops.append({"iterators": iterators,
                      "types": operands.split(":", 1)[1].strip()})
    named = NAMED.findall(text)
    for name in named:
        loops.append({"iterators": [], "types": "linalg." + name})
    return {"gemm_calls": len(GEMM_CALL.findall(text)),
            "loop_contractions": len(loops), "loop_shapes": loops}


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        print(json.dumps(count(f.read()), indent=1))


if __name__ == "__main__":
    main(sys.argv)
