"""Characters no installed font can draw: found, shown as their code point, and named once.

An inspector must never hide a character. Qt draws a character that no font has as an empty
box (or nothing), so a CJK text on a machine without CJK fonts, a new emoji or a private-use
character would look like any other. Here:

* :class:`GlyphCoverage` finds such characters the way Qt draws them, fallback fonts
  included: a character is missing when shaping it with the view's font (and every fallback
  Qt would try) gives glyph index 0. Each code point is shaped once (shaping is slow) and
  remembered, so painting a page only looks characters up in a set.
* :class:`CodePointSpacer` (a syntax highlighter that writes nothing into the text) hides
  the empty box and widens its cell so the overlay can draw the code point there
  (:func:`paint_code_point`: a small ``1F525`` box). It is attached to a document only once
  a missing character has been seen, so plain texts cost nothing.
* :func:`shown` does the same for lists and labels (over the core's
  :func:`~bpeinspect.core.text.display_bytes`): a character no font draws reads ``⟨U+1F525⟩``, the notation the app already uses for invisible characters.
* :func:`glyph_notices` says once, for the status bar, which fonts would draw the characters
  found (:func:`font_suggestion`), naming Noto fonts; :func:`prefer_noto` puts the installed
  Noto fonts first in the text font's fallback list.

>>> cov = coverage_for(QFont("DejaVu Sans"))     # doctest: +SKIP
>>> cov.missing_in("a\\ue000b")                  # doctest: +SKIP
{'\\ue000'}
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

import regex
from PySide6.QtCore import QLocale, QObject, QRectF, Qt, QTextBoundaryFinder, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QPainter,
    QPen,
    QTextBlock,
    QTextCharFormat,
    QTextDocument,
    QTextFormat,
    QTextLayout,
)

from bpeinspect.core import SYMBOLS, display_bytes, hex_bytes, utf16_len

if TYPE_CHECKING:
    from bpeinspect.core import Tokenizer

# printable ASCII is in every text font; line breaks and tabs are laid out, not drawn
_ALWAYS_DRAWN = frozenset(chr(c) for c in range(0x20, 0x7F)) | frozenset("\t\n\r\u2028\u2029")
# the app's own notation (core.text.SYMBOLS, ⟨U+…⟩, <e4 bd>) is never rewritten into itself
_NOTATION = frozenset(SYMBOLS.values()) | frozenset("⟨⟩<>")
LABEL_SCALE = 0.7  # the code point's digits, relative to the text (the inline ids' size)
# fonts a view looks into for the first time per event-loop turn (a millisecond or more each)
FONTS_PER_TURN = 6
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Bopomofo}]")
_EMOJI = regex.compile(r"[\p{Extended_Pictographic}\p{Emoji_Presentation}\p{Regional_Indicator}]")
_PRIVATE = regex.compile(r"\p{Co}")
_UNASSIGNED = regex.compile(r"\p{Cn}")
_CONTROL = regex.compile(r"\p{Cc}")
_NAME_STOP = {
    "LETTER",
    "SIGN",
    "DIGIT",
    "SYLLABLE",
    "CHARACTER",
    "VOWEL",
    "CONSONANT",
    "MARK",
    "NUMBER",
    "PUNCTUATION",
    "SYMBOL",
    "LIGATURE",
    "LOGOGRAM",
    "IDEOGRAPH",
    "HIEROGLYPH",
    "FRACTION",
    "NUMERAL",
    "TONE",
    "CAPITAL",
    "SMALL",
    "FILLER",
    "SEPARATOR",
    "VOICED",
    "HEAD",
    "SUBJOINED",
}


def code_point_label(ch: str) -> str:
    """``"1F525"``: the hex digits drawn in a code point box (at least four)."""
    return f"{ord(ch):04X}"


def label_font(font: QFont) -> QFont:
    """The font of a code point box's digits, for text drawn in ``font``."""
    small = QFont(font)
    small.setFamilies(["DejaVu Sans Mono", "Noto Sans Mono", "monospace"])  # digits that read apart
    small.setStyleHint(QFont.StyleHint.Monospace)
    small.setPointSizeF(max(5.0, font.pointSizeF() * LABEL_SCALE))
    return small


