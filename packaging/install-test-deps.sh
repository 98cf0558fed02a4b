#!/usr/bin/env bash
# Everything the test suite needs on a fresh Debian machine: the project with its test extra,
# and the system libraries Qt needs to run offscreen (fonts for non-Latin screenshots).
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
command -v fc-list >/dev/null 2>&1 || need_apt+=(fontconfig)
[ -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || need_apt+=(fonts-noto-cjk)
[ -e /usr/share/fonts/truetype/noto/NotoSans-Regular.ttf ] || need_apt+=(fonts-noto-core)
[ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || need_apt+=(fonts-noto-color-emoji)
ldconfig -p 2>/dev/null | grep -q libEGL.so.1 || need_apt+=(libegl1)
ldconfig -p 2>/dev/null | grep -q libxkbcommon.so.0 || need_apt+=(libxkbcommon0)
ldconfig -p 2>/dev/null | grep -q libGL.so.1 || need_apt+=(libgl1)
ldconfig -p 2>/dev/null | grep -q libfontconfig.so.1 || need_apt+=(libfontconfig1)
ldconfig -p 2>/dev/null | grep -q libdbus-1.so.3 || need_apt+=(libdbus-1-3)
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
python -m pip install -q --upgrade pip
python -m pip install -q -e ".[test]"
