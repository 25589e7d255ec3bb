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
# Style stage, when CI=true (ONNXLENS_STYLE_STAGE=0 turns it off, =1 turns it on elsewhere): the
# format check over every tracked C++ file (clang-format 14, .clang-format), then clang-tidy's
# agreed checks (.clang-tidy) on the product sources changed since ONNXLENS_TIDY_BASE (default
# HEAD~1; skipped with a note when a shallow clone lacks it). The whole tree is checked by
# `.ci/tidy-check.sh` with no arguments (docs/architecture.md, Habits: its cost on 2 cores is
# above CI's budget). A failure fails the script after the release tests have run.
style_status=0
if [ "${ONNXLENS_STYLE_STAGE:-$sanitize_default}" = "1" ]; then
  onnxlens_install_packages clang-format clang-tidy
  "$root/.ci/format-check.sh" || style_status=$?
  tidy_base="${ONNXLENS_TIDY_BASE:-HEAD~1}"
  if git -C "$root" rev-parse --verify --quiet "$tidy_base^{commit}" >/dev/null; then
    (cd "$root" && ONNXLENS_TIDY_SECONDS="${ONNXLENS_TIDY_SECONDS:-900}" \
      .ci/tidy-check.sh --changed "$tidy_base") || style_status=$?
  else
    echo "test.sh: clang-tidy skipped: $tidy_base is not in this clone"
  fi
fi
export QT_QPA_PLATFORM=offscreen
# Package stage, when ONNXLENS_PACKAGE_STAGE=1: the Debian package is built from the portable
# preset (x86-64-v2 baseline, AVX2/AVX-512 kernels chosen at run time; a -march=native tree
# refuses to package), so this builds that second tree and runs its `package` test and the
# dispatch tests there. A failure fails the script after the release tests have run.
package_status=0
if [ "${ONNXLENS_PACKAGE_STAGE:-0}" = "1" ]; then
  (onnxlens_build portable && cd "$root/build/portable" &&
    ctest --output-on-failure -L package && tests/engine/engine_tests --gtest_filter='CpuIsa*') ||
    package_status=$?
  [ "$package_status" -eq 0 ] || echo "test.sh: the package stage FAILED (see above)"
fi
cd "$root/build/release"
release_status=0
ctest --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee ctest-release.log || release_status=$?
# CI shows only the tail of this script's output: when an earlier stage failed, say what failed
# there and repeat the release ctest summary, so the last lines are still that summary.
if [ "$sanitize_status" -ne 0 ] || [ "$style_status" -ne 0 ]; then
  echo
  echo "test.sh: the release tests ran, but an earlier stage FAILED:"
  [ "$sanitize_status" -eq 0 ] || cat "$root/build/sanitize-summary.txt" 2>/dev/null || true
  [ "$style_status" -eq 0 ] || echo "  the style stage (format check / clang-tidy) failed: see above"
  echo
  sed -n '/tests passed, /,$p' ctest-release.log
fi
[ "$release_status" -ne 0 ] || release_status=$sanitize_status
[ "$release_status" -ne 0 ] || release_status=$style_status
[ "$release_status" -ne 0 ] || release_status=$package_status
exit "$release_status"
