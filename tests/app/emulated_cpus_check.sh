#!/usr/bin/env bash
# A portable onnxlens-cli on processors this machine is not (issue 31): run under qemu-x86_64's
# user-mode emulation, which stops a program with SIGILL at the first instruction the emulated
# processor lacks.
#   Nehalem  x86-64-v2 (SSE4.2, POPCNT; no AVX): the kernels line must say `baseline`;
#   Haswell  AVX2 + FMA, no AVX-512: it must say `AVX2+FMA`.
# On each, `compare` must reproduce the reference outputs of the ONNX backend test cases of the
# families the kernels are dispatched for (convolution, products, recurrent, normalization,
# pooling, reductions, activations, int8), and of any extra test-case folders given.
# Usage: emulated_cpus_check.sh CLI TESTDATA_NODE_DIR [CASE_DIR...]
# Exit 77 (skipped) without qemu-x86_64, 1 when a check fails.
set -euo pipefail
cli=$(realpath "$1")
node_dir=$2
shift 2
qemu=$(command -v qemu-x86_64 || true)
if [ -z "$qemu" ]; then
  echo "emulated_cpus_check: no qemu-x86_64 (Debian package qemu-user): skipped"
  exit 77
fi
fail() {
  echo "emulated_cpus_check: $*" >&2
  exit 1
}

cases=()
if [ -d "$node_dir" ]; then
  for pattern in 'test_conv_*' 'test_convinteger_*' 'test_matmul_*' 'test_matmulinteger' 'test_gemm_*' \
    'test_lstm_*' 'test_gru_*' 'test_rnn_*' 'test_layer_normalization_*' 'test_batchnorm_*' \
    'test_instancenorm_*' 'test_softmax_*' 'test_logsoftmax_*' 'test_reduce_mean_*' \
    'test_reduce_sum_*' 'test_maxpool_*' 'test_averagepool_*' 'test_globalaveragepool*' \
    'test_qlinearconv' 'test_qlinearmatmul_*' 'test_dynamicquantizelinear*' 'test_quantizelinear*' \
    'test_dequantizelinear*' 'test_relu' 'test_sigmoid*' 'test_tanh*' 'test_erf' 'test_hardswish*' \
    'test_leakyrelu*' 'test_add*' 'test_mul*'; do
    for dir in "$node_dir"/$pattern; do
      [ -f "$dir/model.onnx" ] && [[ "$dir" != *_expanded ]] && cases+=("$dir")
    done
  done
fi
cases+=("$@")
[ "${#cases[@]}" -gt 0 ] || fail "no test cases found in $node_dir"

# The CLI re-executes itself once to set GOMP_SPINCOUNT when it is unset; that exec would leave
# qemu's user-mode emulation and run natively, so it is set here.
export GOMP_SPINCOUNT=10000
for entry in "Nehalem:baseline" "Haswell:AVX2+FMA"; do
  cpu=${entry%%:*}
  expected=${entry#*:}
  version=$("$qemu" -cpu "$cpu" "$cli" --version 2>/dev/null) || fail "$cpu: --version failed"
  kernels=$(grep '^  kernels: ' <<<"$version" || true)
  grep -q "^  kernels: $expected (built for x86-64" <<<"$kernels" ||
    fail "$cpu: expected the $expected kernels of a portable build, got '$kernels'"
  failed=0
  for dir in "${cases[@]}"; do
    if ! out=$("$qemu" -cpu "$cpu" "$cli" compare "$dir/model.onnx" --threads 2 2>&1); then
      echo "$cpu: $(basename "$dir"): $(tail -3 <<<"$out")" >&2
      failed=$((failed + 1))
    fi
  done
  [ "$failed" -eq 0 ] || fail "$cpu: $failed of ${#cases[@]} test cases failed"
  echo "$cpu (${kernels#  kernels: }): ${#cases[@]} test cases match their reference outputs"
done
