#!/usr/bin/env python3
"""Checks that every citation of a markdown file in the sources points at a
file of the repository and, where it names a section, at a heading of that
file.

A citation is any `<name>.md` or `<path>/<name>.md` in a C++, CUDA, TableGen,
Python, CMake, shell, lit or markdown file, optionally followed by a section
number and an anchor:

    docs/Numerics.md 4.4          docs/Interfaces.md 1, 4
    Numerics.md section 2         RuntimeABI.md 3.7a, 3.7b
    docs/Numerics.md 2.1/2.2      docs/Numerics.md 4.3-4.4
    [Passes](Passes.md#pipelines) docs/Interfaces.md's 4
    docs/TrainStep.md 2 "Body at O0"   docs/Design.md "GPU target"

A citation may wrap onto the next comment line (`... docs/Numerics.md` /
`// 4.4`). The file is looked up next to the citing file, then at the
repository root, then in docs/. A section number must be the number of a
heading of that file (`## 4.`, `### 4.3a`, `### 3.7a \`...\``); an anchor
must be the GitHub anchor of one of its headings; a quoted name must begin
the title of one of its headings (without the number) or a bold lead-in
(`**Name ...**`). Reference pages that the
build generates (`add_mlir_doc` in the CMake files, written to
build/docs/<dir>/<name>.md) count as present and are not checked further.
URLs are not citations. A file with `check-doc-citations: ignore-file` in
its first five lines is skipped (the checker's own test fixtures).

Exit status 0 when every citation resolves, 1 otherwise; each failure is
reported as `file:line: error: ...`.

    scripts/check-doc-citations.py [--root DIR] [--walk]
"""

import argparse
import os
import re
import subprocess
import sys

SOURCE_SUFFIXES = {
    ".c", ".cc", ".cpp", ".h", ".hpp", ".inc", ".cu", ".cuh", ".td", ".py",
    ".sh", ".cmake", ".mlir", ".test", ".cfg", ".in", ".md", ".ll", ".toml",
    ".yaml", ".yml",
}
SOURCE_NAMES = {"CMakeLists.txt"}
# Directories never scanned when the tree is walked without git.
SKIP_DIRS = {".git", ".venv", ".cache", "__pycache__", "out", "node_modules"}

NUMBER = r"\d+(?:\.\d+)*[a-z]?"
# A markdown file name, with an optional path in front (no URL: checked
# separately), then an optional anchor and an optional section list.
CITATION = re.compile(
    r"(?P<path>(?:[\w.-]+/)*[\w-]+\.md)\b"
    r"(?:#(?P<anchor>[\w-]+))?"
    r"(?:(?:'s)?,?\s+(?:(?:sections?|§)\s*)?"
    r"(?P<numbers>" + NUMBER + r"(?:\s*(?:/|-|–|,|and)\s*" + NUMBER +
    r")*)(?![\w.]*\w))?"
    r"(?:,?\s+\"(?P<name>[^\"]{1,80})\")?")
SECTION_IN_LIST = re.compile(NUMBER)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HEADING_NUMBER = re.compile(r"^(" + NUMBER + r")[.):]?(?:\s|$)")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
# Leading comment markers stripped before a citation is followed onto the
# next line.
COMMENT_LEAD = re.compile(r"^\s*(?:///?|//!|#+|\*+/?|/\*+|--|;+|\"\"\")?\s*")
MLIR_DOC = re.compile(r"add_mlir_doc\(\s*\S+\s+(\S+)\s+(\S+)")
IGNORE_FILE = "check-doc-citations: ignore-file"


def git_files(root):
    """Git's view of the checkout (tracked plus untracked files that are not
    ignored), or None when root is not a git work tree."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    files = sorted({f for f in out.decode().split("\0") if f})
    return [f for f in files if os.path.isfile(os.path.join(root, f))]


def walked_files(root):
    """Every file under root, without build trees and caches."""
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not (rel == "." and d.startswith("build")))
        for name in filenames:
            files.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(files)


def list_files(root, walk=False):
    files = None if walk else git_files(root)
    return walked_files(root) if files is None else files


def is_source(path):
    name = os.path.basename(path)
    return name in SOURCE_NAMES or os.path.splitext(name)[1] in SOURCE_SUFFIXES


def generated_docs(root, files):
    """build/docs/<dir>/<name>.md for every add_mlir_doc of the CMake files,
    as a set of paths and a set of bare names."""
    paths, names = set(), set()
    for f in files:
        if os.path.basename(f) != "CMakeLists.txt" and not f.endswith(".cmake"):
            continue
        text = read(os.path.join(root, f))
        for name, outdir in MLIR_DOC.findall(text):
            paths.add(os.path.normpath(os.path.join("build/docs", outdir,
                                                    name + ".md")))
            names.add(name + ".md")
    return paths, names


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def slug(title):
    """GitHub's anchor of a heading."""
    title = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", title).lower()
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