def box_width(ch: str, font: QFont) -> float:
    """How wide the code point box of ``ch`` is next to text in ``font`` (margins included)."""
    return QFontMetricsF(label_font(font)).horizontalAdvance(code_point_label(ch)) + 6


class GlyphCoverage:
    """Which characters one font (with Qt's font fallback) cannot draw; remembered per character."""

    def __init__(self, font: QFont) -> None:
        self.font = QFont(font)
        self.font.setPointSizeF(max(font.pointSizeF(), 12.0))  # a size to measure boxes at
        self.families = font.families() or [font.family()]
        self.known: set[str] = set(_ALWAYS_DRAWN)  # every character looked at so far
        self.missing: dict[str, float] = {}  # missing character -> letter spacing (percent) its box needs

    def missing_in(self, text: str) -> set[str]:
        """The characters of ``text`` no font draws (shaping only characters not seen before)."""
        if text.isascii() and text.isprintable():
            return set()
        chars = set(text)
        new = chars - self.known
        if new:
            found = [ch for ch in new if self._probe(ch)]
            self.known |= new
            if found:
                glyph_notices().report(found)
        return chars & self.missing.keys() if self.missing else set()

    def learn(self, text: str, budget: int) -> bool:
        """Probe at most ``budget`` characters of ``text`` not seen before; True once every one
        is known (a caller spreads a text of many new characters over event-loop turns: each
        probe lays the character out, and a hundred of them make a visible stall)."""
        if text.isascii():
            return True
        new = set(text) - self.known
        if len(new) > budget:
            self.missing_in("".join(sorted(new)[:budget]))
            return False
        if new:
            self.missing_in("".join(new))
        return True

    def learn_opening(self, text: str, opens: int) -> bool:
        """Probe the characters of ``text`` not seen before, opening at most ``opens`` fonts
        not opened before (the first look into a font reads its character map, a millisecond
        or more each: a few characters no font of the text's family maps read a hundred
        fonts at once); True once every character is known, False to call again next turn."""
        if text.isascii():
            return True
        for ch in sorted(set(text) - self.known):
            before = _opened_fonts()
            found = self._probe(ch, opens)
            opens -= _opened_fonts() - before
            if found is None:
                return False
            self.known.add(ch)
            if found:
                glyph_notices().report([ch])
        return True

    def is_missing(self, ch: str) -> bool:
        if ch not in self.known:
            self.missing_in(ch)
        return ch in self.missing

    def _probe(self, ch: str, opens: int | None = None) -> bool | None:
        """Whether no font draws ``ch`` (remembering how wide its box is); ``None`` when
        deciding needs more than ``opens`` fonts not opened before (ask again)."""
        layout = QTextLayout(ch, self.font)
        layout.beginLayout()
        line = layout.createLine()
        layout.endLayout()
        if not any(0 in run.glyphIndexes() for run in layout.glyphRuns()):
            # one of the font's own families maps it: asking every font of the system (the
            # fallback) took half a millisecond a character
            if any(_family_has(family, ch) for family in self.families):
                return False
            anywhere = _some_font_has(ch, opens)
            if anywhere is None:
                return None
            if anywhere:
                return False
        advance = line.naturalTextWidth()
        need = box_width(ch, self.font)
        self.missing[ch] = 100.0 * need / advance if advance > 0 else 100.0
        return True


_COVERAGE: dict[tuple, GlyphCoverage] = {}
_ALL_FONTS: list[QFontMetricsF] = []
# format characters and variation selectors are laid out, not drawn: a font need not map them
_NOT_DRAWN = regex.compile(r"[\p{Cf}\p{Z}\p{Variation_Selector}]")


_OPENED = [0]  # how many of _ALL_FONTS (a prefix: they are asked in order) have been asked


def _opened_fonts() -> int:
    return _OPENED[0]


