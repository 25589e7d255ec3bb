#!/usr/bin/env bash
# The Debian package as a user gets it: built with cpack from this build tree, checked with
# dpkg-deb --info/--contents and lintian, then unpacked into a scratch root (dpkg -x) where the
# installed executables run without the checkout: onnxlens-cli reads a model, the bash completion
# completes, the window draws a model with the layout worker it finds in ../lib/onnxlens.
# A portable tree's package also runs on emulated processors (emulated_cpus_check.sh: an
# x86-64-v2 one without AVX and an AVX2 one without AVX-512) when qemu-x86_64 is installed.
# Usage: package_check.sh BUILD_DIR SAMPLE_MODEL [TESTDATA_NODE_DIR [CASE_DIR...]]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
build=$(realpath "$1")
model=$(realpath "$2")
node_dir=${3:-}
extra_cases=("${@:4}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "package_check: $*" >&2
  exit 1
}

cd "$build"
cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/out/onnxlens_*.deb)
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

info=$(dpkg-deb --info "$deb")
grep -q '^ Package: onnxlens$' <<<"$info" || fail "no Package: onnxlens in the control file"
depends=$(sed -n 's/^ Depends: //p' <<<"$info")
# Computed by dpkg-shlibdeps from the executables' libraries.
for library in libc6 libstdc++6 libprotobuf libonnx1 libgvc6 libqt6core6 libqt6widgets6 libqt6svg6; do
  grep -q "$library" <<<"$depends" || fail "Depends lacks $library: $depends"
done
recommends=$(sed -n 's/^ Recommends: //p' <<<"$info")
for python in python3-torch python3-torchvision python3-onnx python3-numpy python3-sklearn; do
  grep -q "$python" <<<"$recommends" || fail "Recommends lacks $python: $recommends"
done

contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for path in ./usr/bin/onnxlens ./usr/bin/onnxlens-cli ./usr/lib/onnxlens/onnxlens-layout \
  ./usr/lib/onnxlens/onnxlens-engine-worker \
  ./usr/share/onnxlens/exporter/onnxlens_export.py \
  ./usr/share/onnxlens/exporter/onnxlens_sklearn_export.py \
  ./usr/share/applications/onnxlens.desktop ./usr/share/mime/packages/onnxlens.xml \
  ./usr/share/icons/hicolor/scalable/apps/onnxlens.svg \
  ./usr/share/icons/hicolor/scalable/mimetypes/application-x-onnx.svg \
  ./usr/share/man/man1/onnxlens.1.gz ./usr/share/man/man1/onnxlens-cli.1.gz \
  ./usr/share/bash-completion/completions/onnxlens-cli \
  ./usr/share/zsh/vendor-completions/_onnxlens-cli \
  ./usr/share/doc/onnxlens/copyright ./usr/share/doc/onnxlens/changelog.gz; do
  grep -qx -- "$path" <<<"$contents" || fail "the package lacks $path"
done

if command -v lintian >/dev/null; then
  lintian --fail-on error "$deb" 2>&1 | grep -v 'running with root privileges' || true
  lintian --fail-on error "$deb" >/dev/null 2>&1 || fail "lintian reports errors"
  echo "lintian: no errors"
fi

root="$work/root"
dpkg -x "$deb" "$root"
desktop-file-validate "$root/usr/share/applications/onnxlens.desktop" || fail "invalid desktop file"
grep -q 'Exec=onnxlens %F' "$root/usr/share/applications/onnxlens.desktop" || fail "no Exec line"
grep -q 'application/x-onnx' "$root/usr/share/mime/packages/onnxlens.xml" || fail "no MIME type"
for page in onnxlens onnxlens-cli; do
  zcat "$root/usr/share/man/man1/$page.1.gz" | grep -q "^\.TH $(tr a-z A-Z <<<"$page") \"1\"" ||
    fail "$page.1.gz is not a section 1 man page"
done
zcat "$root/usr/share/man/man1/onnxlens-cli.1.gz" | grep -q -- 'warmup' || fail "onnxlens-cli.1 lacks the options"

cli="$root/usr/bin/onnxlens-cli"
version=$("$cli" --version)
head -1 <<<"$version" | grep -q '^onnxlens-cli [0-9]' || fail "--version: $version"
# Built for the portable baseline, its kernels' instruction set chosen at run time (issue 31);
# a native tree (packaged only by this test, ONNXLENS_PACKAGE_NATIVE_TREE) names its kernels too.
if [ -z "${ONNXLENS_PACKAGE_NATIVE_TREE:-}" ]; then
  grep -Eq '^  kernels: .* \(built for x86-64(-v[234])?, dispatching ' <<<"$version" ||
    fail "the package is not a portable build: $version"
else
  grep -Eq '^  kernels: ' <<<"$version" || fail "--version names no kernels: $version"
fi
"$cli" info "$model" --json | grep -q '"node_count"' || fail "the installed onnxlens-cli cannot read $model"

# The installed executable on processors this machine is not.
if [ -z "${ONNXLENS_PACKAGE_NATIVE_TREE:-}" ] && [ -n "$node_dir" ]; then
  status=0
  bash "$here/emulated_cpus_check.sh" "$cli" "$node_dir" "${extra_cases[@]}" || status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 77 ] || fail "the installed onnxlens-cli failed on an emulated processor"
fi

completion=$(bash -c "source '$root/usr/share/bash-completion/completions/onnxlens-cli';
  COMP_WORDS=(onnxlens-cli bench m.onnx --war); COMP_CWORD=3; _onnxlens_cli; echo \"\${COMPREPLY[*]}\"")
[ "$completion" = "--warmup" ] || fail "bash completion of 'bench m.onnx --war' gave '$completion'"

# The window, unpacked away from the build tree: it must find its layout worker in
# ../lib/onnxlens to draw the model.
if drawn=$(env -u ONNXLENS_LAYOUT_WORKER -u ONNXLENS_ENGINE_WORKER QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$work" \
  timeout 60 "$root/usr/bin/onnxlens" --new-instance --exit-when-drawn "$model" 2>"$work/gui.err"); then
  grep -q "^drawn " <<<"$drawn" || fail "the installed onnxlens did not draw $model: $drawn"
else
  cat "$work/gui.err" >&2
  fail "the installed onnxlens failed on $model"
fi
echo "installed onnxlens drew $(basename "$model"); package checks passed"
