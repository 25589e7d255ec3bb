#!/usr/bin/env bash
# ASan + UBSan over the WHOLE suite, GUI included: the `asan` preset (the fuzz preset's clang
# tree plus the GUI, so it reuses that tree's ccache entries). Runs every ctest (unit, CLI,
# hostile inputs, GUI offscreen, fuzz-corpus replays, conformance); any sanitizer report fails
# the test that triggered it. Extra arguments go to ctest (e.g. -R app_tests, -E conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
# Leak reports off: Qt, fontconfig and Graphviz keep process-lifetime allocations that LSan lists
# as leaks; buffer overflows, use-after-free and UB still abort the test. (.ci/sanitize.sh, the
# GUI-less CI stage, keeps leak detection on.)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
cmake --preset asan
cmake --build build/asan -j"${JOBS:-$(nproc)}"
ctest --preset asan -j"${JOBS:-$(nproc)}" --timeout 1800 "$@"