def _some_font_has(ch: str, opens: int | None = None) -> bool | None:
    """Whether any font Qt knows maps ``ch``. When no font has a script's characters at all, Qt
    may shape them with a placeholder glyph whose index is not 0 (an empty box), so shaping
    alone does not tell; the fonts' character maps do. With ``opens``: ``None`` when that
    needs more than ``opens`` fonts not asked before (the next call goes on from there)."""
    if _NOT_DRAWN.match(ch):
        return True
    if not _ALL_FONTS:
        for family in QFontDatabase.families():
            font = QFont(family)
            font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)
            _ALL_FONTS.append(QFontMetricsF(font))
    code = ord(ch)
    first_new = _OPENED[0]
    for i, fm in enumerate(_ALL_FONTS):
        if i >= _OPENED[0]:
            if opens is not None and i - first_new >= opens:
                return None
            _OPENED[0] = i + 1
        if fm.inFontUcs4(code):
            return True
    return False


_FAMILY_METRICS: dict[str, QFontMetricsF] = {}


def _family_has(family: str, ch: str) -> bool:
    """Whether font ``family`` itself (no fallback) maps ``ch``."""
    fm = _FAMILY_METRICS.get(family)
    if fm is None:
        font = QFont(family)
        font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)
        fm = _FAMILY_METRICS[family] = QFontMetricsF(font)
    return fm.inFontUcs4(ord(ch))


def _font_key(font: QFont) -> tuple:
    return tuple(font.families()) or (font.family(),), font.styleStrategy(), font.bold(), font.italic()


def coverage_for(font: QFont) -> GlyphCoverage:
    """The (shared) coverage of ``font``; fonts that differ only in size share one."""
    key = _font_key(font)
    cov = _COVERAGE.get(key)
    if cov is None:
        cov = _COVERAGE[key] = GlyphCoverage(font)
    return cov


def missing_positions(text: str, missing: set[str]) -> list[tuple[int, int, str]]:
    """``(utf16_start, utf16_length, char)`` of every character of ``text`` in ``missing``."""
    out = []
    k = 0
    for ch in text:
        n = 2 if ord(ch) > 0xFFFF else 1
        if ch in missing:
            out.append((k, n, ch))
        k += n
    return out


# -- lists and labels ------------------------------------------------------------------------------


def shown(text: str, font: QFont | None = None) -> str:
    """``text`` with every character no font draws written ``⟨U+1F525⟩`` (``font``: the app's)."""
    if text.isascii():
        return text
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        return text
    return shown_without(text, undrawn(text, font))


def undrawn(text: str, font: QFont | None = None) -> set[str]:
    """The characters of ``text`` :func:`shown` writes as code points (on the GUI thread)."""
    if text.isascii():
        return set()
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        return set()
    return coverage_for(font if font is not None else QApplication.font()).missing_in(text) - _NOTATION


def learn_glyphs(text: str, font: QFont, budget: int = 24) -> bool:
    """:meth:`GlyphCoverage.learn` for ``font``'s coverage (on the GUI thread): call again on the
    next turn while it says False; then :func:`undrawn` on ``text`` probes nothing."""
    return coverage_for(font).learn(text, budget)


def learn_glyphs_opening(text: str, font: QFont | None = None, opens: int = FONTS_PER_TURN) -> bool:
    """:meth:`GlyphCoverage.learn_opening` for ``font``'s coverage (the app's by default, on the
    GUI thread): call again on the next turn while it says False."""
    from PySide6.QtWidgets import QApplication

    if text.isascii() or QApplication.instance() is None:
        return True
    return coverage_for(font if font is not None else QApplication.font()).learn_opening(text, opens)


def shown_without(text: str, missing: set[str] | frozenset[str]) -> str:
    """``text`` with the characters of ``missing`` written ``⟨U+1F525⟩`` (any thread: ``missing``
    comes from :func:`undrawn` on the GUI thread)."""
    if not missing:
        return text
    return "".join(f"⟨U+{ord(ch):04X}⟩" if ch in missing else ch for ch in text)


