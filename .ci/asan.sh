#!/usr/bin/env bash
# ASan + UBSan: configures the `asan` preset, builds everything and runs the whole ctest suite
# (unit tests, CLI tests, hostile inputs, fuzz-corpus replays, conformance). Any sanitizer report
# fails the test that triggered it. Extra arguments go to ctest (e.g. -R app_tests, -E conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
# Leak reports off: Qt, fontconfig and Graphviz keep process-lifetime allocations that LSan lists
# as leaks; buffer overflows, use-after-free and UB still abort the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
cmake --preset asan
cmake --build build/asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" --timeout 1800 "$@"
