#!/usr/bin/env bash
# Build the one-folder app with PyInstaller: dist/bpeinspect/{bpeinspect, bpeinspect-cli, _internal/, share/}.
#
#   bash packaging/build.sh                 # into ./dist (work files in ./build/pyinstaller)
#   bash packaging/build.sh --dist /tmp/out --work /tmp/work
#   bash packaging/build.sh --install ~/.local   # then install it under PREFIX (bin/, share/ links)
#
# Needs `pip install -e ".[test]"` (it has pyinstaller) or `pip install pyinstaller`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIST="$ROOT/dist"
WORK="$ROOT/build/pyinstaller"
PREFIX=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dist) DIST="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --install) PREFIX="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
PY="${PYTHON:-python}"
"$PY" -c "import PyInstaller" 2>/dev/null || { echo "build.sh: PyInstaller is not installed (pip install pyinstaller)" >&2; exit 1; }

start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/bpeinspect.spec"
APP="$DIST/bpeinspect"

# Freedesktop files beside the app, laid out as under a prefix.
mkdir -p "$APP/share/applications" "$APP/share/icons/hicolor/scalable/apps"
cp "$ROOT/packaging/bpeinspect.desktop" "$APP/share/applications/"
cp "$ROOT/resources/icons/bpeinspect.svg" "$APP/share/icons/hicolor/scalable/apps/"
for png in "$ROOT"/packaging/icons/bpeinspect-*.png; do
  size=$(basename "$png" .png); size=${size#bpeinspect-}
  mkdir -p "$APP/share/icons/hicolor/${size}x${size}/apps"
  cp "$png" "$APP/share/icons/hicolor/${size}x${size}/apps/bpeinspect.png"
done
echo "built $APP in $(( $(date +%s) - start )) s ($(du -sh "$APP" | cut -f1))"

if [ -n "$PREFIX" ]; then
  mkdir -p "$PREFIX/lib" "$PREFIX/bin"
  rm -rf "$PREFIX/lib/bpeinspect"
  cp -a "$APP" "$PREFIX/lib/bpeinspect"
  ln -sf "$PREFIX/lib/bpeinspect/bpeinspect" "$PREFIX/bin/bpeinspect"
  ln -sf "$PREFIX/lib/bpeinspect/bpeinspect-cli" "$PREFIX/bin/bpeinspect-cli"
  cp -a "$APP/share/." "$PREFIX/share/"
  command -v update-desktop-database >/dev/null && update-desktop-database -q "$PREFIX/share/applications" || true
  echo "installed under $PREFIX (bin/bpeinspect, bin/bpeinspect-cli, share/applications/bpeinspect.desktop)"
fi