def token_shown(tok: Tokenizer, token_id: int) -> str:
    """A token as every view writes it: its bytes (:func:`~bpeinspect.core.text.display_bytes`,
    characters no font draws as code points) with its word marks (``on⌋`` ends a word, for
    CLIP-style models)."""
    return tok.shown_with_marks(token_id, shown(display_bytes(tok.token_bytes(token_id))))


def rank_cell(rank: int | None) -> str:
    """A merge rank as the token tables write it: empty for a token no merge makes."""
    return "" if rank is None else str(rank)


def bytes_cell(data: bytes, most: int) -> str:
    """A token's bytes in hex as the token tables write them: whole up to ``most`` bytes,
    else the first ``most - 1`` and ``…``.

    >>> bytes_cell(b"hi", 2), bytes_cell(b"hello", 2)
    ('68 69', '68 …')
    """
    if len(data) <= most:
        return hex_bytes(data)
    return hex_bytes(data[: most - 1]) + " …"


# -- scripts with tall marks ------------------------------------------------------------------------

# Scripts whose marks and stacks reach far above and below Latin letters. Qt sizes a line by its
# fonts' ascent and descent; when the text font itself has some of these letters (DejaVu Sans has
# Arabic) its Latin-sized metrics are used and the marks run into the neighbouring lines. Their own
# Noto font, whose line height is made for them, is put first for these characters.
_TALL_SCRIPTS = (
    "Arabic",
    "Syriac",
    "Thaana",
    "Devanagari",
    "Bengali",
    "Gurmukhi",
    "Gujarati",
    "Oriya",
    "Tamil",
    "Telugu",
    "Kannada",
    "Malayalam",
    "Sinhala",
    "Thai",
    "Lao",
    "Tibetan",
    "Myanmar",
    "Khmer",
)
_TALL = regex.compile("|".join(rf"(?P<{s}>\p{{{s}}}+)" for s in _TALL_SCRIPTS))
_TALL_FAMILIES: dict[str, str | None] = {}


def tall_family(script: str) -> str | None:
    """The installed (or bundled) Noto font for one of the tall scripts, if there is one."""
    if script not in _TALL_FAMILIES:
        for family in (f"Noto Sans {script}", f"Noto Naskh {script}", f"Noto Serif {script}"):
            if QFontDatabase.hasFamily(family):
                _TALL_FAMILIES[script] = family
                break
        else:
            _TALL_FAMILIES[script] = None
    return _TALL_FAMILIES[script]


def tall_runs(text: str) -> list[tuple[int, int, str]]:
    """``(utf16 position, utf16 length, font family)`` of each run of a tall script in ``text``
    that has its own font."""
    if text.isascii():
        return []
    out = []
    for m in _TALL.finditer(text):
        family = tall_family(m.lastgroup or "")
        if family is not None:
            out.append((utf16_len(text[: m.start()]), m.end() - m.start(), family))
    return out


def has_tall_runs(text: str) -> bool:
    return bool(tall_runs(text))


# -- painting --------------------------------------------------------------------------------------


def paint_code_point(p: QPainter, rect: QRectF, ch: str, color: QColor, font: QFont) -> None:
    """A small box holding ``ch``'s code point in hex, drawn inside ``rect``."""
    small = label_font(font)
    fm = QFontMetricsF(small)
    label = code_point_label(ch)
    w = min(rect.width() - 2, fm.horizontalAdvance(label) + 4)
    h = min(rect.height() - 2, fm.height() + 2)
    box = QRectF(rect.center().x() - w / 2, rect.center().y() - h / 2, w, h)
    frame = QColor(color)
    frame.setAlpha(150)
    p.save()
    p.setPen(QPen(frame, 1.0))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRoundedRect(box, 2, 2)
    p.setPen(color)
    p.setFont(small)
    p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
    p.restore()


