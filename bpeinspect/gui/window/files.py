"""What the window does with files: the open, save and export dialogs, dropped files, and the
token overlay's HTML page.

>>> files = FileCommands(window); files.export_html("overlay.html")   # doctest: +SKIP

The page is the whole text or a stretch of it. Every token becomes a coloured ``<span>`` with
its id and bytes in a tooltip: about 120 bytes of HTML per token, so 10 MB of text with two
tokenizers make a page of 200 MB or more that a browser can hardly open. The window therefore
estimates the size first (:func:`estimate_html_size`) and, past :data:`HTML_LIMIT`, offers the
part on screen or the selection. The page is written by a worker, a piece at a time, straight
to the file (:func:`write_overlay_html`), from an :class:`OverlaySection` per tokenizer: the
encoding's parts as they were when the export was asked for (an edit replaces parts, never
changes one).

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> "<span" in overlay_html([(tok, tok.encode_with_offsets("hi there"))])
True
>>> enc = tok.encode_with_offsets("hi there you")
>>> page = "".join(overlay_html_pieces([OverlaySection.of(tok, enc, 3, 8)]))
>>> "there" in page, "you" in page, ">hi<" in page
(True, False, False)
"""

from __future__ import annotations

import bisect
import html
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from PySide6.QtCore import QObject, QPoint
from PySide6.QtWidgets import QAbstractButton, QFileDialog, QMessageBox

from bpeinspect.core import SPECIAL, Cancelled, Encoding, Tokenizer, hex_bytes, human_size
from bpeinspect.core.dataset import is_dataset_name
from bpeinspect.core.io import atomic_open, atomic_path, atomic_write, is_vocabulary_name, open_patterns
from bpeinspect.gui.overlay.palette import EXPORT_SPECIAL, EXPORT_SPLIT, TokenPalette

VOCAB_FILTER = f"Vocabularies ({' '.join(open_patterns())});;All files (*)"


