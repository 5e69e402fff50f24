#!/usr/bin/env python3
"""Checks that the running interpreter has every package of
python/requirements.txt at its pinned version.

    PYTHON scripts/check_python_env.py [--requirements FILE] [--quiet]

Exit 0: all present and pinned. Exit 1: prints one line per missing or
mismatched package and the command that installs them. Used by
scripts/setup.sh (to decide whether to run pip) and by CMake at configure time
(so that a build never runs its tests against an environment without them).
Standard library only: it must run before anything is installed.
"""

import argparse
import os
import re
import sys
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "python", "requirements.txt")


def read_pins(path):
    """[(distribution name, pinned version)] from `name==version` lines."""
    pins = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
            if not m:
                sys.exit(f"{path}:{lineno}: expected NAME==VERSION, got {line!r}")
            pins.append((m.group(1), m.group(2)))
    return pins


def problems(pins):
    out = []
    for name, want in pins:
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            out.append(f"{name}=={want}: not installed")
            continue
        # A local version label (torch's "+cu132") is the same release.
        if have.split("+", 1)[0] != want.split("+", 1)[0]:
            out.append(f"{name}=={want}: {have} installed")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requirements", default=DEFAULT)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    bad = problems(read_pins(args.requirements))
    if not bad:
        return 0
    if not args.quiet:
        print(f"Python environment {sys.prefix} ({sys.executable}) lacks:",
              file=sys.stderr)
        for b in bad:
            print("  " + b, file=sys.stderr)
        print("Run scripts/setup.sh (it makes .venv/ with all of them), or into "
              f"this environment: {sys.executable} -m pip install -r "
              f"{args.requirements}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
