#!/usr/bin/env bash
# Build the one-folder application into dist/thoughtdesk/ and run its self-test offscreen.
#
#   packaging/build.sh                 # uses the python on PATH (an env with thoughtdesk[local,package])
#   PYTHON=/work/venv/bin/python packaging/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
"$PYTHON" -m PyInstaller --version >/dev/null 2>&1 || {
  echo "PyInstaller is missing: $PYTHON -m pip install -e '.[local,package]'" >&2; exit 1; }
started=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/thoughtdesk.spec
echo "built dist/thoughtdesk in $(( $(date +%s) - started )) s; size: $(du -sh dist/thoughtdesk | cut -f1)"
# Desktop integration files beside the executables (install.sh-style copies are left to distros):
# the entry, the icon, the MIME type of a library file and the AppStream metadata.
cp resources/thoughtdesk.desktop resources/thoughtdesk.svg resources/thoughtdesk-mime.xml \
  resources/thoughtdesk.metainfo.xml LICENSE dist/thoughtdesk/
test -x dist/thoughtdesk/thoughtdesk-gui || { echo "the windowed executable is missing" >&2; exit 1; }
if [[ "${SKIP_SELF_TEST:-0}" != "1" ]]; then
  QT_QPA_PLATFORM=offscreen dist/thoughtdesk/thoughtdesk --self-test
fi
