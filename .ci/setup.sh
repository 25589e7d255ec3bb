#!/usr/bin/env bash
# Shared by run.sh and test.sh: install the missing Debian packages, configure and build.
# Idempotent: packages already present are not reinstalled, the build is incremental.
set -euo pipefail

ONNXLENS_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6svg6 qt6-qpa-plugins libqt6opengl6-dev libxkbcommon-dev
  libgraphviz-dev graphviz
  libcli11-dev libeigen3-dev libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata libdnnl-dev ocl-icd-opencl-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libre2-dev libjpeg62-turbo-dev libpng-dev
  python3-onnx python3-numpy python3-torch python3-torchvision python3-sklearn
  desktop-file-utils shared-mime-info libglib2.0-bin xdg-utils help2man lintian zsh dpkg-dev
  clang-format clang-tidy
)

onnxlens_install_packages() {
  local missing=()
  for p in "${ONNXLENS_PACKAGES[@]}" "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "onnxlens: installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

onnxlens_build() {
  local preset="${1:-release}"
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cd "$root"
  # Paths relative to the checkout in ccache's keys: a fresh clone elsewhere reuses the cache.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
}
