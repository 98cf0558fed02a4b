"""The text every pane shows: one QTextDocument, a segmented copy of its text, its revision,
and big texts fed in slices.

Qt keeps the text for editing (typing, selection, undo, input methods, copy and paste);
:class:`~bpeinspect.core.live_text.LiveText` keeps the same text in Python, in segments, and
follows every change Qt reports (``contentsChange``) by reading back only the characters
that came in. So a keystroke costs the window time proportional to the edit, never to the
document, and nothing reads the whole document back.

Qt inserts text on the GUI thread, slowly, so a big text (a file, a big paste)
goes in a slice per event-loop turn, within a time budget; its first screen shows (and is
coloured) after the first slice.

>>> doc = LiveDocument(); doc.set_text("hello"); doc.text()   # doctest: +SKIP
'hello'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QByteArray, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QPlainTextDocumentLayout

from bpeinspect.core import decode_utf8, human_size
from bpeinspect.core.live_text import LiveText
from bpeinspect.gui.concurrency import Typing, Worker
from bpeinspect.gui.overlay.glyphs import CodePointSpacer
from bpeinspect.gui.overlay.paste_guard import TEXT_LIMIT
from bpeinspect.gui.overlay.token_view import document_text

FEED_SLICE = 1 << 14  # characters put into the document at once (a small part of a frame)
FEED_BUDGET = 0.008  # seconds of feeding per event-loop turn
MIN_FEED_SLICE = 1 << 10  # the smallest slice, when a slice took longer than a turn's budget
FIRST_SLICE = 1 << 12  # characters of a paste put in at once, with the edit (the rest is fed)
PASTE_ON_WORKER = 1 << 16  # UTF-8 bytes: a bigger paste is decoded off the GUI thread
# the format text goes in with: plain, whatever the text around it has (the look of the lines is
# in their layout: see LiveDocument.set_line_format)
_PLAIN = QTextCharFormat()
FORMAT_SLICE = 1 << 16  # characters of whole lines given a new line format at once (Qt lays them out again)


READ_PART = 1 << 20  # bytes of a text file decoded at once (a millisecond or two)


def read_text_parts(path: str, part: int | None = None) -> tuple[list[str], bool]:
    """A text file's content in parts of about ``part`` bytes (:data:`READ_PART`), newlines normalized (see
    :func:`normalize_newlines`), and whether it had ``\\r``; a clear ``ValueError`` if it is
    not UTF-8 text or is more than the window can show (checked as it is read: ``/dev/zero``,
    a pipe or a link to one has no size to check beforehand).

    Decoding 64 MB in one call, or joining its parts into one string, holds the interpreter
    for over 100 ms (most of it the kernel handing over fresh pages): the window's thread
    would wait that long. A part at a time lets it in between (:meth:`LiveDocument.set_text`
    takes the parts as they are).
    """
    part = part or READ_PART

    def blocks() -> Iterator[bytes]:
        total = 0
        with open(path, "rb") as f:
            while new := f.read(part):
                total += len(new)
                if total > TEXT_LIMIT:
                    raise ValueError(f"{path}: more than the {human_size(TEXT_LIMIT)} of text the window can show")
                yield new

    def bad(at: int, byte: int) -> ValueError:
        return ValueError(f"{path}: not UTF-8 text (byte {at}: {byte:02x})")

    parts: list[str] = []
    had_cr, started, carry = False, False, ""
    for text, read in decode_utf8(blocks(), bad):  # the last, with nothing read, ends the file
        if text and not started:
            started, text = True, text.removeprefix("\ufeff")  # a byte order mark is not text
        text = carry + text
        # a CR LF across two parts is one newline: a part's last CR waits for the next part
        carry = "\r" if read and text.endswith("\r") else ""
        text = text[: len(text) - len(carry)]
        had_cr = had_cr or "\r" in text
        if text:
            parts.append(normalize_newlines(text))
    return parts, had_cr


def normalize_newlines(text: str) -> str:
    """The text as a QTextDocument holds it: ``\\r\\n``, ``\\r`` and U+2029 become ``\\n``.

    >>> normalize_newlines("a\\r\\nb\\rc\\u2029d")
    'a\\nb\\nc\\nd'
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\u2029", "\n") if "\u2029" in text else text


