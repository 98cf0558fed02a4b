"""How the languages view writes its figures: on its pages (one precision, one tooltip), and out,
the same three ways from every page: PNG, SVG and CSV, atomically.

A page gives a *renderer*, ``render(painter, size)``, that draws what it shows into a painter
of the given size (a plot draws its scene, a table its widget); :func:`draw_png` and
:func:`write_svg` run it into an image or an SVG file, and :func:`save_image` writes the image
as a PNG, on the worker when the view asks for it, as :func:`write_text` writes CSV text
(:func:`csv_text`).

>>> premium_text(2.3), premium_text(17.754), share_text(0.4138)
('2.30×', '17.75×', '41 %')
>>> premium_ticks(0.4, 20)[0]
[(-2, '0.25×'), (-1, '0.5×'), (0, '1×'), (1, '2×'), (2, '4×'), (3, '8×'), (4, '16×'), (5, '32×')]
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QColor, QImage, QImageWriter, QPaintDevice, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from bpeinspect.core.analysis import CorpusStats, Language
from bpeinspect.core.io import atomic_path
from bpeinspect.gui.concurrency import Jobs
from bpeinspect.gui.overlay.palette import app_colors

Renderer = Callable[[QPainter, QSize], None]


# -- the figures, as text ------------------------------------------------------------------------


def premium_text(p: float | None) -> str:
    """A premium as the app shows it everywhere: two decimals and ×."""
    return "" if p is None else f"{p:.2f}×"


def share_text(share: float) -> str:
    return f"{share * 100:.0f} %"


def language_name(lang: Language) -> str:
    """``"Tamil (tam)"``: the name and the code, or the code alone when it is the name."""
    return lang.label if lang.name == lang.code else f"{lang.name} ({lang.code})"


def baseline_name(stats: CorpusStats) -> str:
    return stats.corpus.language(stats.baseline).name if stats.baseline is not None else ""


def language_tooltip(stats: CorpusStats, code: str, *, heading: str = "") -> str:
    """Everything known of one language in ``stats``: its facts, then each tokenizer's figures."""
    lang = stats.corpus.language(code)
    facts = ", ".join(x for x in (f"{lang.script} script" if lang.script else "", lang.region) if x)
    first = stats.counts[stats.tokenizers[0], code]
    lines = [language_name(lang) + (f" — {facts}" if facts else "")]
    if heading:
        lines.append(heading)
    lines.append(f"{first.bytes:,} bytes, {first.chars:,} characters")
    base = baseline_name(stats)
    for tok in stats.tokenizers:
        r = stats.counts[tok, code]
        p = stats.premium(tok, code)
        vs = f", {premium_text(p)} {base}" if p is not None and base else ""
        lines.append(f"{tok}: {r.tokens:,} tokens, {r.bytes_per_token:.2f} bytes/token{vs}")
    if lang.direction == "rtl":
        lines.append("written right to left")
    lines.append("Click to open its text")
    return "\n".join(lines)


def premium_ticks(lo: float, hi: float) -> list[list[tuple[float, str]]]:
    """Ticks of a log2 premium axis from ``lo`` to ``hi`` (premiums): powers of two, labelled ``2×``."""
    a = math.floor(math.log2(max(lo, 1 / 64)))
    b = math.ceil(math.log2(max(hi, 1.0)))
    major: list[tuple[float, str]] = [(k, f"{2.0**k:g}×") for k in range(min(a, 0), max(b, 1) + 1)]
    minor = [(math.log2(m * 2.0**k), "") for k in range(min(a, 0), max(b, 1)) for m in (1.5,)]
    return [major, minor]


def log2_premium(p: float) -> float:
    return math.log2(p) if p > 0 else -6.0


def csv_text(head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV with a header row; ``None`` cells are empty, floats keep four decimals."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for row in rows:
        w.writerow(["" if v is None else round(v, 4) if isinstance(v, float) else v for v in row])
    return buf.getvalue()


# -- pages written out ----------------------------------------------------------------------------


def paint(device: QPaintDevice, render: Renderer, size: QSize) -> None:
    painter = QPainter(device)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        render(painter, size)
    finally:
        painter.end()


def draw_png(render: Renderer, size: QSize, *, scale: int = 2) -> QImage:
    """``render`` at ``scale`` times ``size`` into an image (on the GUI thread: it draws widgets)."""
    image = QImage(size * scale, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(QColor(app_colors().plot_bg))
    paint(image, render, size)
    return image


def save_image(path: str | os.PathLike[str], image: QImage) -> str:
    """Write ``image`` as a PNG file, atomically; returns the path. A worker may run it:
    compressing a big picture takes a while, and a QImage needs no GUI thread."""
    with atomic_path(path, suffix=Path(path).suffix) as tmp:
        if not QImageWriter(str(tmp), b"png").write(image):
            raise OSError("could not write the PNG")
    return str(path)


def submit_png(
    jobs: Jobs,
    path: str | os.PathLike[str],
    render: Renderer,
    size: QSize,
    *,
    done: Callable[[str], None],
    failed: Callable[[str], None],
) -> None:
    """Draw the figure here (Qt paints on the GUI thread), compress and write it as a PNG on
    ``jobs``' worker; ``done(path)`` after, or ``failed(message)``. Another export does not stop
    this one."""
    jobs.submit(
        ("export", str(path)),
        save_image,
        path,
        draw_png(render, size),
        on_returned=done,
        on_errored=lambda exc: failed(f"{path}: could not export: {exc}"),
    )


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


__all__ = [
    "Renderer",
    "baseline_name",
    "csv_text",
    "language_name",
    "language_tooltip",
    "log2_premium",
    "premium_text",
    "premium_ticks",
    "share_text",
    "widget_renderer",
    "draw_png",
    "save_image",
    "write_svg",
    "write_text",
]
