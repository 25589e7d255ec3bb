#!/usr/bin/env bash
# Registers onnxlens for the current user (~/.local/share): the .desktop file (pointing at the
# build's executable), the application/x-onnx MIME type and the icons, so that double-clicking a
# .onnx file in the file manager opens it in onnxlens.
#   register-desktop.sh BUILD_APP_DIR     (e.g. build/release/app)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
icons="$here/../icons"
app_dir="$(cd "${1:?usage: register-desktop.sh BUILD_APP_DIR}" && pwd)"
exe="$app_dir/gui/onnxlens"
[ -x "$exe" ] || { echo "register-desktop.sh: no executable at $exe" >&2; exit 2; }
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/mime/packages" \
         "$data/icons/hicolor/scalable/apps" "$data/icons/hicolor/scalable/mimetypes"
sed "s|^Exec=onnxlens %F|Exec=\"$exe\" %F|" "$here/onnxlens.desktop" > "$data/applications/onnxlens.desktop"
cp "$here/onnxlens-mime.xml" "$data/mime/packages/onnxlens.xml"
cp "$icons/onnxlens.svg" "$data/icons/hicolor/scalable/apps/onnxlens.svg"
cp "$icons/application-x-onnx.svg" "$data/icons/hicolor/scalable/mimetypes/application-x-onnx.svg"
command -v update-mime-database >/dev/null && update-mime-database "$data/mime"
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications"
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
command -v xdg-mime >/dev/null && xdg-mime default onnxlens.desktop application/x-onnx || true
echo "registered $exe for application/x-onnx under $data"
