#!/usr/bin/env bash
# Set up (missing Debian packages), build (Release) and run every test. Ends with ctest's summary.
# The sanitizer stage (.ci/sanitize.sh: ASan + UBSan ctest and a short libFuzzer run of each
# target, in one clang tree) runs first when CI=true (ONNXLENS_SANITIZE_STAGE=0 turns it off) or
# when ONNXLENS_SANITIZE_STAGE=1; its failure fails the script after the release tests have run,
# so the last line is still the release ctest's summary. Timings: tests/fuzz/README.md.
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
source "$root/.ci/setup.sh"
sanitize_status=0
sanitize_default=0
[ "${CI:-}" != "true" ] || sanitize_default=1
if [ "${ONNXLENS_SANITIZE_STAGE:-$sanitize_default}" = "1" ]; then
  onnxlens_install_packages clang libclang-rt-14-dev
  "$root/.ci/sanitize.sh" || sanitize_status=$?
  [ "$sanitize_status" -eq 0 ] || echo "test.sh: the sanitizer stage FAILED (see above)"
fi
onnxlens_install_packages
onnxlens_build release
# Style stage (ONNXLENS_STYLE_STAGE=1): the format check over every tracked C++ file and
# clang-tidy's agreed checks (.clang-tidy) on the product sources changed since
# ONNXLENS_TIDY_BASE (default HEAD~1). Off by default until the tree is reformatted once; its
# failure fails the script after the release tests have run.
style_status=0
if [ "${ONNXLENS_STYLE_STAGE:-0}" = "1" ]; then
  "$root/.ci/format-check.sh" || style_status=$?
  "$root/.ci/tidy-check.sh" --changed "${ONNXLENS_TIDY_BASE:-HEAD~1}" || style_status=$?
fi
export QT_QPA_PLATFORM=offscreen
cd "$root/build/release"
release_status=0
ctest --output-on-failure -j "$(nproc)" "$@" || release_status=$?
[ "$release_status" -ne 0 ] || release_status=$sanitize_status
[ "$release_status" -ne 0 ] || release_status=$style_status
exit "$release_status"