def shared_clusters(text: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str, int]]:
    """The missing characters of ``found`` after the first in each character cluster of
    ``text`` (a flag's two letters, an emoji and its skin tone), each with its place in the
    cluster: ``(utf16_start, utf16_length, char, place)``.

    Qt widens only the last glyph of a cluster it shapes, so a cluster of missing characters
    in one format had the room of one box; a format of their own for each (told apart by
    ``place``) has each shaped, and widened, on its own.

    >>> de = "\\U0001f1e9\\U0001f1ea"  # the flag of Germany: one cluster of two letters
    >>> [(p, n, f"U+{ord(c):X}", k) for p, n, c, k in shared_clusters(f"a {de} b", [(2, 2, de[0]), (4, 2, de[1])])]
    [(4, 2, 'U+1F1EA', 1)]
    """
    finder = QTextBoundaryFinder(QTextBoundaryFinder.BoundaryType.Grapheme, text)
    out: list[tuple[int, int, str, int]] = []
    k = 0
    while k < len(found):
        finder.setPosition(found[k][0])
        end = finder.toNextBoundary()
        group = [f for f in found[k:] if f[0] < end]
        k += len(group)
        out.extend((pos, n, ch, place) for place, (pos, n, ch) in enumerate(group) if place)
    return out


# the length of a line format's range: all of its block, whatever the block becomes (no other range is
# this long: a block is a line of text)
LINE_LENGTH = 1 << 30
# blocks an edit touches that are formatted again at once (a keystroke's, a short paste's); the
# blocks of a bigger change are formatted when a view first shows them
EDITED_NOW = 8


