#!/usr/bin/env bash
# Checks clang-format (LLVM style, .clang-format) on the C++ files changed
# against a base revision (default: origin/main if it exists, else HEAD~1 or the
# first commit). Prints the diff and exits 1 if any file needs formatting.
#   scripts/check-format.sh [BASE]      scripts/check-format.sh --all
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if [ "${1:-}" = "--all" ]; then
  files=$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
else
  base=${1:-}
  if [ -z "$base" ]; then
    if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main
    elif git rev-parse -q --verify HEAD~1 >/dev/null; then base=HEAD~1
    else base=$(git rev-list --max-parents=0 HEAD); fi
  fi
  files=$(git diff --name-only --diff-filter=ACMR "$base" -- '*.cpp' '*.h' '*.cu' '*.cuh')
fi
status=0
for f in $files; do
  [ -f "$f" ] || continue
  if ! diff -u "$f" <("$CLANG_FORMAT" --style=file "$f") >/tmp/msamp-format.diff; then
    echo "needs formatting: $f"; cat /tmp/msamp-format.diff; status=1
  fi
done
[ $status = 0 ] && echo "check-format: $(echo "$files" | grep -c . || true) file(s) clean"
exit $status
