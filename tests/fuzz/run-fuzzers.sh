#!/bin/bash
# Builds the libFuzzer targets (the `fuzz` CMake preset: clang, ASan + UBSan) and runs each for
# SECONDS (default 60) on its seed corpus. Exits non-zero when a target crashes; the crashing
# input is left in build/fuzz/artifacts/<target>/ (add it to tests/fuzz/regressions/<target>/
# once fixed). Usage: tests/fuzz/run-fuzzers.sh [SECONDS] [TARGET...]
# FUZZ_SEED: libFuzzer's -seed (0, the default here, picks a new one each run; CI's sanitizer
# stage sets 1 so a finding there reproduces from the log; longer local campaigns use 0).
set -euo pipefail
seconds=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_load session_run tensor_file layout_request operator_attributes)

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
[ -f build/fuzz/CMakeCache.txt ] || cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j"${JOBS:-2}" --target "${targets[@]/#/fuzz_}"

status=0
for target in "${targets[@]}"; do
    work=build/fuzz/corpus/$target      # grows while fuzzing; the committed seeds stay as they are
    artifacts=build/fuzz/artifacts/$target
    mkdir -p "$work" "$artifacts"
    log=build/fuzz/$target.log
    echo "== fuzz_$target for ${seconds}s (seed ${FUZZ_SEED:-0})"
    # -rss_limit_mb: the engine's own tensor limit is what should stop huge shapes, well before.
    if ! build/fuzz/tests/fuzz/fuzz_$target -max_total_time="$seconds" -timeout=30 \
            -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 -seed="${FUZZ_SEED:-0}" \
            -artifact_prefix="$artifacts/" "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
        echo "fuzz_$target: CRASH (see $log and $artifacts/)"
        grep -m1 -E "ERROR: |runtime error|==[0-9]+==" "$log" || true
        status=1
    fi
    grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb" "$log" |
        sed "s/^/  /" || true
    grep -E "^#[0-9]+.*DONE" "$log" | tail -1 | sed "s/^/  /" || true
done
exit $status