class CodePointSpacer(QObject):
    """Hides the empty box Qt draws for a missing character and widens its cell for the code
    point, and gives runs of scripts with tall marks their own font; lays every line out with
    the :attr:`line_format` under those, if one is set (inline ids raise the text with one).

    Formats live in the layout, not in the document: the text, its undo history and what is
    copied stay as they are. One per document (:meth:`ensure`); the view that paints the code
    points tells it when the document's font family changes (:meth:`follow`).

    A block is formatted when a view shows it (:meth:`format_blocks`) or an edit changes it,
    never the whole text at once: laying out every block of a text of tens of megabytes again
    held the window for seconds (and Qt's own highlighter formats every block of a text as it
    goes in). A block remembers the :attr:`generation` it was formatted for (its user state).
    The line format is not lazy: whoever sets it gives it to every block (:meth:`put_line`), and
    a block an edit makes takes it as it comes in.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._doc = document
        self.cov = coverage_for(document.defaultFont())  # looked up once, not per block
        self._formats: dict[str, QTextCharFormat] = {}
        self.generation = 1  # blocks formatted for the current coverage have it as user state
        self.line_format: QTextCharFormat | None = None  # see set_line_format
        self._line: list[QTextLayout.FormatRange] = []  # the line format's range, if it has one
        self._applying = False
        document.contentsChange.connect(self._on_change)

    @classmethod
    def ensure(cls, document: QTextDocument) -> CodePointSpacer:
        """The document's spacer, made the first time (it formats nothing yet)."""
        found = document.findChild(CodePointSpacer)
        return found if found is not None else cls(document)

    def document(self) -> QTextDocument:
        return self._doc

    def stale(self, block: QTextBlock) -> bool:
        """Whether ``block`` is not formatted for the current coverage yet."""
        return block.userState() != self.generation

    def format_blocks(self, blocks: Iterable[QTextBlock]) -> None:
        """Format ``blocks`` (those a view shows) where they are stale, without telling the
        document's listeners that it changed (``contentsChanged`` would make the window encode
        the same text again)."""
        doc = self.document()
        was = doc.blockSignals(True)
        try:
            for block in blocks:
                if block.isValid() and self.stale(block):
                    self._format_block(block)
        finally:
            doc.blockSignals(was)

    def follow(self, cov: GlyphCoverage) -> None:
        """Another font's coverage (a new family, not a new size): every block is stale, and
        formatted again as the views show it."""
        if cov is not self.cov:
            self.cov = cov
            self._formats.clear()
            self.generation += 1

    def set_line_format(self, fmt: QTextCharFormat | None) -> None:
        """Lay every line out with ``fmt`` under the other formats (``None``: without). Blocks
        an edit makes take it at once; the caller gives it to the others (:meth:`put_line`)."""
        self.line_format = None if fmt is None else QTextCharFormat(fmt)
        self._line = [] if self.line_format is None else [_format_range(0, LINE_LENGTH, self.line_format)]

    def put_line(self, block: QTextBlock) -> bool:
        """Give ``block`` the line format, or take the one it had away; whether its formats
        changed. The caller has Qt lay it out again (``markContentsDirty``), unless this is
        a change Qt is about to lay out anyway."""
        layout = block.layout()
        old = layout.formats()
        if not old:  # (most blocks: a few microseconds each, for every line of a long text)
            if self._line:
                layout.setFormats(self._line)
            return bool(self._line)
        if self._line and old[0].length == LINE_LENGTH and old[0].format == self.line_format:
            return False
        rest = [r for r in old if r.length != LINE_LENGTH]
        if not self._line and len(rest) == len(old):
            return False
        layout.setFormats(self._line + rest)
        return True

    def format_lines(self, fmt: QTextCharFormat | None) -> None:
        """:meth:`set_line_format` and give it to every block now, laid out again at once (a
        long text goes faster in slices: see ``LiveDocument.set_line_format``)."""
        self.set_line_format(fmt)
        doc = self.document()
        block = doc.firstBlock()
        while block.isValid():
            self.put_line(block)
            block = block.next()
        doc.markContentsDirty(0, doc.characterCount())

    def _on_change(self, pos: int, _removed: int, added: int) -> None:
        if self._applying:
            return
        doc = self.document()
        first, last = doc.findBlock(pos), doc.findBlock(pos + added)
        if not first.isValid():
            return
        if not last.isValid() or last.blockNumber() - first.blockNumber() >= EDITED_NOW:
            # a big change: the blocks it made are new (stale), and so are its two ends; they
            # take the line format now (Qt lays them out next: no need to ask it)
            if self.line_format is not None:
                block = first
                while block.isValid():
                    self.put_line(block)
                    if block == last:
                        break
                    block = block.next()
            first.setUserState(-1)
            if last.isValid():
                last.setUserState(-1)
            return
        block = first
        while block.isValid() and block.blockNumber() <= last.blockNumber():
            self._format_block(block)  # before the edit is painted
            block = block.next()

    def _format_block(self, block: QTextBlock) -> None:
        text = block.text()
        ranges = list(self._line)
        for pos, n, family in tall_runs(text):
            ranges.append(_format_range(pos, n, self._tall_format(family)))
        cov = self.cov
        missing = cov.missing_in(text)
        if missing:
            found = missing_positions(text, missing)
            # a missing character after the first in its cluster has a format of its own
            places = {pos: place for pos, _n, _ch, place in shared_clusters(text, found)} if len(found) > 1 else {}
            for pos, n, ch in found:
                ranges.append(_format_range(pos, n, self._format(ch, cov, places.get(pos, 0))))
        layout = block.layout()
        block.setUserState(self.generation)
        if ranges or layout.formats():
            layout.setFormats(ranges)
            self._applying = True
            try:
                self.document().markContentsDirty(block.position(), block.length())
            finally:
                self._applying = False

    def _tall_format(self, family: str) -> QTextCharFormat:
        fmt = self._formats.get(family)
        if fmt is None:
            fmt = self._formats[family] = QTextCharFormat()
            own = list(self.cov.font.families()) or [self.cov.font.family()]
            fmt.setFontFamilies([family, *own])
        return fmt

    def _format(self, ch: str, cov: GlyphCoverage, place: int = 0) -> QTextCharFormat:
        key = f"{ch} {place}" if place else ch
        fmt = self._formats.get(key)
        if fmt is None:
            fmt = self._formats[key] = QTextCharFormat()
            fmt.setForeground(QColor(Qt.GlobalColor.transparent))  # the overlay draws the code point instead
            if place:  # unlike the format before it in its cluster (see shared_clusters)
                fmt.setProperty(QTextFormat.Property.UserProperty, place)
            spacing = cov.missing.get(ch, 100.0)
            if spacing > 100.0:
                fmt.setFontLetterSpacingType(QFont.SpacingType.PercentageSpacing)
                fmt.setFontLetterSpacing(spacing)
        return fmt


