#!/usr/bin/env bash
# The format check: every tracked C++ file (or the ones given) as clang-format 14 and
# .clang-format want it. Lists the files that are not and exits 1; `--fix` formats them instead.
#   .ci/format-check.sh [--fix] [FILE...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
format="$(command -v clang-format-14 || command -v clang-format || true)"
if [ -z "$format" ]; then
  echo "format-check: clang-format (Debian package clang-format) is not installed" >&2
  exit 2
fi
fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h' | grep -Ev '^(bench/third_party|build)/' || true)
fi
if [ "$fix" = 1 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 20 "$format" -i
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! "$format" --dry-run --Werror "$f" >/dev/null 2>&1; then unformatted+=("$f"); fi
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "format-check: ${#unformatted[@]} of ${#files[@]} files differ from clang-format (fix: .ci/format-check.sh --fix FILE...):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format-check: ${#files[@]} files formatted"
