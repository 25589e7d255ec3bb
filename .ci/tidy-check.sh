#!/usr/bin/env bash
# clang-tidy 14 with the agreed checks (.clang-tidy) over the product sources, in parallel, within
# a time budget; needs a configured build (compile_commands.json, default build/release).
#   .ci/tidy-check.sh [--changed REV] [FILE...]
# No arguments: every .cpp of model/, engine/ (runtime, optimizer, ops, workflows), widgets/ and
# app/. --changed REV: only the .cpp files changed since REV (and not deleted). Files not reached
# within ONNXLENS_TIDY_SECONDS (default 1800) are listed and fail the check.
# Whole tree, 2 idle cores: see docs/architecture.md (Habits) for the measured time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${ONNXLENS_TIDY_BUILD:-build/release}"
budget="${ONNXLENS_TIDY_SECONDS:-1800}"
tidy="$(command -v clang-tidy-14 || command -v clang-tidy || true)"
if [ -z "$tidy" ]; then
  echo "tidy-check: clang-tidy (Debian package clang-tidy) is not installed" >&2
  exit 2
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy-check: $build/compile_commands.json is missing (configure first: cmake --preset release)" >&2
  exit 2
fi
product='^(model|engine|widgets|app)/.*\.cpp$'
if [ "${1:-}" = "--changed" ]; then
  mapfile -t files < <(git diff --name-only --diff-filter=d "$2" -- | grep -E "$product" || true)
elif [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files | grep -E "$product" || true)
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy-check: no files to check"
  exit 0
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
# One clang-tidy per file, $(nproc) at a time; each writes its findings to its own log.
printf '%s\n' "${files[@]}" | timeout "$budget" xargs -P "$(nproc)" -I{} sh -c \
  'f="$1"; log="$2/$(echo "$f" | tr / _).log"; if "$3" -quiet -p "$4" "$f" >"$log" 2>&1; then echo ok >"$log.done"; else echo fail >"$log.done"; fi' \
  _ {} "$out" "$tidy" "$build" || true
failed=0
missed=()
for f in "${files[@]}"; do
  log="$out/$(echo "$f" | tr / _).log"
  if [ ! -f "$log.done" ]; then
    missed+=("$f")
  elif [ "$(cat "$log.done")" != ok ]; then
    failed=$((failed + 1))
    grep -E 'warning:|error:' "$log" | grep -v 'warnings generated' || cat "$log"
  fi
done
echo "tidy-check: ${#files[@]} files, $failed with findings, ${#missed[@]} not reached, $(( $(date +%s) - start )) s"
if [ ${#missed[@]} -gt 0 ]; then printf '  not reached within %s s: %s\n' "$budget" "${missed[@]}"; fi
[ "$failed" -eq 0 ] && [ ${#missed[@]} -eq 0 ]