def _format_range(start: int, length: int, fmt: QTextCharFormat) -> QTextLayout.FormatRange:
    r = QTextLayout.FormatRange()
    r.start, r.length, r.format = start, length, fmt
    return r


# -- saying which fonts would draw it ---------------------------------------------------------------


def installed_families() -> set[str]:
    return set(QFontDatabase.families())


def _script_of(ch: str) -> str | None:
    """The script ``ch`` is written in, from its Unicode name (``KAWI LETTER A`` -> ``Kawi``)."""
    name = unicodedata.name(ch, "")
    words: list[str] = []
    for w in name.split():
        if w in _NAME_STOP or any(c.isdigit() for c in w):
            break
        words.append(w)
    while words:
        candidate = " ".join(words).title()
        try:
            if regex.match(rf"\p{{Script={candidate.replace(' ', '_')}}}", ch):
                return candidate
        except regex.error:
            pass
        words.pop()
    # a character newer than Python's Unicode tables: ask the regex module's (newer) ones
    for script in _regex_scripts():
        if regex.match(rf"\p{{Script={script}}}", ch):
            return _spaced(script, name)
    return None


def _spaced(script: str, name: str) -> str:
    """``EGYPTIANHIEROGLYPHS`` spaced as the character's name spaces it: ``Egyptian Hieroglyphs``."""
    out: list[str] = []
    rest = script
    for w in name.split():
        if not rest:
            break
        if not rest.startswith(w):
            break
        out.append(w)
        rest = rest[len(w) :]
    if rest and out and len(rest) <= 2:  # EGYPTIAN HIEROGLYPH + S
        out[-1] += rest
        rest = ""
    return " ".join(out + ([rest] if rest else [])).title()


def _regex_scripts() -> list[str]:
    """The script names the regex module knows (its longest alias of each), or none."""
    try:
        from regex import _regex_core

        values = _regex_core.PROPERTIES["SCRIPT"][1]
    except (ImportError, KeyError, IndexError, AttributeError):
        return []
    longest: dict[int, str] = {}
    for name, value in values.items():
        if len(name) > len(longest.get(value, "")):
            longest[value] = name
    return [n for n in longest.values() if n not in ("UNKNOWN", "COMMON", "INHERITED")]


def cjk_family() -> str:
    """The Noto CJK font for the user's language (Japanese forms unless Chinese or Korean)."""
    loc = QLocale()
    lang, territory = loc.language(), loc.territory()
    if lang == QLocale.Language.Korean:
        return "Noto Sans CJK KR"
    if lang == QLocale.Language.Chinese:
        if territory == QLocale.Country.HongKong:
            return "Noto Sans CJK HK"
        if territory in (QLocale.Country.Taiwan, QLocale.Country.Macau):
            return "Noto Sans CJK TC"
        return "Noto Sans CJK SC"
    return "Noto Sans CJK JP"


def font_suggestion(ch: str, installed: set[str] | None = None) -> str:
    """Which fonts would draw ``ch`` (Noto first), or why none does."""
    families = installed if installed is not None else installed_families()

    def newer(family: str) -> str:
        have = any(f == family or f.startswith(family + " ") for f in families)
        return f"a newer {family}" if have else family

    if _PRIVATE.match(ch):
        return "private use: only a font made for it"
    if _CONTROL.match(ch):
        return "control character: no font draws it"
    if _EMOJI.match(ch):
        return newer("Noto Color Emoji")
    if _CJK.match(ch):
        have = any(f.startswith("Noto Sans CJK") for f in families)
        return "a CJK font with more characters than Noto Sans CJK" if have else "Noto Sans CJK"
    if _UNASSIGNED.match(ch):
        return "unassigned in Unicode: no font draws it"
    if unicodedata.name(ch, "").startswith("MATHEMATICAL") or unicodedata.category(ch) == "Sm":
        return newer("Noto Sans Math")
    script = _script_of(ch)
    if script is None or script in ("Common", "Inherited"):
        return newer("Noto Sans Symbols 2")
    return newer(f"Noto Sans {script}")


def describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def missing_glyphs_message(chars: Iterable[str], limit: int = 4) -> str:
    """One status line: the characters no installed font draws and which fonts would."""
    chars = sorted(set(chars))
    installed = installed_families()
    by_font: dict[str, list[str]] = {}
    for ch in chars:
        by_font.setdefault(font_suggestion(ch, installed), []).append(ch)
    parts = []
    for hint, group in list(by_font.items())[:limit]:
        shown_cps = ", ".join(describe(ch) if len(group) == 1 else f"U+{ord(ch):04X}" for ch in group[:3])
        more = f" and {len(group) - 3} more" if len(group) > 3 else ""
        parts.append(f"{shown_cps}{more} ({hint})")
    if len(by_font) > limit:
        parts.append("…")
    n = len(chars)
    what = "a character" if n == 1 else f"{n} characters"
    return f"No installed font draws {what}, shown as code points: " + "; ".join(parts)


class GlyphNotices(QObject):
    """Collects characters found missing and says so once (coalesced per event-loop turn)."""

    found = Signal(str)  # a status-bar message

    def __init__(self) -> None:
        super().__init__()
        self.reported: set[str] = set()
        self._pending: list[str] = []

    def report(self, chars: Iterable[str]) -> None:
        new = [ch for ch in chars if ch not in self.reported]
        if not new:
            return
        self.reported.update(new)
        if not self._pending:
            QTimer.singleShot(0, self._flush)
        self._pending.extend(new)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            self.found.emit(missing_glyphs_message(pending))


_NOTICES: list[GlyphNotices] = []


def glyph_notices() -> GlyphNotices:
    """The app's one :class:`GlyphNotices`."""
    if not _NOTICES:
        _NOTICES.append(GlyphNotices())
    return _NOTICES[0]


# -- preferring Noto -------------------------------------------------------------------------------


# the scripts of the bundled samples and UDHR texts that common system fonts (DejaVu) lack,
# shipped in resources/fonts (SIL Open Font License, OFL.txt beside them)
BUNDLED_FAMILIES = (
    "Noto Sans Devanagari",
    "Noto Sans Bengali",
    "Noto Sans Tamil",
    "Noto Sans Thai",
    "Noto Sans Ethiopic",
    "Noto Sans Arabic",  # DejaVu Sans has Arabic, but with Latin line metrics its marks run over
)
_LOADED: list[str] = []


def load_bundled_fonts() -> list[str]:
    """Register the fonts in resources/fonts with Qt (once); the families they add."""
    if not _LOADED:
        from bpeinspect.core.io import resources_dir

        folder = resources_dir() / "fonts"
        for path in sorted(folder.glob("*.ttf")) if folder.is_dir() else []:
            font_id = QFontDatabase.addApplicationFont(str(path))
            if font_id >= 0:
                _LOADED.extend(QFontDatabase.applicationFontFamilies(font_id))
        _ALL_FONTS.clear()  # the fonts' character maps are read again, with these
        _TALL_FAMILIES.clear()
        _LOADED.append("")  # loaded (even when nothing was found): never scanned twice
    return [f for f in _LOADED if f]


def noto_fallbacks(installed: set[str] | None = None) -> list[str]:
    """Installed Noto fonts to try, in order, for what the main font lacks."""
    families = installed if installed is not None else installed_families()
    wanted = [
        "Noto Sans",
        "Noto Sans Symbols",
        "Noto Sans Symbols 2",
        "Noto Sans Math",
        *BUNDLED_FAMILIES,
        cjk_family(),
        "Noto Color Emoji",
    ]
    return [f for f in wanted if f in families]


def prefer_noto(font: QFont, installed: set[str] | None = None) -> QFont:
    """``font`` with the installed Noto fonts after its own family (Qt's fallback comes after)."""
    out = QFont(font)
    own = list(font.families()) or [font.family()]
    out.setFamilies(own + [f for f in noto_fallbacks(installed) if f not in own])
    return out
