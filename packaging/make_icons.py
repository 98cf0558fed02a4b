"""Render resources/icons/bpeinspect.svg to the PNG, ICO and ICNS icons in packaging/icons/.

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py

The outputs are committed, so a build needs no extra tools; run this again after changing the SVG.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "bpeinspect.svg"
OUT = ROOT / "packaging" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(size: int):
    """The SVG drawn into a transparent ``size`` x ``size`` QImage."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    img = QImage(size, size, QImage.Format.Format_ARGB32)
    img.fill(Qt.GlobalColor.transparent)
    painter = QPainter(img)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(SVG)).render(painter)
    painter.end()
    return img


def main() -> int:
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        if not render(size).save(str(OUT / f"bpeinspect-{size}.png"), "PNG"):
            print(f"could not write the {size}px PNG", file=sys.stderr)
            return 1
    # Qt's ico/icns writers store the one image they are given; 256 px suits both.
    ok = render(256).save(str(OUT / "bpeinspect.ico"), "ICO") and render(512).save(str(OUT / "bpeinspect.icns"), "ICNS")
    if not ok:
        print("could not write the .ico/.icns (Qt's imageformats plugins missing?)", file=sys.stderr)
        return 1
    print(f"icons written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