def decode_paste(data: QByteArray) -> str:
    """A paste's UTF-8 bytes as the document's text (newlines normalized); undecodable bytes
    become U+FFFD."""
    return normalize_newlines(bytes(data.data()).decode("utf-8", "replace"))


def slice_end(text: str, pos: int, size: int = FEED_SLICE) -> int:
    """Where a slice of ``text`` from ``pos`` ends: after a newline near ``pos + size`` if
    there is one (so that lines go in whole), else at ``pos + size``.

    >>> slice_end("ab\\ncd\\nef", 0, 2), slice_end("abcdef", 0, 2)
    (3, 2)
    """
    if pos + size >= len(text):
        return len(text)
    nl = text.find("\n", pos + size, pos + 2 * size)
    return nl + 1 if nl >= 0 else pos + size


class _Feed:
    """A big text going into the document at ``cursor``, a slice per turn, from ``start`` on.
    The text may come in parts (a file read a part at a time: see :func:`read_text_parts`);
    each part is let go once it is in."""

    def __init__(self, text: str | list[str], cursor: QTextCursor, undoable: bool, start: int = 0) -> None:
        self.parts = [text] if isinstance(text, str) else [p for p in text if p]
        self.cursor, self.undoable = cursor, undoable
        self.part, self.pos = 0, start  # the part going in, and where in it
        self.left = sum(len(p) for p in self.parts) - start  # code points still to go in
        self.removing: tuple[int, int] | None = None  # a big selection it replaces, removed first, from its end

    def next_slice(self, size: int = FEED_SLICE) -> str:
        """The next slice, of about ``size`` characters, to put in (``""`` once it is all in)."""
        while self.part < len(self.parts) and self.pos >= len(self.parts[self.part]):
            self.parts[self.part] = ""
            self.part, self.pos = self.part + 1, 0
        if self.part == len(self.parts):
            return ""
        text = self.parts[self.part]
        end = slice_end(text, self.pos, size)
        piece = text[self.pos : end]
        self.pos = end
        self.left -= len(piece)
        return piece


