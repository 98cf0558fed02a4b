"""The compare view: one text under two to four tokenizers, with their boundary differences.

Each tokenizer gets a section: its name, token count, tokens per character, the F1 of its
token boundaries against the first tokenizer's (the reference), and the text with every
token in its colour of the overlay (the same id, the same colour; two neighbours never
share one, so every edge shows). A red bar marks a boundary the reference does not have
(in the reference's section: a boundary no other tokenizer has). Tokens that split a character,
or a grapheme cluster (a letter with its vowel signs and marks, as in Devanagari), are drawn as
one underlined box over it (a red tint when a differing boundary falls inside it), never as "�" or as
a mark cut from its letter; a bar between two letters of a joining script (Arabic) keeps their
joined forms. Encoding and HTML building run in a pool thread.

In the window, the view reads the window's own encodings of the text (kept up to date as it
changes, see :class:`~bpeinspect.gui.window.encoder.Encoder`) once they are complete, and
waits for them while they are not: it encodes the text itself only with a tokenizer the
window does not have open (or could not encode the text with).

Example::

    view = CompareView()
    view.set_tokenizers([load_tokenizer("gpt2"), load_tokenizer("o200k_base")])
    view.set_text("naïve 🎉 tokenization")
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import regex
from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, SignalInstance
from PySide6.QtGui import QFont, QTextDocument
from PySide6.QtWidgets import QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from bpeinspect.core import Encoding, Tokenizer
from bpeinspect.core.analysis import (
    BoundaryAgreement,
    OffsetSet,
    compare_boundary_arrays,
    interior_boundaries,
)
from bpeinspect.core.live_text import LiveEncoding, LiveText, Part, join_parts, part_boundaries
from bpeinspect.core.memory import quiet_gc
from bpeinspect.gui.concurrency import Jobs, describe_error, next_beat
from bpeinspect.gui.overlay.glyphs import learn_glyphs, shown, undrawn
from bpeinspect.gui.overlay.palette import TokenPalette, UiColors, app_colors
from bpeinspect.gui.overlay.palette import colors as ui_colors

MAX_TOKENIZERS = 4
# characters drawn per section (setHtml and the first layout of 8k characters of token spans
# stall the GUI thread for several frames; the sections are filled one per event-loop turn); counts cover all
RENDER_LIMIT = 3_000
SHORT_HTML = 20_000  # characters of HTML drawn in one go with the next section's
MARK = "\u2502"  # the red bar drawn at a differing boundary
ZWJ = "\u200d"
# runs of ASCII characters (each its own grapheme cluster; CR and LF left to \X for CR LF), a
# run giving back its last character when a mark follows it, else one grapheme cluster
_CLUSTERS = regex.compile(r"[\x00-\x09\x0b\x0c\x0e-\x7f]+(?![^\x00-\x7f])|\X")
_JOINS_NEXT = regex.compile(r"[\p{jt=D}\p{jt=L}\p{jt=C}]")  # joins to the letter after it
_JOINS_PREVIOUS = regex.compile(r"[\p{jt=D}\p{jt=R}\p{jt=C}]")
TEXT_DEBOUNCE_MS = 300
CATCH_UP_MS = 30  # a tab shown starts its work this long after, once it has been painted

Pieces = list[Part]  # a whole-text encoding in pieces (a window's, read on the GUI thread: see pieces_of)


@dataclass(frozen=True)
class Segments:
    """A text as the strings of its segments, in order: how the view holds the window's text.

    Read from a :class:`LiveText` in a fraction of a millisecond (the strings are the window's
    own), where joining a 10 MB text took tens of milliseconds of the GUI thread; a worker joins
    what it needs of it (:meth:`prefix`, :meth:`whole`).

    >>> text = Segments.of(LiveText("one\\ntwo\\nthree\\n", target=4))
    >>> len(text), text.prefix(5), text.whole() == "one\\ntwo\\nthree\\n"
    (14, 'one\\ntwo\\n', True)
    """

    # compared as (n_chars, pieces): mostly the same strings (an edit replaces a few
    # segments), each pair compared by identity first
    n_chars: int
    pieces: tuple[str, ...]

    @classmethod
    def of(cls, text: LiveText) -> Segments:
        return cls(len(text), tuple(s.text for s in text.segments))

    def __len__(self) -> int:
        return self.n_chars

    def prefix(self, n: int) -> str:
        """The text's first ``n`` code points at least (whole segments: all of them if it is shorter)."""
        out, got = [], 0
        for piece in self.pieces:
            if got >= n:
                break
            out.append(piece)
            got += len(piece)
        return "".join(out)

    def whole(self) -> str:
        return "".join(self.pieces)


