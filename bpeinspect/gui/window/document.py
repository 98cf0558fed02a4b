"""The text every pane shows: one QTextDocument, its revision, and big texts fed in slices.

>>> doc = LiveDocument(); doc.set_text("hello"); doc.text()   # doctest: +SKIP
'hello'
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QPlainTextDocumentLayout

from bpeinspect.core import limits
from bpeinspect.gui.overlay.paste_guard import TEXT_LIMIT, describe_size
from bpeinspect.gui.overlay.token_view import document_text

FEED_SLICE = 1 << 16  # characters put into the document per event-loop turn


def read_text_file(path: str) -> str:
    """A text file's content; a clear ``ValueError`` if it is not UTF-8 text or is more than
    the window can show (read in chunks and stopped there: ``/dev/zero``, a pipe or a link to
    one has no size to check beforehand)."""
    with open(path, "rb") as f:
        data = limits.read_at_most(f, TEXT_LIMIT)
    if len(data) > TEXT_LIMIT:
        raise ValueError(f"{path}: more than the {describe_size(TEXT_LIMIT)} of text the window can show")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1].hex()})"
        ) from None


def normalize_newlines(text: str) -> str:
    """The text as a QTextDocument holds it: ``\\r\\n``, ``\\r`` and U+2029 become ``\\n``.

    >>> normalize_newlines("a\\r\\nb\\rc\\u2029d")
    'a\\nb\\nc\\nd'
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\u2029", "\n") if "\u2029" in text else text


class LiveDocument(QObject):
    """The shared document; ``revision`` counts its changes.

    ``edited`` follows every change once a text is in; ``feedingChanged(True)`` says a big
    text is going in (views should be read-only), ``feedingChanged(False)`` that it is in.
    """

    edited = Signal()
    feedingChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = QTextDocument(self)
        self.document.setDocumentLayout(QPlainTextDocumentLayout(self.document))
        self.revision = 0  # bumped on every edit; encodings remember the revision they encode
        self._text_cache: tuple[int, str] | None = None
        self._feeding: list | None = None  # [text, position] while a big text goes in
        self._feed_timer = QTimer(self, singleShot=True, interval=0)
        self._feed_timer.timeout.connect(self._feed)
        self.document.contentsChanged.connect(self._on_changed)

    def text(self) -> str:
        """The document's text (cached after :meth:`set_text`: reading 5 MB back from Qt costs ~40 ms)."""
        if self._text_cache is not None and self._text_cache[0] == self.revision:
            return self._text_cache[1]
        text = document_text(self.document)
        self._text_cache = (self.revision, text)
        return text

    def is_feeding(self) -> bool:
        return self._feeding is not None

    def set_text(self, text: str) -> None:
        """Replace the text (the document starts afresh, without undo history).

        A big text goes in a slice per event-loop turn (``setPlainText`` of 1 MB would hold
        the loop for 100 ms or more); nothing is encoded until the last slice is in."""
        self._stop_feeding()
        if len(text) <= FEED_SLICE:
            self.document.setPlainText(text)
            # what QTextDocument makes of it: every line break becomes a block separator
            self._text_cache = (self.revision, normalize_newlines(text))
            return
        self._feeding = [text, 0]
        self.document.setUndoRedoEnabled(False)
        self.feedingChanged.emit(True)
        self.document.setPlainText("")
        self._feed_timer.start()

    def _on_changed(self) -> None:
        self.revision += 1
        if self._feeding is None:
            self.edited.emit()

    def _feed(self) -> None:
        text, pos = self._feeding
        # cut after a newline so that no slice ends inside a \r\n pair or a surrogate pair
        end = text.find("\n", pos + FEED_SLICE)
        end = len(text) if end < 0 else end + 1
        cur = QTextCursor(self.document)
        cur.movePosition(QTextCursor.MoveOperation.End)
        cur.insertText(text[pos:end])
        self._feeding[1] = end
        if end >= len(text):
            self._stop_feeding()
            self._text_cache = (self.revision, normalize_newlines(text))
            self.edited.emit()
        else:
            self._feed_timer.start()

    def _stop_feeding(self) -> None:
        if self._feeding is None:
            return
        self._feed_timer.stop()
        self._feeding = None
        self.document.setUndoRedoEnabled(True)
        self.feedingChanged.emit(False)