class FileCommands(QObject):
    """File ▸ Open/Save/Export and drag and drop, through the public API of one main window."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        # (estimated size, a selection exists) -> "all", "visible", "selection" or "" (cancel);
        # asked when an HTML export would be bigger than HTML_LIMIT (replaceable, for tests)
        self.ask_html_scope: Callable[[int, bool], str] = self._ask_html_scope

    # -- dialogs ------------------------------------------------------------------------------------

    def ask_open_text(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open text")
        if path:
            self.window.open_text_file(path)

    def ask_open_tokenizer(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open tokenizer", "", VOCAB_FILTER)
        if path:
            self.window.open_tokenizer(path)

    def ask_save_text(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save text as", "", "Text (*.txt)")
        if path:
            self.save_text(path)

    def save_text(self, path: str) -> None:
        """Write the text to ``path`` in a worker (encoding and syncing 10 MB takes a while)."""
        win = self.window
        win.jobs.submit(
            ("save-text", path),
            atomic_write,
            path,
            win.text(),
            on_returned=lambda _: win.show_message(f"Saved the text to {path}"),
            on_errored=lambda exc: win.show_error(f"Could not save {path}: {exc}"),
        )

    def ask_export_html(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export overlay as HTML", "overlay.html", "HTML (*.html)")
        if path:
            self.export_html(path)

    def ask_export_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export overlay as PNG", "overlay.png", "PNG (*.png)")
        if path:
            self.export_png(path)

    # -- exports ------------------------------------------------------------------------------------

    def html_ranges(self) -> dict[str, tuple[int, int | None]]:
        """The stretches of text an HTML export can take, as UTF-16 ranges: ``all``, ``visible``
        (the lines the current pane shows) and ``selection`` (if text is selected)."""
        ranges: dict[str, tuple[int, int | None]] = {"all": (0, None)}
        pane = self.window.panes.pane_of(self.window.registry.current()) if self.window.registry.current() else None
        panes = self.window.panes.panes()
        view = pane.view if pane is not None else (panes[0].view if panes else None)
        if view is None:
            return ranges
        rect = view.viewport().rect()
        first = view.cursorForPosition(QPoint(0, 0)).block().position()
        last = view.cursorForPosition(rect.bottomRight()).block()
        ranges["visible"] = (first, last.position() + last.length())
        cur = view.textCursor()
        if cur.hasSelection():
            ranges["selection"] = (cur.selectionStart(), cur.selectionEnd())
        return ranges

    def export_html(self, path: str, scope: str | None = None) -> bool:
        """Write the overlay of every open tokenizer as one HTML page, in a worker. ``scope``:
        ``all``, ``visible`` or ``selection``; None: all of it, unless the page would be bigger
        than :data:`HTML_LIMIT`, when the user is asked. False if nothing is exported."""
        win = self.window
        pairs = [(e.tok, e.result.enc) for e in win.registry.entries() if e.result is not None]
        if not pairs:
            win.show_error("Nothing to export: open a tokenizer first.")
            return False
        ranges = self.html_ranges()
        whole = [OverlaySection.of(tok, enc) for tok, enc in pairs]  # each encoding read once
        if scope is None:
            size = estimate_html_size(whole)
            scope = "all" if size <= HTML_LIMIT else self.ask_html_scope(size, "selection" in ranges)
        if scope not in ranges:
            return False
        lo, hi = ranges[scope]
        sections = [s._replace(lo=lo, hi=hi) for s in whole]
        what = {
            "all": "the overlay",
            "visible": "the visible part of the overlay",
            "selection": "the selection's overlay",
        }
        win.jobs.submit(
            "export-html",
            write_overlay_html,
            path,
            sections,
            win.appearance.token_palette,
            on_returned=lambda _: win.show_message(f"Exported {what[scope]} to {path}"),
            on_errored=lambda exc: win.show_error(f"Could not export {path}: {exc}"),
        )
        return True

    def _ask_html_scope(self, size: int, has_selection: bool) -> str:
        box = QMessageBox(self.window)
        box.setWindowTitle("Export overlay as HTML")
        box.setIcon(QMessageBox.Icon.Question)
        box.setText(
            f"The whole overlay would make a page of about {human_size(size)}, more than a browser opens "
            "comfortably. Export a part of it?"
        )
        choices: dict[QAbstractButton, str] = {}
        if has_selection:
            choices[box.addButton("The selection", QMessageBox.ButtonRole.AcceptRole)] = "selection"
        choices[box.addButton("The visible part", QMessageBox.ButtonRole.AcceptRole)] = "visible"
        choices[box.addButton(f"All ({human_size(size)})", QMessageBox.ButtonRole.DestructiveRole)] = "all"
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return choices.get(box.clickedButton(), "")

    def export_png(self, path: str) -> bool:
        """Save a picture of the tokenizer panes (atomically, as every file is written): drawn
        here, compressed and written on the worker (that took tens of ms on the GUI thread)."""
        win = self.window
        win.jobs.submit(
            ("export-png", str(path)),
            save_png,
            win.panes.grab().toImage(),  # a QImage: a worker may save it, a QPixmap not
            path,
            on_returned=lambda _: win.show_message(f"Exported a picture of the overlay to {path}"),
            on_errored=lambda exc: win.show_error(f"Could not write {path}: {exc}"),
        )
        return True

    # -- drops --------------------------------------------------------------------------------------

    def open_dropped(self, paths: list[str]) -> None:
        """Vocabulary files and folders open as tokenizers, datasets (``.jsonl``, ``.json``) in the
        dataset panel, anything else as the text."""
        for path in paths:
            if Path(path).is_dir() or is_vocabulary_name(Path(path).name):
                self.window.open_tokenizer(path)
            elif is_dataset_name(Path(path).name) and "dataset" in self.window.panels.specs:
                self.window.panels.show("dataset").open_file(path)
            else:
                self.window.open_text_file(path)


def save_png(picture: Any, path: str | os.PathLike[str]) -> None:
    """Write ``picture`` (a ``QPixmap`` or ``QImage``) to ``path`` as PNG, atomically."""
    with atomic_path(path, suffix=".png") as tmp:
        if not picture.save(str(tmp), "PNG"):
            raise OSError("the PNG could not be written")


# -- the overlay's HTML page ---------------------------------------------------------------------

HTML_LIMIT = 16 << 20  # bytes of HTML a browser still opens well: bigger exports ask first
HTML_PER_TOKEN = 120  # bytes of HTML per token, near enough for an estimate (span, colour, tooltip)
STEP = 4096  # tokens written per step (between two checks for Cancel)
HEAD = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bpeinspect overlay</title><style>"
    "body{font-family:sans-serif;margin:2em} pre{white-space:pre-wrap;font-size:15px;line-height:1.7}"
    f"pre span{{border-radius:3px;margin-right:1px;padding:1px 0}} .sp{{outline:2px solid {EXPORT_SPECIAL}}}"
    f".split{{border-bottom:2px dashed {EXPORT_SPLIT}}}"
    "</style></head><body>"
)


class OverlaySection(NamedTuple):
    """One tokenizer's tokens between UTF-16 positions ``lo`` and ``hi`` (None: to the end):
    the parts (each an :class:`Encoding` of a stretch of the text and its UTF-16 start)."""

    name: str
    parts: list[tuple[int, Encoding]]
    lo: int = 0
    hi: int | None = None
    n_tokens: int = 0  # tokens of the whole encoding (for the heading)
    n_chars: int = 0

    @classmethod
    def of(cls, tok: Tokenizer, enc: Any, lo: int = 0, hi: int | None = None) -> OverlaySection:
        """What ``enc`` (an :class:`Encoding` or a ``LiveEncoding``) holds now (a few ms at 10 MB)."""
        if hasattr(enc, "n_parts"):
            parts, n_chars = [(p.u16, p.enc) for p in enc.parts() if p.enc.ids], enc.n_chars
        else:
            parts, n_chars = [(0, enc)], len(enc.text)
        return cls(tok.name or "tokenizer", parts, lo, hi, len(enc), n_chars)

    def token_count(self) -> int:
        """Tokens in the section (those that overlap ``lo`` to ``hi``)."""
        if self.lo <= 0 and self.hi is None:  # all of them: no part's offsets looked up
            return sum(len(enc.ids) for _, enc in self.parts)
        return sum(len(_tokens(enc, start, self.lo, self.hi)) for start, enc in self.overlapping())

    def overlapping(self) -> list[tuple[int, Encoding]]:
        """The parts that may hold tokens between ``lo`` and ``hi``. Told by where the next part
        starts: the offsets of the others are never read (a part sent back from a child process
        builds them when first read, seconds of work for a 10 MB text)."""
        starts = [start for start, _ in self.parts[1:]] + [None]
        return [
            (start, enc)
            for (start, enc), after in zip(self.parts, starts)
            if (after is None or after > self.lo) and (self.hi is None or start < self.hi)
        ]


def _tokens(enc: Encoding, start: int, lo: int, hi: int | None) -> range:
    """The tokens of ``enc`` (which starts at UTF-16 position ``start``) that overlap ``lo``-``hi``."""
    first = bisect.bisect_right(enc.utf16_ends, lo - start) if lo > start else 0
    end = len(enc.ids) if hi is None else bisect.bisect_left(enc.utf16_starts, hi - start)
    return range(first, max(first, end))


def estimate_html_size(sections: list[OverlaySection]) -> int:
    """Bytes the page of ``sections`` will take, roughly (tokens times :data:`HTML_PER_TOKEN`).

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("gpt2")
    >>> estimate_html_size([OverlaySection.of(tok, tok.encode_with_offsets("a b c"))]) > 3 * 100
    True
    """
    return len(HEAD) + sum(s.token_count() * HTML_PER_TOKEN for s in sections)


def _no_bytes(token_id: int) -> bytes:
    """The bytes of a token of an encoding that cannot look them up (none, as ``Encoding.token`` says)."""
    return b""


def _spans(enc: Encoding, tokens: range, pal: TokenPalette) -> Iterator[tuple[int, str]]:
    """The spans of ``tokens`` of one part, each with the token after it; tokens sharing a
    character (a split one) share a span."""
    ids, cs, ce, flags, text = enc.ids, enc.char_starts, enc.char_ends, enc.flags, enc.text
    colors: dict[int, str] = {}
    token_bytes = enc.token_bytes_of or _no_bytes
    i, end = tokens.start, tokens.stop
    while 0 < i < end and cs[i] < ce[i - 1]:  # a split character's group starts before the range
        i -= 1
    while i < end:
        j = i
        while j + 1 < len(ids) and cs[j + 1] < ce[j]:
            j += 1
        group = ids[i : j + 1]
        data = b"".join(token_bytes(x) for x in group)
        title = f"id {', '.join(map(str, group))} · bytes {hex_bytes(data)}"
        cls = "sp" if flags[i] & SPECIAL else ("split" if j > i else "")
        t = ids[i]
        color = colors.get(t)
        if color is None:
            color = colors[t] = pal.background(t).name()
        yield (
            j + 1,
            (
                f"<span class='{cls}' style='background:{color}' title='{html.escape(title, quote=True)}'>"
                f"{html.escape(text[cs[i] : ce[j]])}</span>"
            ),
        )
        i = j + 1


def overlay_html_pieces(
    sections: list[OverlaySection],
    palette: TokenPalette | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[str]:
    """The page, a few thousand tokens at a time: one section per tokenizer."""
    pal = palette or TokenPalette()
    total = sum(s.token_count() for s in sections)
    done = 0
    yield HEAD
    for s in sections:
        whole = s.lo == 0 and s.hi is None
        scope = "" if whole else " (part of the text)"
        yield (
            f"<h3>{html.escape(s.name)}{scope} — {s.n_tokens:,} tokens, {s.n_chars:,} characters"
            f" in the whole text</h3><pre>"
        )
        for start, enc in s.overlapping():
            tokens = _tokens(enc, start, s.lo, s.hi)
            batch: list[str] = []
            at = tokens.start
            for after, span in _spans(enc, tokens, pal):
                batch.append(span)
                if len(batch) >= STEP or after >= tokens.stop:
                    if should_stop is not None and should_stop():
                        raise Cancelled("export cancelled")
                    yield "".join(batch)
                    batch = []
                    done += max(0, min(after, tokens.stop) - at)
                    at = after
                    if progress is not None:
                        progress(done, total)
        yield "</pre>"
    yield "</body></html>"


def write_overlay_html(
    path: str,
    sections: list[OverlaySection],
    palette: TokenPalette | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write the page to ``path`` a piece at a time (atomically: a cancelled or failed export
    leaves the file as it was)."""
    with atomic_open(path, "w", encoding="utf-8") as f:
        for piece in overlay_html_pieces(sections, palette, should_stop=should_stop, progress=progress):
            f.write(piece)


def overlay_html(encodings: list[tuple[Tokenizer, Encoding]], palette: TokenPalette | None = None) -> str:
    """The whole page of ``encodings`` as one string (small texts)."""
    return "".join(overlay_html_pieces([OverlaySection.of(tok, enc) for tok, enc in encodings], palette))
