# Reads MLIR on stdin and prints the msamp.adam_group id of each
# msamp.adam_update in order, as runs: "N groups: COUNT x ID, ...".
import re
import sys

ids = [m.group(1) if m else "none"
       for m in (re.search(r"msamp\.adam_group = (\d+)", line)
                 for line in sys.stdin if "msamp.adam_update" in line)]
runs = []
for i in ids:
    if runs and runs[-1][1] == i:
        runs[-1][0] += 1
    else:
        runs.append([1, i])
print(f"{len(set(ids))} groups: " + ", ".join(f"{c} x {i}" for c, i in runs))
