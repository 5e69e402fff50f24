"""Checks that every function of an LLVM IR file whose name starts with a
prefix has all its allocas in its entry block (LaunchAllocas.h). Used by
msamp-gpu-outline-layers.test."""
import re
import sys

path, prefix = sys.argv[1:3]
functions = late = 0
name = None
in_entry = False
for line in open(path):
    if line.startswith("define "):
        match = re.search(r"@([\w.]+)\(", line)
        name = match.group(1) if match and match.group(1).startswith(prefix) else None
        in_entry = True
        functions += name is not None
        continue
    if name is None:
        continue
    if line.startswith("}"):
        name = None
    elif re.match(r"^[\w.]+:", line):
        in_entry = False
    elif " alloca " in line and not in_entry:
        late += 1
        print(f"{name}: alloca outside the entry block: {line.strip()}")
assert functions > 0, f"no function named {prefix}*"
assert late == 0, f"{late} allocas outside entry blocks"
print(f"{functions} functions, allocas in entry blocks")
