#!/usr/bin/env bash
# Set up (missing Debian packages), build (Release) and run every test. Ends with ctest's summary.
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
source "$root/.ci/setup.sh"
onnxlens_install_packages
onnxlens_build release
export QT_QPA_PLATFORM=offscreen
cd "$root/build/release"
ctest --output-on-failure -j "$(nproc)" "$@"
