"""Every page of the languages view exports the same three ways: PNG, SVG and CSV, atomically.

A page gives a *renderer*, ``render(painter, size)``, that draws what it shows into a painter
of the given size (a plot draws its scene, a table its widget); :func:`write_png` and
:func:`write_svg` run it into an image or an SVG file. CSV text is written by
:func:`write_text`, on the worker when the view asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QColor, QImage, QPaintDevice, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from bpeinspect.core.io.atomic import atomic_path
from bpeinspect.gui.overlay.palette import app_colors

Renderer = Callable[[QPainter, QSize], None]


def paint(device: QPaintDevice, render: Renderer, size: QSize) -> None:
    painter = QPainter(device)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        render(painter, size)
    finally:
        painter.end()


def write_png(path: str | os.PathLike[str], render: Renderer, size: QSize, *, scale: int = 2) -> None:
    """``render`` at ``scale`` times ``size`` into a PNG file."""
    image = QImage(size * scale, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(QColor(app_colors().plot_bg))
    paint(image, render, size)
    with atomic_path(path, suffix=Path(path).suffix) as tmp:
        if not image.save(str(tmp), "PNG"):
            raise OSError("could not write the PNG")


def write_svg(path: str | os.PathLike[str], render: Renderer, size: QSize, *, title: str = "") -> None:
    """``render`` into an SVG file (pyqtgraph's own SVG exporter cannot read what Qt 6.8+ writes)."""
    with atomic_path(path, suffix=Path(path).suffix) as tmp:
        gen = QSvgGenerator()
        gen.setFileName(str(tmp))
        gen.setSize(size)
        gen.setViewBox(QRect(QPoint(0, 0), size))
        gen.setTitle(title)
        gen.setDescription("bpeinspect: tokens across languages")
        paint(gen, render, size)


def write_text(path: str | os.PathLike[str], make: Callable[[], str]) -> str:
    """Write ``make()`` as UTF-8, atomically (run on the worker); returns the path."""
    text = make()
    with atomic_path(path, suffix=Path(path).suffix) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return str(path)


def widget_renderer(widget: QWidget) -> tuple[Renderer, QSize]:
    """A renderer that draws ``widget`` as it is on screen."""

    def render(painter: QPainter, size: QSize) -> None:
        widget.render(painter, QPoint(0, 0))

    return render, widget.size()


__all__ = ["Renderer", "widget_renderer", "write_png", "write_svg", "write_text"]
