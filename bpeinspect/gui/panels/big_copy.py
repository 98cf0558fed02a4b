"""Copies of many tokens: the clipboard text is built in a worker, never on the GUI thread.

Building the text of 2.4 million tokens takes seconds; the window stays usable meanwhile, a
progress dialog (with Cancel) shows for copies of :data:`PROGRESS_ROWS` tokens or more, and a
text over :data:`CLIPBOARD_LIMIT` is offered as a file instead (a clipboard that big is more
than most programs will paste).

What is copied is read from an :class:`IdSnapshot`: the id lists of the encoding's parts as
they were when the copy was asked for (an edit replaces parts, never changes one in place),
so the worker reads them while the user goes on typing.

>>> snap = IdSnapshot.of_ids([5, 6, 7, 8])
>>> b"".join(build_copy(snap, [(1, 3)], "ids", None))
b'6, 7'
>>> b"".join(build_copy(snap, None, "ids_json", None))
b'[5, 6, 7, 8]'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, NamedTuple

from PySide6.QtCore import QByteArray, QMimeData, QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

from bpeinspect.core import Cancelled, Tokenizer, display_bytes, human_size
from bpeinspect.core.io import atomic_open
from bpeinspect.gui.concurrency import Jobs, describe_error
from bpeinspect.gui.overlay.glyphs import shown

PROGRESS_ROWS = 200_000  # copies of this many tokens or more show a progress dialog
CLIPBOARD_LIMIT = 32 << 20  # UTF-8 bytes: a bigger copy is offered as a file instead
CHUNK = 4096  # tokens turned into text per step (between two checks for Cancel)
FORMATS = ("text", "ids", "pairs", "ids_json")
WHAT = {"text": "token texts", "ids": "token ids", "pairs": "tokens as JSON", "ids_json": "token ids as JSON"}

Ranges = Sequence[tuple[int, int]]  # (first, end) token ranges, in order


class IdSnapshot:
    """The token ids of an encoding as they are now, readable from another thread: the id
    lists of its parts (a :class:`~bpeinspect.core.live_text.LiveEncoding`'s segments), or
    its one list."""

    def __init__(self, parts: list[tuple[int, Sequence[int]]]) -> None:
        self.parts = parts  # (index of the part's first token, its ids)
        self.n = parts[-1][0] + len(parts[-1][1]) if parts else 0

    @classmethod
    def of(cls, enc: Any) -> IdSnapshot:
        """What ``enc`` (an :class:`Encoding` or a ``LiveEncoding``) holds now (a few ms at 10 MB)."""
        if enc is None:
            return cls([])
        if hasattr(enc, "n_parts"):
            return cls([(p.token, p.enc.ids) for p in enc.parts() if p.enc.ids])
        return cls.of_ids(enc.ids)

    @classmethod
    def of_ids(cls, ids: Sequence[int]) -> IdSnapshot:
        return cls([(0, ids)] if len(ids) else [])

    def __len__(self) -> int:
        return self.n

    def runs(self, ranges: Ranges | None, size: int = 0) -> Iterator[Sequence[int]]:
        """The ids of ``ranges`` (None: all), in runs of at most ``size`` (0: :data:`CHUNK`)."""
        parts, k, size = self.parts, 0, size or CHUNK
        for first, end in ranges if ranges is not None else [(0, self.n)]:
            first, end = max(first, 0), min(end, self.n)
            while k > 0 and parts[k][0] > first:  # ranges out of order: look again from the start
                k = 0
            i = first
            while i < end and k < len(parts):
                start, ids = parts[k]
                if i >= start + len(ids):
                    k += 1
                    continue
                stop = min(end, start + len(ids), i + size)
                yield ids[i - start : stop - start]
                i = stop


def _remember(texts: dict[int, str], tok: Tokenizer, token_id: int) -> str:
    text = texts[token_id] = shown(display_bytes(tok.token_bytes(token_id)))
    return text


def _pair(tok: Tokenizer, token_id: int) -> dict[str, Any]:
    data = tok.token_bytes(token_id)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = "<" + data.hex(" ") + ">"
    return {"id": token_id, "token": text}


def _piece_maker(fmt: str, tok: Tokenizer | None) -> Callable[[Sequence[int]], str]:
    """How a run of ids is written in the format ``fmt`` (``text`` and ``pairs`` need ``tok``)."""
    if fmt not in ("text", "pairs"):
        return lambda ids: ", ".join(map(str, ids))
    if tok is None:
        raise ValueError(f"a {fmt!r} copy needs the tokenizer")
    if fmt == "pairs":
        return lambda ids: json.dumps([_pair(tok, t) for t in ids], ensure_ascii=False)[1:-1]
    texts: dict[int, str] = {}
    return lambda ids: "\n".join([texts.get(t) or _remember(texts, tok, t) for t in ids])


def build_copy(
    snapshot: IdSnapshot,
    ranges: Ranges | None,
    fmt: str,
    tok: Tokenizer | None,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[bytes]:
    """The copy of the tokens in ``ranges`` as UTF-8 pieces to join: ``text`` (one token's
    text per line, as the views show it), ``ids`` (``1, 2``), ``pairs`` (JSON objects of id
    and token) or ``ids_json`` (``[1, 2]``). Raises ``Cancelled`` once ``should_stop()``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown copy format {fmt!r}")
    total = sum(max(0, min(e, len(snapshot)) - max(f, 0)) for f, e in ranges) if ranges is not None else len(snapshot)
    piece_of = _piece_maker(fmt, tok)
    sep = b"\n" if fmt == "text" else b", "
    if fmt in ("pairs", "ids_json"):
        yield b"["
    done = 0
    for ids in snapshot.runs(ranges):
        if should_stop is not None and should_stop():
            raise Cancelled("copy cancelled")
        data = piece_of(ids).encode("utf-8", "surrogatepass")
        yield sep + data if done else data
        done += len(ids)
        if progress is not None:
            progress(done, total)
    if fmt in ("pairs", "ids_json"):
        yield b"]"


class Payload(NamedTuple):
    """A copy built: its size in bytes, and either the array for the clipboard (``data``) or,
    past :data:`CLIPBOARD_LIMIT`, its pieces to write to a file."""

    size: int
    data: QByteArray | None
    pieces: list[bytes]


def build_payload(
    copy: Callable[..., Iterator[bytes]],
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Payload:
    """The pieces of ``copy`` (a :func:`build_copy` waiting for the worker's ``should_stop`` and
    ``progress``), then (on the worker) the array the clipboard will hold, filled a piece at a
    time into room reserved once: the GUI thread neither joins nor copies it, and no step copies
    the whole."""
    pieces = list(copy(should_stop=should_stop, progress=progress))
    size = sum(map(len, pieces))
    if size > CLIPBOARD_LIMIT:
        return Payload(size, None, pieces)
    data = QByteArray()
    data.reserve(size)
    for piece in pieces:
        data.append(piece)
    return Payload(size, data, [])


def save_pieces(path: str, pieces: list[bytes]) -> None:
    """Write ``pieces`` to ``path``, one after the other (atomically)."""
    with atomic_open(path, "wb") as f:
        for piece in pieces:
            f.write(piece)


def put_on_clipboard(data: QByteArray) -> None:
    """Put UTF-8 text on the clipboard as bytes: no string conversion on this thread."""
    mime = QMimeData()
    mime.setData("text/plain", data)
    QGuiApplication.clipboard().setMimeData(mime)


class BigCopy(QObject):
    """Copies for one widget: :meth:`copy` builds in a worker, then fills the clipboard (or,
    past :data:`CLIPBOARD_LIMIT`, offers to save a file); a new copy replaces one under way.

    ``done(str)`` says how it ended: ``"copied"``, ``"saved"``, ``"declined"``, ``"cancelled"``
    or ``"failed"``. ``ask_save(size)`` (replaceable, for tests) returns the path to save a copy
    too big for the clipboard to, or ``""``.
    """

    done = Signal(str)

    def __init__(self, owner: QWidget) -> None:
        super().__init__(owner)
        self.owner = owner
        self.jobs = Jobs(self)
        self.dialog: QProgressDialog | None = None
        self.ask_save: Callable[[int], str] = self._ask_save

    def copy(self, snapshot: IdSnapshot, ranges: Ranges | None, fmt: str, tok: Tokenizer | None) -> None:
        """Copy the tokens of ``snapshot`` in ``ranges`` (None: all) in the format ``fmt``."""
        total = len(snapshot) if ranges is None else sum(e - f for f, e in ranges)
        self._close_dialog()
        if total >= PROGRESS_ROWS:
            self.dialog = QProgressDialog(f"Copying {total:,} {WHAT[fmt]}…", "Cancel", 0, total, self.owner.window())
            self.dialog.setWindowTitle("Copy")
            self.dialog.setMinimumDuration(300)  # quick copies never show it
            self.dialog.setAutoClose(False)
            self.dialog.setAutoReset(False)
            self.dialog.canceled.connect(self.cancel)
            self.dialog.setValue(0)
        self.jobs.submit(
            "copy",
            build_payload,
            partial(build_copy, snapshot, ranges, fmt, tok),
            on_returned=lambda data: self._copied(data, fmt),
            on_errored=self._failed,
            on_progress=self._progress,
            on_aborted=self._aborted,
        )

    def cancel(self) -> None:
        if self.jobs.pending("copy"):
            self.jobs.cancel("copy")
            self._close_dialog()
            self.done.emit("cancelled")

    def is_busy(self) -> bool:
        return self.jobs.pending("copy")

    def _progress(self, done: int, total: int) -> None:
        if self.dialog is not None:
            self.dialog.setValue(min(done, total))

    def _close_dialog(self) -> None:
        if self.dialog is not None:
            dialog, self.dialog = self.dialog, None
            dialog.canceled.disconnect(self.cancel)
            dialog.close()
            dialog.deleteLater()

    def _tell(self, text: str, *, error: bool = False) -> None:
        win = self.owner.window()
        show = getattr(win, "show_error" if error else "show_message", None)
        if callable(show):
            show(text)

    def _copied(self, payload: Payload, fmt: str) -> None:
        self._close_dialog()
        size = payload.size
        if payload.data is None:
            path = self.ask_save(size)
            if not path:
                self.done.emit("declined")
                return
            self.jobs.submit(
                "save",
                save_pieces,
                path,
                payload.pieces,
                on_returned=lambda _: self._saved(path, size),
                on_errored=lambda exc: self._failed(exc, f"Could not save {path}"),
            )
            return
        put_on_clipboard(payload.data)
        self._tell(f"Copied {human_size(size)} of {WHAT[fmt]}")
        self.done.emit("copied")

    def _saved(self, path: str, size: int) -> None:
        self._tell(f"Saved {human_size(size)} to {path}")
        self.done.emit("saved")

    def _failed(self, exc: BaseException, what: str = "Could not copy") -> None:
        self._close_dialog()
        self._tell(f"{what}: {describe_error(exc)}", error=True)
        self.done.emit("failed")

    def _aborted(self) -> None:
        self._close_dialog()
        self.done.emit("cancelled")

    def _ask_save(self, size: int) -> str:
        answer = QMessageBox.question(
            self.owner.window(),
            "Copy",
            f"The copy holds {human_size(size)}, more than the clipboard takes well. Save it to a file instead?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Save:
            return ""
        path, _ = QFileDialog.getSaveFileName(self.owner.window(), "Save the copy as", "tokens.txt")
        return path


__all__ = ["CLIPBOARD_LIMIT", "PROGRESS_ROWS", "BigCopy", "IdSnapshot", "build_copy", "put_on_clipboard"]
