#!/usr/bin/env bash
# Installs onnxlens into a temporary prefix, then checks, with the XDG directories pointing
# there, that the MIME database maps *.onnx to application/x-onnx, that gio names onnxlens as
# its handler, and that the .desktop file validates cleanly.
set -euo pipefail
build="${1:?usage: desktop_integration_test.sh BUILD_DIR}"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
data="$prefix/share"
desktop="$data/applications/onnxlens.desktop"
test -f "$desktop" || { echo "FAIL: $desktop not installed"; exit 1; }
test -f "$data/mime/packages/onnxlens.xml" || { echo "FAIL: MIME XML not installed"; exit 1; }
test -f "$data/icons/hicolor/scalable/apps/onnxlens.svg" || { echo "FAIL: app icon not installed"; exit 1; }
test -f "$data/icons/hicolor/scalable/mimetypes/application-x-onnx.svg" || { echo "FAIL: MIME icon not installed"; exit 1; }
grep -q '^Exec=onnxlens %F$' "$desktop" || { echo "FAIL: Exec line"; exit 1; }
grep -q '^MimeType=application/x-onnx;$' "$desktop" || { echo "FAIL: MimeType line"; exit 1; }

# The install step ran update-mime-database; run it again in case it was not on PATH then.
update-mime-database "$data/mime"
update-desktop-database "$data/applications"

validation="$(desktop-file-validate "$desktop" 2>&1 || true)"
if [ -n "$validation" ]; then echo "FAIL: desktop-file-validate: $validation"; exit 1; fi

# GIO lists an application only if its Exec program is on PATH: the installed one.
export PATH="$prefix/bin:$PATH"
export XDG_DATA_HOME="$prefix/home-data" XDG_DATA_DIRS="$data" XDG_CONFIG_HOME="$prefix/config"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME"
printf '\x08\x08\x12\x0connxlens-test\x3a\x02\x10\x0d' > "$prefix/model.onnx"  # protobuf bytes
type="$(gio info -a standard::content-type "$prefix/model.onnx" | sed -n 's/.*standard::content-type: //p')"
[ "$type" = "application/x-onnx" ] || { echo "FAIL: *.onnx is '$type', not application/x-onnx"; exit 1; }
handlers="$(gio mime application/x-onnx)"
echo "$handlers"
echo "$handlers" | grep -q 'onnxlens.desktop' || { echo "FAIL: gio does not name onnxlens"; exit 1; }
echo "PASS: desktop integration"