def pieces_of(live: LiveEncoding) -> Pieces:
    """The pieces of ``live`` (complete) as they are now: a worker reads them while the
    window goes on following the text (a few ms at 10 MB).

    >>> from bpeinspect.core import load_tokenizer
    >>> from bpeinspect.core.live_text import LiveText, encode_segment
    >>> tok, text = load_tokenizer("r50k_base"), LiveText("one\\ntwo\\n" * 3000)
    >>> live = LiveEncoding(tok, text)
    >>> for seg, head in live.pending():
    ...     _ = live.put(seg, encode_segment(tok, seg.text, head), head)
    >>> len(pieces_of(live)) > 1, compare([tok, tok], text.text(), pieces=[pieces_of(live), None]).rows[0].tokens
    (True, 12000)
    """
    assert live.complete, "only a whole-text encoding is read"
    return list(live.parts())


@dataclass
class CompareRow:
    """One tokenizer's figures; ``boundaries`` are its interior boundaries' byte offsets (sorted),
    ``differing`` the byte offsets of the boundaries marked red."""

    name: str
    tokens: int
    chars: int
    boundaries: np.ndarray
    differing: OffsetSet
    agreement: BoundaryAgreement
    html: str = ""
    markers: int = 0  # red bars drawn (differing boundaries between whole characters)
    split_marked: int = 0  # split-character boxes holding a differing boundary
    document: QTextDocument | None = None  # the section's text, laid out from ``html`` by the worker

    @property
    def tokens_per_char(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0


@dataclass
class CompareResult:
    rows: list[CompareRow] = field(default_factory=list)
    truncated: bool = False


def compare(
    toks: Sequence[Tokenizer],
    text: str | Segments,
    names: Sequence[str] | None = None,
    *,
    render_limit: int = RENDER_LIMIT,
    colors: UiColors | None = None,
    palette: TokenPalette | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    documents: QFont | None = None,
    pieces: Sequence[Pieces | None] | None = None,
) -> CompareResult:
    """Encode ``text`` with each tokenizer and build its section (runs in a pool thread).

    ``pieces``: for each tokenizer, an encoding of ``text`` made already (:func:`pieces_of` a
    window's), read instead of encoding the text again; ``None`` for one to encode here.
    ``text`` given as :class:`Segments` is joined here only as far as it is drawn, unless a
    tokenizer encodes it here.

    With ``documents`` (the sections' font), each row also gets its :class:`QTextDocument`,
    made from the HTML here: parsing it on the GUI thread took most of a frame a section. (Characters
    no font draws are looked for on the GUI thread, when the result is in: a section holding
    some is made there again, see :meth:`CompareView._fill_one`.)

    The cyclic GC is held off meanwhile: the encodings of a big text are millions of objects,
    and each full collection they set off walks them all with every thread locked out (a dozen
    times over for 1 MB); the sections kept are frozen at the end."""
    next_beat()  # one encode of the whole text runs without a check: the GUI's turn goes first
    with quiet_gc():
        result = _compare(
            toks,
            text,
            names,
            render_limit=render_limit,
            colors=colors,
            palette=palette,
            progress=progress,
            should_stop=should_stop,
            pieces=pieces,
        )
    if documents is not None:
        app = QCoreApplication.instance()
        assert app is not None, "documents are made for a running application"
        gui = app.thread()
        for row in result.rows:
            doc = QTextDocument()
            doc.setDefaultFont(documents)
            doc.setHtml(row.html)
            doc.moveToThread(gui)  # handed to the GUI thread, which shows it
            row.document = doc
    return result


def _compare(
    toks: Sequence[Tokenizer],
    text: str | Segments,
    names: Sequence[str] | None,
    *,
    render_limit: int,
    colors: UiColors | None,
    palette: TokenPalette | None,
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None,
    pieces: Sequence[Pieces | None] | None = None,
) -> CompareResult:
    names = list(names) if names else [t.name for t in toks]
    pieces = list(pieces) if pieces else [None] * len(toks)
    n_chars = len(text)
    # what the sections draw of the text: all of a string; of segments, as far as the pieces drawn go
    ends = [_head_span(parts, render_limit, n_chars)[1] for parts in pieces if parts is not None]
    shown = text if isinstance(text, str) else text.prefix(max([render_limit + 1, *ends]))
    whole = text if isinstance(text, str) else None  # joined once a tokenizer encodes it here
    made: list[Encoding] = []  # the encodings made here (freed at the end; the window's are not)
    drawn: list[Encoding] = []  # what each section draws (of a window's encoding: its first pieces)
    bounds: list[np.ndarray] = []
    counts: list[int] = []
    for i, (tok, parts) in enumerate(zip(toks, pieces, strict=True)):
        if parts is None:
            if whole is None:
                assert isinstance(text, Segments)
                whole = text.whole()
            enc = tok.encode_with_offsets(whole, allowed_special="all", should_stop=should_stop)
            made.append(enc)
            drawn.append(enc)
            bounds.append(interior_boundaries(enc))
            counts.append(len(enc))
        else:
            drawn.append(_head(tok, shown, parts, render_limit, n_chars))
            bounds.append(part_boundaries(parts, should_stop))
            counts.append(sum(len(p.enc.ids) for p in parts))
        if progress is not None:
            progress(i + 1, len(toks) + 1)
    del whole
    result = CompareResult(truncated=n_chars > render_limit)
    inside = inside_clusters(shown[: render_limit + 1])  # the same text for every section
    for i, (enc, c) in enumerate(zip(drawn, compare_boundary_arrays(bounds, should_stop), strict=True)):
        row = CompareRow(names[i], counts[i], n_chars, c.boundaries, c.differing, c.agreement)
        _render(
            row,
            enc,
            shown,
            render_limit,
            colors or ui_colors(dark=False),
            palette=palette or TokenPalette(),
            inside=inside,
        )
        result.rows.append(row)
    for enc in made:
        _release(enc)
    return result


def _head_span(parts: Pieces, limit: int, n_chars: int) -> tuple[int, int]:
    """How many of ``parts`` a section draws (those starting up to ``limit``, a code point
    offset, and the one after: its first token ends the groups drawn, see
    :func:`cluster_groups`), and where the text they cover ends (of ``n_chars`` in all)."""
    n = min(bisect.bisect_right([p.char for p in parts], limit + 1) + 1, len(parts))
    return n, parts[n].char if n < len(parts) else n_chars


def _head(tok: Tokenizer, text: str, parts: Pieces, limit: int, n_chars: int) -> Encoding:
    """One :class:`Encoding` of the pieces a section draws (see :func:`_head_span`); ``text``
    holds the text as far as they go at least, of ``n_chars`` in all."""
    n, end = _head_span(parts, limit, n_chars)
    if n <= 1:  # the first piece (it starts the text), or none
        return parts[0].enc if parts else Encoding(text="", token_bytes_of=tok.token_bytes)
    assert len(text) >= end, "the text drawn reaches the end of the pieces drawn"
    return join_parts(tok, text[:end], parts[:n])


def inside_clusters(text: str) -> set[int]:
    """Offsets in ``text`` that fall inside a grapheme cluster (not at either edge of one).

    >>> sorted(inside_clusters("a\u0301b हिन्दी"))
    [1, 5, 7, 8, 9]
    """
    inside: set[int] = set()
    for m in _CLUSTERS.finditer(text):
        start, end = m.span()
        if end - start > 1 and not text[start:end].isascii():  # not an ASCII run (nor CR LF)
            inside.update(range(start + 1, end))
    return inside


def cluster_groups(enc: Encoding, inside: set[int], limit: int | None = None) -> list[tuple[int, int]]:
    """:meth:`Encoding.char_groups` joined so that no group ends inside a grapheme cluster.

    With ``limit`` (a code point offset), the groups end with the one that holds the first
    token starting past it: a section draws no further, and walking a 10 MB text's 2.4M
    tokens for its first few thousand characters kept a worker busy for seconds.

    >>> from bpeinspect.core import load_tokenizer
    >>> enc = load_tokenizer("r50k_base").encode_with_offsets("ab cd ef gh")
    >>> cluster_groups(enc, set()), cluster_groups(enc, set(), limit=4)
    ([(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)], [(0, 0), (1, 1), (2, 2)])
    """
    groups: list[tuple[int, int]] = []
    starts, ends = enc.char_starts, enc.char_ends
    for i in range(len(enc.ids)):
        start = starts[i]
        # a token sharing a character with the group before (it splits one), or one starting
        # inside a grapheme cluster, joins that group
        if groups and (start < ends[groups[-1][1]] or start in inside):
            groups[-1] = (groups[-1][0], i)
        else:
            groups.append((i, i))
        if limit is not None and start > limit:
            break
    return groups


def _release(enc: Encoding, step: int = 1 << 15) -> None:
    """Free an encoding's lists a slice at a time: dropped at once, a 1 MB text's encoding frees
    its million objects in one C call, with every thread locked out."""
    for items in (enc.ids, enc.piece_spans, enc.dropped):
        while items:
            del items[-step:]


def _render(
    row: CompareRow, enc: Encoding, text: str, limit: int, c: UiColors, *, palette: TokenPalette, inside: set[int]
) -> None:
    out: list[str] = []
    pos = 0
    diff = row.differing
    previous = ""
    for a, b in cluster_groups(enc, inside, limit):
        cs, ce = enc.char_starts[a], enc.char_ends[b]
        if ce > limit:
            break
        if cs > pos:  # text no token covers (a split rule that skips it)
            out.append(html.escape(text[pos:cs]))
        if enc.byte_starts[a] in diff:
            bar = f'<span style="color:{c.compare_diff}; font-weight:bold">{MARK}</span>'
            if cs and _JOINS_NEXT.match(text, cs - 1) and _JOINS_PREVIOUS.match(text, cs):
                bar = ZWJ + bar + ZWJ  # the letters on both sides keep their joined forms
            out.append(bar)
            row.markers += 1
        chunk = html.escape(text[cs:ce])
        if enc.is_special(a):
            style = f"background-color:{c.compare_special}; font-weight:bold"
        elif a != b or enc.splits_char(a):
            # tokens that split a character: one underlined box, on a red tint if a differing boundary is inside
            if any(enc.byte_ends[k] in diff for k in range(a, b)):
                box = c.compare_diff_box
                colour = box[1] if box[0] in previous else box[0]
                row.split_marked += 1
            else:
                colour = _neighbour_colour(palette, enc.ids[a], previous)
            style = f"background-color:{colour}; text-decoration:underline"
        else:
            style = f"background-color:{_neighbour_colour(palette, enc.ids[a], previous)}"
        previous = style
        out.append(f'<span style="{style}">{chunk}</span>')
        pos = ce
    row.html = '<div style="white-space:pre-wrap">' + "".join(out) + "</div>"


def _neighbour_colour(palette: TokenPalette, token_id: int, previous_style: str) -> str:
    """The token's overlay colour, or the next one of the palette if its neighbour has it."""
    name = palette.background(token_id).name()
    if name in previous_style:
        k = palette.colors.index(palette.background(token_id))
        name = palette.colors[(k + 1) % len(palette.colors)].name()
    return name


def _n(k: int, one: str, many: str) -> str:
    return f"{k:,} {one if k == 1 else many}"


class _Section(QWidget):
    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.browser = QTextBrowser()
        self.browser.setReadOnly(True)
        lay.addWidget(self.header)
        lay.addWidget(self.browser)
        self._own: QTextDocument | None = None  # the document shown, a worker's, owned here

    def set_document(self, doc: QTextDocument) -> None:
        doc.setParent(self.browser)
        self.browser.setDocument(doc)
        if self._own is not None:
            self._own.deleteLater()
        self._own = doc


class CompareView(QWidget):
    """Side-by-side segmentations of one text; computes only while :attr:`active` (its tab shown).

    With a ``text_source`` (and the signal ``text_changed`` that says it changed), the view
    reads the text itself, 300 ms after the last change and only while it is shown: a hidden
    compare tab neither reads nor encodes, and catches up when shown. A source giving the
    window's :class:`LiveText` is read as its :class:`Segments`, never joined on the GUI thread.

    With ``live`` (a tokenizer's encoding of that text as the window keeps it, ``None`` for
    one it does not have), the view reads those encodings once they are complete for its text
    instead of encoding it again, and waits for the ones still being made: the window calls
    :meth:`encodings_changed` as they come.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        text_source: Callable[[], str | LiveText] | None = None,
        text_changed: SignalInstance | None = None,
        live: Callable[[Tokenizer], LiveEncoding | None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.toks: list[Tokenizer] = []
        self.names: list[str] = []
        self._text_source = text_source
        self._text: str | Segments = self._read_text()  # the text compared
        self.result: CompareResult | None = None
        self.jobs = Jobs(self)
        self._dirty = True
        self.active = True  # a docked view is told when its tab is shown or hidden (set_active)
        self._live = live
        self._waiting = False  # for the window's encodings of the text
        self._reading: tuple[LiveText, int] | None = None  # the window's text (and version) the job reads encodings of
        self._stale = False  # the text changed while hidden
        self._dark = False  # the theme of the sections drawn
        self.token_palette: TokenPalette | None = None  # the overlay's (None: the default palette)
        self.debounce = QTimer(self, singleShot=True, interval=TEXT_DEBOUNCE_MS)
        self.debounce.timeout.connect(self._pull_text)
        self._to_fill: list[tuple[_Section, CompareRow]] = []  # sections whose text is set on the next turns
        self._arrived: CompareResult | None = None  # a result waiting for its characters' glyphs to be probed
        self._fill_timer = QTimer(self, singleShot=True, interval=0)
        self._fill_timer.timeout.connect(self._fill_one)
        # after the paints the tab's showing sets off (they come over the next turns)
        self._catch_up_timer = QTimer(self, singleShot=True, interval=CATCH_UP_MS)
        self._catch_up_timer.timeout.connect(self._catch_up)
        if text_changed is not None:
            text_changed.connect(self._on_text_changed)
        lay = QVBoxLayout(self)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.sections = [_Section() for _ in range(MAX_TOKENIZERS)]
        for s in self.sections:
            self.splitter.addWidget(s)
        lay.addWidget(self.message)
        lay.addWidget(self.note)
        lay.addWidget(self.splitter, 1)
        self._refresh()

    @property
    def busy(self) -> bool:
        """True while the texts are being compared (and drawn)."""
        return (
            self.jobs.pending()
            or self._waiting
            or bool(self._to_fill)
            or self._arrived is not None
            or self._catch_up_timer.isActive()
        )

    @property
    def text(self) -> str:
        """The text compared (the window's is joined when this is read: the view itself never does)."""
        return self._text if isinstance(self._text, str) else self._text.whole()

    def _read_text(self) -> str | Segments:
        src = self._text_source() if self._text_source is not None else ""
        return Segments.of(src) if isinstance(src, LiveText) else src

    @property
    def rows(self) -> list[CompareRow]:
        return self.result.rows if self.result else []

    def set_tokenizers(self, toks: Sequence[Tokenizer], names: Sequence[str] | None = None) -> None:
        """Compare the first :data:`MAX_TOKENIZERS` of ``toks`` (``names`` label them)."""
        self.toks = list(toks)
        self.names = list(names) if names else [t.name for t in toks]
        self._refresh()

    def set_text(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self._refresh()

    # -- work ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        self.jobs.cancel_all()
        self._waiting, self._reading = False, None
        self._to_fill, self._arrived = [], None
        self.result = None
        for s in self.sections:
            s.hide()
        extra = len(self.toks) - MAX_TOKENIZERS
        self.note.setText(
            f"Comparing the first {MAX_TOKENIZERS} of {len(self.toks)} tokenizers; {extra} more "
            f"{'is' if extra == 1 else 'are'} left out."
            if extra > 0
            else ""
        )
        self.note.setVisible(extra > 0)
        if len(self.toks) < 2:
            self._say(
                "Open a second tokenizer to compare it with this one."
                if self.toks
                else "Open two to four tokenizers to compare how they split the text."
            )
            return
        if not self._text:
            self._say("Type or paste some text to compare the tokenizers on it.")
            return
        if not self.active:
            self._dirty = True
            return
        self._dirty = False
        self._say("Comparing…")
        self._start()

    def _start(self) -> None:
        """Compare, with the window's encodings where it has them complete; or wait for those
        it is still making (:meth:`encodings_changed` looks again)."""
        toks = self.toks[:MAX_TOKENIZERS]
        lives = [self._live(tok) if self._live is not None else None for tok in toks]
        if any(live is not None and not self._of_text(live) for live in lives):
            self._waiting = True
            self._say("Comparing once the text is encoded…")
            return
        self._say("Comparing…")
        self._waiting = False
        pieces = [pieces_of(live) if live is not None else None for live in lives]
        source = next((live.source for live in lives if live is not None), None)
        self._reading = (source, source.version) if source is not None else None
        self.jobs.submit(
            "compare",
            compare,
            toks,
            self._text,
            self.names[:MAX_TOKENIZERS],
            colors=self._theme(),
            palette=self._token_palette(),
            documents=self.sections[0].browser.font(),
            pieces=pieces,
            on_returned=self._on_done,
            on_errored=lambda exc: self._say(f"Could not compare: {describe_error(exc)}"),
        )

    def _of_text(self, live: LiveEncoding) -> bool:
        """Whether ``live`` is complete and of the view's text (the same segments' strings when
        the view read them from the window since: no characters compared)."""
        if not live.complete:
            return False
        if isinstance(self._text, Segments):
            return Segments.of(live.source) == self._text
        return live.source.text() == self._text

    def encodings_changed(self) -> None:
        """The window's encodings changed: if the view waits for them, it looks again (once
        the text it has is theirs: a newer one comes after the debounce)."""
        if self._waiting and self.active and not self.debounce.isActive() and not self._stale:
            self._start()

    def _on_text_changed(self) -> None:
        reading = self._reading
        if reading is not None and reading[0].version != reading[1] and self.jobs.pending():
            # the window drops (and frees) its encodings of what changed: the job reading
            # them stops now, and starts again with the text read after the debounce
            self.jobs.cancel_all()
            self._reading = None
            self._dirty = True
        self.debounce.start()

    def _say(self, msg: str) -> None:
        self.message.setText(msg)
        self.message.setVisible(bool(msg))

    def _on_done(self, result: CompareResult) -> None:
        self._reading = None
        # characters new to the sections' font are probed a few dozen per turn first (learn_glyphs)
        if not learn_glyphs(result.rows[0].html, self.sections[0].browser.font()):
            self._arrived = result
            QTimer.singleShot(0, lambda: self._on_done(result) if self._arrived is result else None)
            return
        self.result, self._arrived = result, None
        self._say("")
        if result.truncated:
            self.note.setText(
                (self.note.text() + " " if self.note.text() else "")
                + f"The text is long: counts cover all of it; only the first {RENDER_LIMIT:,} characters are drawn."
            )
            self.note.show()
        first = result.rows[0].name
        diff = app_colors().compare_diff
        for i, (row, sec) in enumerate(zip(result.rows, self.sections, strict=False)):
            head = f"<b>{html.escape(row.name)}</b> — {row.tokens:,} tokens · {row.tokens_per_char:.3f} tokens/char · "
            if i == 0:
                head += f"reference · <span style='color:{diff}'>{MARK}</span> {_n(len(row.differing), 'boundary', 'boundaries')} no other has"
            else:
                head += (
                    f"boundary F1 vs {html.escape(first)}: {row.agreement.f1:.3f} · "
                    f"<span style='color:{diff}'>{MARK}</span> {_n(len(row.differing), 'boundary', 'boundaries')} {html.escape(first)} lacks"
                )
            sec.header.setText(head)
            if row.document is not None and undrawn(row.html, sec.browser.font()):
                row.document = None  # characters no font draws: made again with code points, in _fill_one
            self._to_fill.append((sec, row))
        if len(result.rows[0].html) > SHORT_HTML:
            self._fill_timer.start()  # a long first section on the next turn: this one has the headers
        else:
            self._fill_one()

    def _fill_one(self) -> None:
        """Draw the next section's text; a long one ends the event-loop turn (the rest follow on the next)."""
        while self._to_fill:
            sec, row = self._to_fill.pop(0)
            if row.document is not None:
                sec.set_document(row.document)  # made by the worker: only its layout is left to do here
            else:
                sec.browser.setHtml(shown(row.html))  # characters no font draws as code points
            row.document = None
            sec.show()
            if len(row.html) > SHORT_HTML and self._to_fill:
                self._fill_timer.start()
                return
        # from the top, once the sections are laid out (a layout pass scrolls a browser shown anew)
        QTimer.singleShot(0, self._to_top)

    def _to_top(self) -> None:
        for sec in self.sections:
            sec.browser.verticalScrollBar().setValue(0)

    def set_active(self, active: bool) -> None:
        """Hidden (a background tab), the view only notes what changed; shown, it catches up
        once it has been painted (an encode started at once would share the interpreter with
        the tab's first paint, tripling its time)."""
        self.active = active
        if active:
            self._catch_up_timer.start()

    def _catch_up(self) -> None:
        if not self.active:
            return
        if self._stale and self._text_source is not None:
            self._stale = False
            text = self._read_text()
            if text != self._text:  # a change signalled that left the text as it was is no work
                self._text, self._dirty = text, True
        if self._dirty:
            self._refresh()
        elif self._waiting:  # for the window's encodings, which may have come while it was hidden
            self._start()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.result is not None and self._dark != app_colors().dark:
            self._refresh()  # drawn again in the new theme's colours
        super().changeEvent(event)

    def set_token_palette(self, palette: TokenPalette) -> None:
        """Colour tokens as the overlay does (its palette and theme)."""
        if palette is self.token_palette:
            return
        self.token_palette = palette
        if self.result is not None:
            self._refresh()

    def _token_palette(self) -> TokenPalette:
        p = self.token_palette
        dark = app_colors().dark
        return (
            p if p is not None and p.dark == dark else TokenPalette(p.name if p is not None else "default", dark=dark)
        )

    def _theme(self) -> UiColors:
        c = app_colors()
        self._dark = c.dark
        return c

    def _pull_text(self) -> None:
        if self._text_source is None:
            return
        if self.active:
            text = self._read_text()
            if text != self._text or self._dirty:
                self._text = text
                self._refresh()
        else:
            self._stale = True