def headings(text):
    """The section numbers, anchors and names of a markdown file. A name is
    a heading's title without its number, or a bold lead-in (`**Name**`) of
    a paragraph or list item."""
    numbers, anchors, names, seen = set(), set(), [], {}
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        names.extend(b.lower() for b in BOLD.findall(line))
        m = HEADING.match(line)
        if not m:
            continue
        title = m.group(2)
        plain = title.replace("`", "")
        n = HEADING_NUMBER.match(plain)
        if n:
            numbers.add(n.group(1))
            plain = plain[n.end():]
        names.append(plain.strip().lower())
        base = slug(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.add(base if count == 0 else f"{base}-{count}")
    return numbers, anchors, names


def names_section(names, name):
    """Whether `name` begins a heading title or a bold lead-in."""
    name = name.replace("`", "").strip().lower()
    return any(n == name or (n.startswith(name) and not n[len(name)].isalnum())
               for n in names)


def logical_text(text):
    """The file's lines joined by single spaces, comment markers removed
    from each line, with the offset where each line starts (so a citation
    that wraps onto the next comment line is seen whole)."""
    parts, starts, pos = [], [], 0
    for line in text.splitlines():
        stripped = COMMENT_LEAD.sub("", line, count=1).rstrip()
        starts.append(pos)
        parts.append(stripped)
        pos += len(stripped) + 1
    return " ".join(parts), starts


def line_of(starts, offset):
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def in_url(joined, start):
    token_start = max(joined.rfind(" ", 0, start), joined.rfind("(", 0, start),
                      joined.rfind("<", 0, start)) + 1
    return "://" in joined[token_start:start]


class Checker:

    def __init__(self, root, walk=False):
        self.root = root
        self.files = list_files(root, walk)
        self.present = set(self.files)
        self.gen_paths, self.gen_names = generated_docs(root, self.files)
        self.heading_cache = {}
        self.errors = []
        self.checked = 0

    def resolve(self, citing, path):
        """The repository path a citation names, or None."""
        here = os.path.dirname(citing)
        candidates = [os.path.join(here, path), path]
        if "/" not in path:
            candidates.append(os.path.join("docs", path))
        for c in candidates:
            c = os.path.normpath(c)
            if c in self.present:
                return c
        return None

    def sections(self, md):
        if md not in self.heading_cache:
            self.heading_cache[md] = headings(read(os.path.join(self.root, md)))
        return self.heading_cache[md]

    def error(self, citing, line, message):
        self.errors.append(f"{citing}:{line}: error: {message}")

    def check_file(self, citing):
        text = read(os.path.join(self.root, citing))
        if ".md" not in text or IGNORE_FILE in "\n".join(text.split("\n")[:5]):
            return
        joined, starts = logical_text(text)
        is_markdown = citing.endswith(".md")
        for m in CITATION.finditer(joined):
            path = m.group("path")
            if in_url(joined, m.start()):
                continue
            line = line_of(starts, m.start())
            self.checked += 1
            norm = os.path.normpath(path)
            if norm in self.gen_paths or ("/" not in path and
                                          path in self.gen_names):
                continue
            target = self.resolve(citing, path)
            if target is None:
                self.error(citing, line,
                           f"'{path}' is not a file of the repository "
                           "(looked next to this file, at the root and in "
                           "docs/)")
                continue
            numbers, anchors, names = self.sections(target)
            anchor = m.group("anchor")
            if anchor and anchor not in anchors:
                self.error(citing, line,
                           f"'{path}#{anchor}': {target} has no heading "
                           "with that anchor")
            name = m.group("name")
            if name and not names_section(names, name):
                self.error(citing, line,
                           f"'{path} \"{name}\"': {target} has no heading "
                           "(or bold lead-in) that begins with that name")
            listed = m.group("numbers")
            if not listed:
                continue
            # A markdown list item on the next line ("2. ...") is not a
            # section number.
            number_start = m.start("numbers")
            if (is_markdown and number_start in starts and
                    re.match(r"\d+\.\s", joined[number_start:])):
                continue
            for number in SECTION_IN_LIST.findall(listed):
                if number not in numbers:
                    known = ", ".join(sorted(numbers, key=section_key))
                    self.error(citing, line,
                               f"'{path} {number}': {target} has no section "
                               f"{number} (its numbered headings: "
                               f"{known or 'none'})")

    def run(self):
        for f in self.files:
            if is_source(f):
                self.check_file(f)
        return self.errors


def section_key(number):
    parts = re.findall(r"\d+|[a-z]", number)
    return [int(p) if p.isdigit() else ord(p) - 1000 for p in parts]


def main():
    parser = argparse.ArgumentParser(
        description="Check that every citation of a markdown file names a "
        "file of the repository and, with a section number, one of its "
        "headings.")
    parser.add_argument(
        "--root",
        default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        help="repository root (default: this script's checkout)")
    parser.add_argument(
        "--walk", action="store_true",
        help="scan every file under the root instead of git's file list")
    args = parser.parse_args()
    checker = Checker(os.path.abspath(args.root), args.walk)
    errors = checker.run()
    for e in errors:
        print(e)
    print(f"check-doc-citations: {checker.checked} citations, "
          f"{len(errors)} broken")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
