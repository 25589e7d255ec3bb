#!/usr/bin/env bash
# CI's sanitizer stage (test.sh runs it when ONNXLENS_SANITIZE_STAGE=1, before the release build). One clang tree,
# the `fuzz` preset (ASan + UBSan, libFuzzer coverage, no GUI), serves both halves:
#  1. ctest in it: unit tests, CLI and hostile-input tests, fuzz seed/regression replays and the
#     conformance suite, each failing on any sanitizer report;
#  2. each libFuzzer target for FUZZ_SECONDS (default 60) on its seed corpus; a crash fails.
# Prints each step's wall time. Usage: .ci/sanitize.sh [extra ctest arguments]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
# Leaks are reported here (no GUI in this tree: no Qt caches); Graphviz's are suppressed.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/.ci/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
jobs=${JOBS:-$(nproc)}
# What failed, one line each, for test.sh to repeat after the release tests (CI shows the tail).
summary=${SANITIZE_SUMMARY:-$root/build/sanitize-summary.txt}
mkdir -p "$(dirname "$summary")"
: >"$summary"

stage() {  # stage NAME COMMAND...: runs it and prints its wall time
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "sanitize: $name took $((SECONDS - start)) s (exit $status)"
  [ "$status" -eq 0 ] || echo "sanitize: $name FAILED (exit $status)" >>"$summary"
  return $status
}

status=0
stage "configure + build (fuzz preset)" bash -c \
  "cmake --preset fuzz >/dev/null && cmake --build --preset fuzz -j$jobs" || exit 1
# Left out: model.info_agrees_with_onnx_python starts the CLI once per model (sanitized builds
# check every 10th of the 1,300, about 75 s here); the release stage checks all of them, and the
# sanitized conformance test walks the same models through the same loader in one process.
ctest_log=build/fuzz/ctest-sanitized.log
stage "ctest under ASan + UBSan" bash -c "set -o pipefail; ctest --test-dir build/fuzz \
  --output-on-failure -j$jobs --timeout 1800 -E '^model\\.info_agrees_with_onnx_python\$' $* |
  tee $ctest_log" || status=1
grep -E '^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Child aborted|Exception)' \
  "$ctest_log" | sed 's/^[[:space:]]*/  sanitized test failed: /' >>"$summary" || true
fuzz_log=build/fuzz/fuzzers.log
FUZZ_SEED=${FUZZ_SEED:-1} FUZZ_RUNS=${FUZZ_RUNS:-calibrated} JOBS=$jobs stage "libFuzzer, ${FUZZ_SECONDS:-60} s per target" \
  bash -c "set -o pipefail; tests/fuzz/run-fuzzers.sh ${FUZZ_SECONDS:-60} | tee $fuzz_log" || status=1
grep -E ': CRASH|^  fuzz_[a-z_]+\| ' "$fuzz_log" | sed 's/^/  /' >>"$summary" || true
exit $status
