#!/usr/bin/env bash
# Set up (missing Debian packages), build (Release) and open onnxlens on MODEL
# (or on the bundled sample model when none is given).
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
source "$root/.ci/setup.sh"
onnxlens_install_packages
onnxlens_build release
# Register the .desktop file, MIME type and icons for the current user (double-click opens).
if [ -x "$root/resources/desktop/register-desktop.sh" ]; then
  "$root/resources/desktop/register-desktop.sh" "$root/build/release/app" >/dev/null 2>&1 || true
fi
if [ $# -eq 0 ]; then
  set -- "$root/resources/samples/mnist_cnn/model.onnx"
fi
exec "$root/build/release/app/gui/onnxlens" "$@"
