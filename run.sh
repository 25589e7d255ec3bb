#!/usr/bin/env bash
# Set up (missing Debian packages), build (Release) and open onnxlens on MODEL
# (or on the bundled sample model when none is given).
set -euo pipefail
root="$(cd "$(dirname "$0")" && pwd)"
source "$root/.ci/setup.sh"
onnxlens_install_packages
onnxlens_build release
"$root/build/release/app/onnxlens-register-desktop" >/dev/null 2>&1 || true
if [ $# -eq 0 ]; then
  set -- "$root/resources/samples/mnist_cnn/model.onnx"
fi
exec "$root/build/release/app/onnxlens" "$@"
