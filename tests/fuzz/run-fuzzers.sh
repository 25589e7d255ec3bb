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

# FUZZ_RUNS=calibrated (CI): each target runs a fixed number of inputs instead of SECONDS, about
# 60 s each on the 2-core development machine (exec/s in tests/fuzz/README.md), with 3 x SECONDS
# as a cap. Same seed, same corpus, same count: the same inputs, so what passes a local run of
# the CI command passes CI (a slower machine stops at the cap, a prefix of the same sequence).
declare -A calibrated_runs=([model_load]=400000 [session_run]=150000 [tensor_file]=450000
                            [layout_request]=900000 [operator_attributes]=18000)
status=0
for target in "${targets[@]}"; do
    work=build/fuzz/corpus/$target      # grows while fuzzing; the committed seeds stay as they are
    artifacts=build/fuzz/artifacts/$target
    limits=(-max_total_time="$seconds")
    if [ "${FUZZ_RUNS:-}" = calibrated ] && [ -n "${calibrated_runs[$target]:-}" ]; then
        limits=(-runs="${calibrated_runs[$target]}" -max_total_time=$((seconds * 3)))
        work=build/fuzz/corpus-calibrated/$target  # starts empty each time, as in a clean clone
        rm -rf "$work"
    fi

    mkdir -p "$work" "$artifacts"
    log=build/fuzz/$target.log
    echo "== fuzz_$target: ${limits[*]} (seed ${FUZZ_SEED:-0})"
    started=$(mktemp)
    # -rss_limit_mb: the engine's own tensor limit is what should stop huge shapes, well before.
    if ! build/fuzz/tests/fuzz/fuzz_$target "${limits[@]}" -timeout=30 \
            -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 -seed="${FUZZ_SEED:-0}" \
            -artifact_prefix="$artifacts/" "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
        echo "fuzz_$target: CRASH (see $log and $artifacts/)"
        # Enough to reproduce from CI's log alone: the first error line, the top stack frames
        # and the crashing input itself (base64, when small).
        {
            grep -m1 -E "ERROR: |runtime error|==[0-9]+==" "$log" || true
            grep -m8 -E "^ +#[0-9]+ 0x[0-9a-f]+ in " "$log" | sed -E 's/ \(BuildId: [0-9a-f]+\)//' | cut -c1-240 || true
            find "$artifacts" -type f -newer "$started" | while read -r input; do
                if [ "$(stat -c %s "$input")" -le 4096 ]; then
                    echo "input $(basename "$input") base64: $(base64 -w0 "$input")"
                else
                    echo "input $(basename "$input"): $(stat -c %s "$input") bytes"
                fi
            done
        } | sed "s/^/  fuzz_$target| /"
        status=1
    fi
    rm -f "$started"
    grep -E "^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb" "$log" |
        sed "s/^/  /" || true
    grep -E "^#[0-9]+.*DONE" "$log" | tail -1 | sed "s/^/  /" || true
done
exit $status
