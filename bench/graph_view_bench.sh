#!/usr/bin/env bash
# The graph view on big models: time from file to first drawn overview, to expand one block and
# to expand all (graph_view_bench, through GraphPage and the layout worker as in the window),
# and the overview's size in points (`onnxlens-cli render`). Prints a Markdown table.
#
# usage: bench/graph_view_bench.sh [BUILD_DIR]   (default build/release)
#
# Models, made when missing under $ONNXLENS_BENCH_CACHE (default ~/.cache/onnxlens-bench), never
# committed: the repository's samples; 96- and 192-layer transformer exports and a 96-layer one
# without name scopes (bench/make_big_transformer.py); ResNet-50 and BERT-base
# (bench/make_bench_models.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
build="${1:-$repo/build/release}"
cache="${ONNXLENS_BENCH_CACHE:-$HOME/.cache/onnxlens-bench}"
python=/usr/bin/python3  # Debian's python3-torch and python3-onnx

make_transformer() {  # NAME LAYERS [--no-scopes]
    local out="$cache/big/$1/model.onnx"
    [[ -f "$out" ]] || "$python" "$here/make_big_transformer.py" "$out" --layers "$2" "${@:3}" >&2
    echo "$out"
}

models=()
for sample in "$repo"/resources/samples/*/model.onnx; do models+=("$sample"); done
models+=("$(make_transformer transformer96 96)")
models+=("$(make_transformer transformer192 192)")
models+=("$(make_transformer transformer96_noscope 96 --no-scopes)")
for name in resnet50 bert_base; do
    [[ -f "$cache/models/$name/model.onnx" ]] || "$python" "$here/make_bench_models.py" "$cache" "$name" >&2
    models+=("$cache/models/$name/model.onnx")
done

export QT_QPA_PLATFORM=offscreen
results="$(mktemp)"
trap 'cp "$results" /tmp/graph_view_bench.jsonl; rm -f "$results"' EXIT
for model in "${models[@]}"; do
    "$build/bench/graph_view_bench" "$model" >>"$results"
    size="$("$build/app/onnxlens-cli" render "$model" --out "$(mktemp --suffix=.svg)" --json | tr -d "\n")"
    echo "{\"render\": $size}" >>"$results"
done

"$python" - "$results" <<'EOF'
import json, os, sys
rows, renders = [], {}
for line in open(sys.argv[1]):
    doc = json.loads(line)
    if "render" in doc:
        renders[doc["render"]["model"]] = doc["render"]
    else:
        rows.append(doc)
def name(path):
    folder, file = os.path.split(path)
    return os.path.basename(folder) if file == "model.onnx" else file
print("| model | operators | load ms | overview ms | overview (GUI) pt | render pt | w/h | expand one block ms | re-expand ms | expand all |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    render = renders.get(r["model"], {})
    w, h = render.get("width", 0), render.get("height", 1)
    if "expandAllMs" in r:
        expand_all = f'{r["expandAllMs"]} ms'
    elif "expandAllRefused" in r:
        expand_all = "refused: " + r["expandAllRefused"][:60] + "..."
    else:
        expand_all = "failed: " + r.get("expandAllError", r.get("error", "?"))
    block = f'{r["expandMs"]} ({r.get("blockOperators", "?")} ops)' if "expandMs" in r else "-"
    print(f'| {name(r["model"])} | {r.get("operators", "?")} | {r.get("loadMs", "?")} | {r.get("overviewMs", r.get("error", "?"))} '
          f'| {r.get("overviewWidth", 0):.0f} x {r.get("overviewHeight", 0):.0f} | {w:.0f} x {h:.0f} | {w / h:.2f} '
          f'| {block} | {r.get("reexpandMs", "-")} | {expand_all} |')
EOF