class LiveDocument(QObject):
    """The shared document and its text in segments (``live_text``); ``revision`` counts its changes.

    ``changed`` carries every :class:`~bpeinspect.core.live_text.Change` of the segments (also
    while a big text goes in); ``edited`` follows every change once a text is in;
    ``feedingChanged(True)`` says a big text is going in (views should be read-only),
    ``feedingChanged(False)`` that it is in.
    """

    changed = Signal(object)  # live_text.Change
    edited = Signal()
    feedingChanged = Signal(bool)
    formatted = Signal()  # the last line format set has reached all of the text

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = QTextDocument(self)
        self.document.setDocumentLayout(QPlainTextDocumentLayout(self.document))
        self.live_text = LiveText()
        self.revision = 0  # bumped on every edit; encodings remember the revision they encode
        self.typing = Typing()  # background jobs wait until the typing pauses
        self._feeding: _Feed | None = None
        # characters of the next slice fed: smaller when one took longer than a turn's budget
        # (a loaded machine, long lines), back up to FEED_SLICE when they go in fast
        self.feed_slice = FEED_SLICE
        self._reading: Worker | None = None  # a big paste being decoded (the views are read-only)
        self._starting = False  # the first slice of a big insert is going in: more will follow
        self._feed_timer = QTimer(self, singleShot=True, interval=0)
        self._feed_timer.timeout.connect(self._feed)
        # the ranges [start, end) of lines still to lay out with the line format, the first one next
        self._formatting: list[list[int]] = []
        self._format_timer = QTimer(self, singleShot=True, interval=0)
        self._format_timer.timeout.connect(self._format_some)
        self.top_shown: Callable[[], int] = lambda: 0  # where the views show the text (set by the window)
        # position -> True if it lies below everything the views show (set by the window)
        self.below_view: Callable[[int], bool] | None = None
        self.document.contentsChange.connect(self._on_change)

    def text(self) -> str:
        """The whole text (joined once per change: avoid on every keystroke of a big text)."""
        return self.live_text.text()

    def __len__(self) -> int:
        return len(self.live_text)

    def set_right_to_left(self, rtl: bool) -> None:
        """Lay the text out right to left (and right-aligned), or as Qt does by default."""
        opt = self.document.defaultTextOption()
        direction = Qt.LayoutDirection.RightToLeft if rtl else Qt.LayoutDirection.LayoutDirectionAuto
        align = Qt.AlignmentFlag.AlignRight if rtl else Qt.AlignmentFlag.AlignLeft
        if opt.textDirection() != direction or opt.alignment() != align:
            opt.setTextDirection(direction)
            opt.setAlignment(align)
            self.document.setDefaultTextOption(opt)

    def right_to_left(self) -> bool:
        return self.document.defaultTextOption().textDirection() == Qt.LayoutDirection.RightToLeft

    def is_feeding(self) -> bool:
        return self._feeding is not None or self._reading is not None or self._starting

    def feed_left(self) -> int:
        """Code points of a big text still to go in (0 when nothing is being fed)."""
        feed = self._feeding
        return 0 if feed is None else feed.left

    # -- changing ---------------------------------------------------------------------------------

    def set_text(self, text: str | list[str], *, normalized: bool = False, right_to_left: bool = False) -> None:
        """Replace the text (the document starts afresh, without undo history); ``text`` may
        be a list of parts (see :func:`read_text_parts`: never joined into one string).

        A big text goes in a slice per event-loop turn (``setPlainText`` of 1 MB would hold
        the loop for many frames). ``normalized``: the text has no ``\\r`` nor U+2029
        (see :func:`normalize_newlines`; looking through 64 MB is not free). ``right_to_left``
        lays every line out from the right (Arabic, Hebrew, ...)."""
        self._stop_feeding()
        self.set_right_to_left(right_to_left)
        if not normalized:
            text = normalize_newlines(text) if isinstance(text, str) else [normalize_newlines("".join(text))]
        self.document.setUndoRedoEnabled(False)
        self.document.setPlainText("")
        cur = QTextCursor(self.document)
        if sum(len(p) for p in ([text] if isinstance(text, str) else text)) <= FEED_SLICE:
            cur.insertText(text if isinstance(text, str) else "".join(text), _PLAIN)
            self.document.setUndoRedoEnabled(True)
            return
        self._start_feeding(_Feed(text, cur, undoable=False))

    def paste_data(self, cursor: QTextCursor, data: QByteArray) -> None:
        """Paste UTF-8 ``data`` at ``cursor`` as :meth:`insert_text` does; a big paste is first
        decoded by a worker (the views are read-only meanwhile, and the cursor follows any change)."""
        self._stop_feeding()
        if data.size() <= PASTE_ON_WORKER:
            self.insert_text(cursor, decode_paste(data), normalized=True)
            return
        at = QTextCursor(cursor)
        worker = self._reading = Worker(decode_paste, data)
        worker.signals.returned.connect(lambda text: self._paste_read(worker, at, text))
        worker.signals.errored.connect(lambda _exc: self._paste_read(worker, at, None))
        self.feedingChanged.emit(True)
        worker.start()

    def _paste_read(self, worker: Worker, cursor: QTextCursor, text: str | None) -> None:
        if worker is not self._reading:
            return  # superseded (a new text, another paste)
        self._reading = None
        if text:
            self.insert_text(cursor, text, normalized=True)
        if self._feeding is None:
            self.feedingChanged.emit(False)

    def insert_text(self, cursor: QTextCursor, text: str, *, normalized: bool = False) -> None:
        """Insert ``text`` at ``cursor`` in place of its selection, as one step to undo; a
        big text goes in a slice per turn (the views are read-only meanwhile). ``normalized``:
        see :meth:`set_text`."""
        self._stop_feeding()
        if not normalized:
            text = normalize_newlines(text)
        cur = QTextCursor(cursor)
        start, stop = cur.selectionStart(), cur.selectionEnd()
        if stop - start > FEED_SLICE:  # Qt removes 10 MB in one long call: a slice per turn instead
            feed = _Feed(text, cur, undoable=True)
            feed.removing = (start, stop)
            self._starting = True  # more is to come
            try:
                self._remove_slice(feed, first=True)  # the removal and the new text: one step to undo
            finally:
                self._starting = False
            self._start_feeding(feed)
            return
        # the first slice goes in now, as one step to undo with what it replaces; a small one,
        # since its segment is encoded right away, on this thread, for every tokenizer
        end = slice_end(text, 0, FIRST_SLICE)
        # what these changes set off (their encoding, a check for idle) must see that the rest
        # is still to come
        self._starting = end < len(text)
        try:
            cur.beginEditBlock()
            cur.removeSelectedText()
            cur.insertText(text[:end], _PLAIN)
            cur.endEditBlock()
        finally:
            self._starting = False
        if end < len(text):
            self._start_feeding(_Feed(text, cur, undoable=True, start=end))

    def set_line_format(self, fmt: QTextCharFormat | None) -> None:
        """Lay every line out with ``fmt`` over its text's own format (``None``: as it is), and
        the lines of text that comes in later too. The format lives in the layout, not in the
        text (see :class:`~bpeinspect.gui.overlay.glyphs.CodePointSpacer`): nothing to undo, and
        what is copied stays plain. Qt lays each line out again, which takes a while for a big
        text: it goes a slice per turn, from what the views show to the end and then the top,
        the first slice at once."""
        CodePointSpacer.ensure(self.document).set_line_format(fmt)
        end = self.document.characterCount() - 1
        top = min(max(0, self.top_shown()), end)
        self._formatting = [r for r in ([top, end], [0, top]) if r[0] < r[1]]
        self._format_some(first=True)

    def is_formatting(self) -> bool:
        """Whether some lines still wait for the line format last set."""
        return bool(self._formatting)

    def _format_some(self, first: bool = False) -> None:
        """Give the line format to a slice of lines: the ``first`` time, what the views show
        (at once); then what fits in a turn's budget."""
        deadline = time.perf_counter() + FEED_BUDGET / 2  # Qt's layout of the slice comes after
        doc = self.document
        layout = doc.documentLayout()
        spacer = CodePointSpacer.ensure(doc)
        while self._formatting:
            span = self._formatting[0]
            block = doc.findBlock(span[0])
            start = stop = block.position()
            changed = False
            n = 0
            while block.isValid() and stop < span[1] and stop - start < FORMAT_SLICE:
                changed = spacer.put_line(block) or changed
                stop = block.position() + block.length()
                block = block.next()
                n += 1
                if n % 64 == 0 and (self._past_views(stop) if first else time.perf_counter() > deadline):
                    break
            if changed:
                quiet = self._past_views(start)
                layout.blockSignals(quiet)  # a slice below the views need not repaint them
                try:
                    doc.markContentsDirty(start, stop - start)
                finally:
                    layout.blockSignals(False)
                if quiet:
                    layout.documentSizeChanged.emit(layout.documentSize())
            span[0] = stop if block.isValid() else span[1]
            if span[0] >= span[1]:
                self._formatting.pop(0)
            if first or time.perf_counter() > deadline:
                break
        if self._formatting:
            self._format_timer.start()
        else:
            self.formatted.emit()

    def _past_views(self, position: int) -> bool:
        return self.below_view is not None and self.below_view(position)

    def _shift_formatting(self, pos: int, removed: int, added: int) -> None:
        """An edit at ``pos``: the ranges still to format follow the text (inserted lines
        take the line format as they come in)."""
        delta = added - removed
        for span in self._formatting:
            for i in (0, 1):
                if span[i] > pos:
                    span[i] = max(pos, span[i] + delta)
        self._formatting = [s for s in self._formatting if s[0] < s[1]]

    # -- following Qt -------------------------------------------------------------------------------

    def _on_change(self, pos: int, removed: int, added: int) -> None:
        if self._formatting:
            self._shift_formatting(pos, removed, added)
        lt = self.live_text
        total = lt.u16_len
        doc_len = self.document.characterCount() - 1  # without the final paragraph separator
        # Qt may count the final paragraph separator in both numbers (setPlainText, undo of a
        # whole-document change): trust the lengths
        removed = max(0, min(removed, total - pos))
        added = doc_len - (total - removed)
        if pos < 0 or pos > total or added < 0:
            change = lt.set_text(document_text(self.document))  # should not happen: read it all
        else:
            new = self._read(pos, pos + added)
            if removed == added and new == lt.slice_u16(pos, pos + removed):
                return  # a format change
            change = lt.replace(pos, removed, new)
        self.revision += 1
        if self._feeding is None:
            self.typing.note()
        self.changed.emit(change)
        if self._feeding is None:
            self.edited.emit()

    def _read(self, start: int, end: int) -> str:
        if end <= start:
            return ""
        cur = QTextCursor(self.document)
        cur.setPosition(start)
        cur.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cur.selectedText().replace("\u2029", "\n")

    # -- feeding --------------------------------------------------------------------------------

    def _start_feeding(self, feed: _Feed) -> None:
        self._feeding = feed
        self.feedingChanged.emit(True)
        self._feed_timer.start()

    def _feed(self) -> None:
        feed = self._feeding
        if feed is None:
            return
        deadline = time.perf_counter() + FEED_BUDGET
        cur = feed.cursor
        layout = self.document.documentLayout()
        # a slice below what the views show need not repaint them (Qt would repaint all of
        # every view for every slice): the layout stays quiet, and says the new size after
        quiet = self.below_view is not None and self.below_view(cur.position())
        layout.blockSignals(quiet)
        try:
            # a slice at least per turn: what a big selection leaves goes out first, then the text goes in
            while feed.removing is not None or (piece := feed.next_slice(self.feed_slice)):
                began = time.perf_counter()
                if feed.removing is not None:
                    self._remove_slice(feed)
                else:
                    if feed.undoable:
                        cur.joinPreviousEditBlock()  # the whole paste is one step to undo
                    cur.insertText(piece, _PLAIN)
                    if feed.undoable:
                        cur.endEditBlock()
                now = time.perf_counter()
                self._fit_slice(now - began)
                if now > deadline:
                    break
        finally:
            layout.blockSignals(False)
        if quiet:
            layout.documentSizeChanged.emit(layout.documentSize())
        if feed.removing is None and not feed.left:
            self._stop_feeding()
            self.edited.emit()
        else:
            self._feed_timer.start()

    def _fit_slice(self, took: float) -> None:
        """Size the next slice by how long the last one took (with the change handlers that
        follow it): one over the turn's budget shrinks it in proportion, fast ones let it grow."""
        if took > FEED_BUDGET:
            size = int(self.feed_slice * FEED_BUDGET / took)
            self.feed_slice = max(MIN_FEED_SLICE, size)
        elif took < FEED_BUDGET / 4:
            self.feed_slice = min(FEED_SLICE, self.feed_slice * 2)

    def _remove_slice(self, feed: _Feed, *, first: bool = False) -> None:
        """Remove the last slice of the selection a big insert replaces (the ``first``
        begins the step to undo, the others join it)."""
        assert feed.removing is not None
        start, stop = feed.removing
        cut = max(start, stop - self.feed_slice)
        if cut > start:  # at a line's start: never between the two halves of a surrogate pair
            line = self.document.findBlock(cut).position()
            if line > start:
                cut = line
            elif 0xDC00 <= ord(self.document.characterAt(cut) or "\0") <= 0xDFFF:
                cut -= 1
        cur = feed.cursor
        # the edit block first: a cursor moved outside one lays out the line it lands on (and
        # Qt's plain-text layout then takes time in proportion to the whole text)
        if first:
            cur.beginEditBlock()
        else:
            cur.joinPreviousEditBlock()
        cur.setPosition(stop)
        cur.setPosition(cut, QTextCursor.MoveMode.KeepAnchor)
        cur.removeSelectedText()
        cur.endEditBlock()
        feed.removing = (start, cut) if cut > start else None

    def _stop_feeding(self) -> None:
        if self._reading is not None:  # a paste still being decoded will not go in
            self._reading.detach()
            self._reading = None
            if self._feeding is None:
                self.feedingChanged.emit(False)
        if self._feeding is None:
            return
        self._feed_timer.stop()
        self._feeding = None
        self.document.setUndoRedoEnabled(True)
        self.feedingChanged.emit(False)
