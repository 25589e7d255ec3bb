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
export QT_QPA_PLATFORM=offscreen
cd "$root/build/release"
release_status=0
ctest --output-on-failure -j "$(nproc)" "$@" || release_status=$?
[ "$release_status" -ne 0 ] || release_status=$sanitize_status
exit "$release_status"
