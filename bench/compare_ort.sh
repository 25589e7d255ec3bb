#!/bin/sh
# onnxlens against ONNX Runtime 1.30 on the benchmark models (issue 7), in one command:
#     bench/compare_ort.sh [--quick] [--threads 1,2] [--models resnet50,vad] [--rounds N] [--json-out FILE]
# Installs npm onnxruntime-node 1.30 (with --ignore-scripts: the package ships libonnxruntime.so,
# nothing is downloaded at install time) into the cache folder, makes the models that are not
# committed (ResNet-50, MobileNetV2, BERT-base exports) there, and prints a Markdown table.
# ONNX Runtime is used only here, never by the application or its tests.
# Environment: ONNXLENS_BENCH_CACHE (default ~/.cache/onnxlens-bench), ONNXLENS_CLI (default
# build/release/app/onnxlens-cli), ONNXLENS_ORT_DIR (a folder with node_modules/onnxruntime-node
# to use instead of installing one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${ONNXLENS_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxlens-bench}
cli=${ONNXLENS_CLI:-$here/../build/release/app/onnxlens-cli}
mkdir -p "$cache"
ort=${ONNXLENS_ORT_DIR:-$cache/ort}
if [ ! -f "$ort/node_modules/onnxruntime-node/package.json" ]; then
    mkdir -p "$ort"
    npm install --prefix "$ort" --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30 >&2
fi
if [ ! -x "$cli" ]; then
    echo "compare_ort.sh: $cli is missing; build with: cmake --preset release && cmake --build --preset release" >&2
    exit 2
fi
exec /usr/bin/python3 "$here/compare_ort.py" --cache "$cache" --ort "$ort" --cli "$cli" "$@"
