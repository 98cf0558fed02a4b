"""The compare view: counts, agreement and highlighted boundaries equal the core's own figures."""

from __future__ import annotations

import pytest
import regex

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.compare import boundary_agreement
from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.panels.compare import MARK, RENDER_LIMIT, ZWJ, CompareView, compare, inside_clusters
from tests.gui.conftest import wait_jobs

TEXT = (
    "Tokenizers disagree about    indentation:\n    def f(x):\n        return x**2\n"
    "naïve café, 1234567 numbers, don't they?\n"
)
MIXED = "emoji 🎉👩‍💻 and CJK 日本語の文章 and 한국어 text"


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in ("r50k_base", "cl100k_base", "o200k_base")]


def _view(qtbot, tokenizers, text):
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    view.set_tokenizers(tokenizers)
    view.set_text(text)
    _shown(qtbot, view)
    return view


def _shown(qtbot, view):
    """Wait for the result to be shown (characters new to the font are probed over a few turns
    after the job has ended)."""
    wait_jobs(qtbot, view.jobs, 20000)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=20000)


def _bounds(tok, text):
    enc = tok.encode_with_offsets(text)
    return set(list(enc.byte_ends)[:-1])


@pytest.mark.parametrize("text", [TEXT, MIXED, "<|endoftext|> special in the middle <|endoftext|>"])
def test_counts_agreement_and_differences_match_the_core(qtbot, toks, text):
    view = _view(qtbot, toks, text)
    assert len(view.rows) == 3
    bounds = [_bounds(t, text) for t in toks]
    for i, (row, tok) in enumerate(zip(view.rows, toks, strict=True)):
        assert row.tokens == len(tok.encode(text, allowed_special="all"))
        assert row.tokens_per_char == pytest.approx(row.tokens / len(text))
        expected = bounds[0] - (bounds[1] | bounds[2]) if i == 0 else bounds[i] - bounds[0]
        assert row.differing == expected
        # every differing boundary is drawn: a bar between characters, or inside a marked split box
        assert row.markers <= len(expected) and (row.markers == len(expected)) == (row.split_marked == 0)
        if "<|" not in text:
            assert row.agreement == boundary_agreement(toks[0], tok, text)
        assert f"{row.tokens:,} tokens" in view.sections[i].header.text()
        assert view.sections[i].browser.toPlainText().count(MARK) == row.markers
    assert f"{view.rows[1].agreement.f1:.3f}" in view.sections[1].header.text()
    Worker.shutdown()


def test_bars_sit_where_the_boundaries_are(qtbot, toks):
    text = "x = 1234567;\n        return hello"
    view = _view(qtbot, toks[:2], text)
    shown = view.sections[1].browser.toPlainText()
    # put the bars back as byte offsets into the text (all ASCII here)
    offsets, pos = set(), 0
    for ch in shown:
        if ch == MARK:
            offsets.add(pos)
        else:
            pos += 1
    assert shown.replace(MARK, "") == text
    assert offsets == view.rows[1].differing and offsets  # gpt2 and cl100k differ on this text
    Worker.shutdown()


INDIC_ARABIC = "हिन्दी में लिखा गया पाठ, ਪੰਜਾਬੀ, தமிழ் and العربية لغة جميلة, e\u0301te\u0301"


def test_bars_never_cut_a_grapheme_cluster_and_keep_arabic_joined(qtbot, toks):
    view = _view(qtbot, [toks[2], toks[0]], INDIC_ARABIC)
    clusters = {m.start() for m in regex.finditer(r"\X", INDIC_ARABIC)}
    arabic_bars = 0
    for i in range(2):
        shown = view.sections[i].browser.toPlainText()
        assert shown.replace(MARK, "").replace(ZWJ, "") == INDIC_ARABIC
        pos = 0
        for k, ch in enumerate(shown):
            if ch == MARK:
                assert pos in clusters, (i, pos, INDIC_ARABIC[pos - 2 : pos + 2])  # never inside a cluster
                joined = "\u0600" <= INDIC_ARABIC[pos - 1] <= "\u06ff" and "\u0600" <= INDIC_ARABIC[pos] <= "\u06ff"
                if joined and INDIC_ARABIC[pos - 1] not in "اأإآدذرزوة":  # letters that join to the next one
                    assert shown[k - 1] == ZWJ and shown[k + 1] == ZWJ
                    arabic_bars += 1
            elif ch != ZWJ:
                pos += 1
    assert view.rows[1].split_marked > 0  # r50k splits Devanagari clusters: drawn as boxes, not bars
    assert arabic_bars > 0  # r50k cuts Arabic words o200k keeps whole
    Worker.shutdown()


def test_inside_clusters():
    assert inside_clusters("plain ASCII\r\n") == set()
    assert sorted(inside_clusters("ab\u0301c")) == [2]
    assert sorted(inside_clusters("👩\u200d💻x")) == [1, 2]
    assert sorted(inside_clusters("ह\u093f")) == [1]


def test_split_characters_render_without_replacement_chars(qtbot, toks):
    view = _view(qtbot, [toks[0], toks[2]], MIXED)
    for i in range(2):
        shown = view.sections[i].browser.toPlainText()
        assert "\ufffd" not in shown
        assert shown.replace(MARK, "") == MIXED
    assert view.rows[0].split_marked > 0  # gpt2 splits CJK characters where o200k does not
    view.set_tokenizers([*toks, load_tokenizer("r50k_base")])
    view.resize(720, 620)
    _shown(qtbot, view)
    assert len(view.rows) == 4
    Worker.shutdown()


def test_messages_for_too_few_tokenizers_empty_text_and_too_many(qtbot, toks):
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    assert "two to four" in view.message.text()
    view.set_tokenizers(toks[:1])
    view.set_text("hello")
    assert "second tokenizer" in view.message.text() and not view.busy and not view.rows
    view.set_tokenizers(toks[:2])
    view.set_text("")
    assert "text" in view.message.text() and not view.busy
    view.set_tokenizers([*toks, toks[0], toks[1]])
    view.set_text("hello there")
    _shown(qtbot, view)
    assert len(view.rows) == 4 and "first 4 of 5" in view.note.text()
    Worker.shutdown()


def test_long_text_is_counted_whole_and_drawn_in_part(qtbot, toks):
    text = TEXT * 300  # ~36k characters, more than RENDER_LIMIT
    view = _view(qtbot, toks[:2], text)
    assert view.rows[0].tokens == len(toks[0].encode(text))
    assert "only the first" in view.note.text()
    assert len(view.sections[0].browser.toPlainText().replace(MARK, "")) <= RENDER_LIMIT
    Worker.shutdown()


def test_a_long_texts_sections_walk_only_the_tokens_they_draw(toks, monkeypatch):
    """The sections draw the first RENDER_LIMIT characters: their tokens are the only ones
    walked (a worker walking a 10 MB text's 2.4M tokens, three times, took seconds that the
    window shared), and what they draw is what walking every token draws."""
    from bpeinspect.core import Encoding

    text = (TEXT + MIXED + "\n") * 2000
    walked: list[int] = []

    class Counted(list):
        def __getitem__(self, i):
            walked.append(i)
            return super().__getitem__(i)

    encode = type(toks[0]).encode_with_offsets

    def counted(self, *args, **kwargs) -> Encoding:
        enc = encode(self, *args, **kwargs)
        enc.char_starts = Counted(enc.char_starts)
        return enc

    monkeypatch.setattr(type(toks[0]), "encode_with_offsets", counted)
    drawn = compare(toks, text, render_limit=200)
    n_tokens = min(row.tokens for row in drawn.rows)
    assert n_tokens > 5000 and walked and max(walked) < n_tokens // 10
    assert drawn.rows[0].html == compare(toks, text[:1000], render_limit=200).rows[0].html


def test_panel_follows_the_registry_and_text(qtbot, panel_window):
    window = panel_window
    panels = window.panels
    view = panels.views["compare"]
    qtbot.wait(100)  # raising works once the dock area is laid out
    panels.docks["compare"].raise_()
    qtbot.waitUntil(lambda: view.active, timeout=5000)
    window.open_tokenizer("r50k_base")
    qtbot.waitUntil(lambda: len(window.registry) == 1, timeout=30000)
    qtbot.waitUntil(lambda: "second tokenizer" in view.message.text(), timeout=5000)
    window.open_tokenizer("cl100k_base")
    window.set_text("hello world, tokenization")
    qtbot.waitUntil(lambda: len(window.registry) == 2, timeout=30000)
    qtbot.waitUntil(lambda: len(view.rows) == 2 and view.text == window.text(), timeout=10000)
    assert [r.name for r in view.rows] == ["r50k_base", "cl100k_base"]
    window.document.setPlainText("something else")  # typed text arrives after the debounce
    qtbot.waitUntil(lambda: view.text == "something else" and not view.busy and bool(view.rows), timeout=5000)
    assert view.rows[0].tokens == len(window.registry.tokenizers()[0].encode("something else"))
    window.registry.remove(window.registry.tokenizers()[1])
    assert "second tokenizer" in view.message.text() and not view.rows
    Worker.shutdown()


def test_compare_dock_is_not_raised_at_start(qtbot, panel_window):
    window = panel_window
    panels = window.panels
    compare = panels.views["compare"]
    qtbot.wait(100)
    assert not compare.active and compare.visibleRegion().isEmpty()
    assert not panels.views["tokens"].visibleRegion().isEmpty()  # the token list is in front
    # hidden, it does no work; brought forward, it compares the current text
    window.open_tokenizer("r50k_base")
    window.open_tokenizer("o200k_base")
    qtbot.waitUntil(lambda: len(window.registry) == 2, timeout=30000)
    window.document.setPlainText("日本語 hidden edit")
    qtbot.wait(400)
    assert not compare.rows and not compare.busy
    panels.docks["compare"].raise_()
    qtbot.waitUntil(lambda: len(compare.rows) == 2, timeout=10000)
    assert compare.text == "日本語 hidden edit"
    assert compare.rows[1].tokens == len(window.registry.tokenizers()[1].encode("日本語 hidden edit"))
    assert panels.docks["compare"] in window.tabifiedDockWidgets(panels.docks["tree"])
    Worker.shutdown()


@pytest.mark.parametrize("dark", [False, True])
def test_split_boxes_with_a_differing_boundary_are_readable_in_both_themes(toks, dark):
    """A split-character box holding a differing boundary is a red-tint box in the theme's own
    text colour (it was red text on a token colour: 1.4:1 in the dark theme), and two such boxes
    side by side get different tints, so their edge shows."""
    from PySide6.QtGui import QColor

    from bpeinspect.gui.overlay.palette import TokenPalette, colors
    from tests.gui.window.test_theme import contrast

    c = colors(dark)
    pal = TokenPalette(dark=dark)
    text = "CJK 日本語の文章です and 한국어 텍스트, emoji 🎉👩‍💻"
    result = compare([toks[2], toks[0]], text, colors=c, palette=pal)
    row = result.rows[1]  # r50k splits these characters where o200k does not
    assert row.split_marked > 0
    spans = regex.findall(r'<span style="([^"]*)">([^<]*)</span>', row.html)
    boxes = [(k, style) for k, (style, _) in enumerate(spans) if any(t in style for t in c.compare_diff_box)]
    assert len(boxes) == row.split_marked
    text_colour = pal.text_color()
    for _, style in boxes:
        assert "text-decoration:underline" in style
        assert regex.search(r"(?<![-\w])color:", style) is None  # the theme's own text colour
        tint = regex.search(r"background-color:(#[0-9a-f]{6})", style).group(1)
        assert contrast(QColor(tint), text_colour) >= 4.5, (dark, tint)
    neighbours = [(s1, s2) for (k1, s1), (k2, s2) in zip(boxes, boxes[1:]) if k2 == k1 + 1]
    assert neighbours  # this text has boxes side by side
    for s1, s2 in neighbours:
        assert s1 != s2


def test_characters_new_to_the_font_are_probed_a_few_dozen_per_turn(qtbot, toks, monkeypatch):
    """A result whose text holds hundreds of characters never drawn before is shown after its
    characters are probed over several event-loop turns (each probe lays a character out: 140 of
    them in the turn the result came in took 30 ms), and then drawn as before."""
    from bpeinspect.gui.overlay import glyphs

    monkeypatch.setattr(glyphs, "_COVERAGE", {})  # no character of any font probed yet
    probes: list[str] = []
    real = glyphs.GlyphCoverage._probe
    monkeypatch.setattr(glyphs.GlyphCoverage, "_probe", lambda self, ch: (probes.append(ch), real(self, ch))[1])
    text = "".join(chr(0x4E00 + 7 * i) for i in range(300)) + " and " + MIXED
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    done, per_call = view._on_done, []

    def on_done(result):
        before = len(probes)
        done(result)
        per_call.append(len(probes) - before)

    monkeypatch.setattr(view, "_on_done", on_done)
    view.set_tokenizers(toks[:2])
    view.set_text(text)
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=20000)
    assert len(set(probes)) >= 300 and len(per_call) > 10 and max(per_call) <= 24
    assert [r.tokens for r in view.rows] == [len(t.encode_ordinary(text)) for t in toks[:2]]
    assert view.sections[0].browser.toPlainText().replace(MARK, "").startswith(text[:100])


def test_brought_forward_again_with_the_same_text_it_encodes_nothing(qtbot, toks, monkeypatch):
    """A change signalled while the view was hidden that leaves the text as it was (a format
    change of the document) does not encode the text again when the view comes forward."""
    from PySide6.QtCore import QObject, Signal

    class Source(QObject):
        changed = Signal()

    source = Source()
    text = TEXT
    view = CompareView(text_source=lambda: text, text_changed=source.changed)
    qtbot.addWidget(view)
    view.show()
    view.set_tokenizers(toks[:2])
    _shown(qtbot, view)
    before = [(r.name, r.tokens, r.agreement.f1) for r in view.rows]
    fresh = compare(toks[:2], TEXT)
    assert before == [(r.name, r.tokens, r.agreement.f1) for r in fresh.rows]
    encodes: list[str] = []
    encode = type(toks[0]).encode_with_offsets

    def counted(self, *args, **kwargs):
        encodes.append(self.name)
        return encode(self, *args, **kwargs)

    monkeypatch.setattr(type(toks[0]), "encode_with_offsets", counted)
    view.set_active(False)
    source.changed.emit()
    qtbot.waitUntil(lambda: view._stale, timeout=5000)
    view.set_active(True)
    qtbot.wait(200)
    assert not view.busy and encodes == []
    assert [(r.name, r.tokens, r.agreement.f1) for r in view.rows] == before
    text = TEXT + "more"  # a real change is compared again
    view.set_active(False)
    source.changed.emit()
    qtbot.waitUntil(lambda: view._stale, timeout=5000)
    view.set_active(True)
    qtbot.waitUntil(lambda: bool(encodes), timeout=5000)
    _shown(qtbot, view)
    assert [r.tokens for r in view.rows] == [r.tokens for r in compare(toks[:2], text).rows]
    Worker.shutdown()


# -- the window's own encodings -------------------------------------------------------------------

LONG = (TEXT + MIXED + "\n<|endoftext|>\n") * 250  # ~45k characters: the window keeps it in several segments


def _encodes(monkeypatch, tok) -> list[tuple[str, int]]:
    """Every encode from now on, as (tokenizer, characters encoded)."""
    calls: list[tuple[str, int]] = []
    encode = type(tok).encode_with_offsets

    def counted(self, text, *args, **kwargs):
        calls.append((self.name, len(text)))
        return encode(self, text, *args, **kwargs)

    monkeypatch.setattr(type(tok), "encode_with_offsets", counted)
    return calls


def _whole(calls: list[tuple[str, int]], text: str) -> list[str]:
    """The tokenizers of ``calls`` that encoded all of ``text`` (the window encodes a segment at a time)."""
    return sorted(name for name, n in calls if n >= len(text))


def _assert_exact(view, text, live_of):
    """Each row is what the view draws and counts when it encodes ``text`` itself with the core,
    and counts the tokens of the window's encoding."""
    from bpeinspect.gui.overlay.palette import app_colors

    assert view.text == text and len(view.rows) == min(len(view.toks), 4)
    own = compare(view.toks[:4], text, view.names[:4], colors=app_colors(), palette=view._token_palette())
    for row, mine, tok in zip(view.rows, own.rows, view.toks, strict=False):
        assert (row.name, row.tokens, row.agreement) == (mine.name, mine.tokens, mine.agreement)
        assert row.differing == mine.differing
        assert row.boundaries.tolist() == mine.boundaries.tolist()
        assert row.html == mine.html and (row.markers, row.split_marked) == (mine.markers, mine.split_marked)
        assert row.tokens == len(tok.encode(text, allowed_special="all"))
        live = live_of(tok)
        if live is not None:
            assert row.tokens == len(live)


def test_it_reads_the_windows_complete_encodings_and_encodes_nothing_itself_also_after_edits(
    qtbot, panel_window, monkeypatch
):
    """With every tokenizer's encoding complete in the window, the compare tab encodes nothing:
    it reads those (a 10 MB text was encoded twice over, once more per tokenizer, each time the
    tab came forward or the text changed), and shows what encoding the text itself shows."""
    from PySide6.QtGui import QTextCursor

    from tests.gui.conftest import wait_idle

    window = panel_window
    panels = window.panels
    view = panels.views["compare"]
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        window.open_tokenizer(name)
    qtbot.waitUntil(lambda: len(window.registry) == 3 and not window.registry.loading(), timeout=60000)
    window.set_text(LONG)
    wait_idle(qtbot, window, 60000)
    toks = window.registry.tokenizers()
    assert all(window.live_encoding(t).complete and window.live_encoding(t).n_parts() > 3 for t in toks)
    calls = _encodes(monkeypatch, toks[0])
    qtbot.wait(100)  # raising works once the dock area is laid out
    panels.docks["compare"].raise_()
    qtbot.waitUntil(lambda: view.active, timeout=5000)
    qtbot.waitUntil(lambda: len(view.rows) == 3 and not view.busy, timeout=30000)
    assert calls == []
    _assert_exact(view, LONG, window.live_encoding)
    cursor = QTextCursor(window.document)
    for at, removed, added in ((len(LONG) // 2, 0, "naïve 日本語 x**2 "), (40, 7, ""), (len(LONG) - 10, 3, "é\n")):
        calls.clear()
        cursor.setPosition(at)
        cursor.setPosition(at + removed, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(added)
        text = window.text()
        qtbot.waitUntil(lambda text=text: view.text == text and len(view.rows) == 3 and not view.busy, timeout=30000)
        assert _whole(calls, text) == []  # the window encoded the segments edited; the tab none
        _assert_exact(view, text, window.live_encoding)
    Worker.shutdown()


def test_it_waits_for_the_windows_encodings_and_encodes_only_the_tokenizers_the_window_lacks(qtbot, toks, monkeypatch):
    from PySide6.QtCore import QObject, Signal

    from bpeinspect.core.live_text import LiveEncoding, LiveText, encode_segment

    class Source(QObject):
        changed = Signal()

    text = LiveText(LONG)
    live = LiveEncoding(toks[1], text)  # the window has cl100k open, not the others
    source = Source()
    view = CompareView(
        text_source=text.text, text_changed=source.changed, live=lambda tok: live if tok is toks[1] else None
    )
    qtbot.addWidget(view)
    view.show()
    calls = _encodes(monkeypatch, toks[0])
    view.set_tokenizers(toks)
    assert view.busy and "once the text is encoded" in view.message.text()
    todo = live.pending()
    for seg, head in todo[:-1]:
        live.put(seg, encode_segment(toks[1], seg.text, head), head)
    view.encodings_changed()
    qtbot.wait(200)
    assert view.busy and not view.jobs.pending() and not view.rows  # one segment still to come
    view.set_active(False)  # a hidden tab neither compares nor forgets that it waits
    live.put(todo[-1][0], encode_segment(toks[1], todo[-1][0].text, todo[-1][1]), todo[-1][1])
    calls.clear()
    view.encodings_changed()
    qtbot.wait(100)
    assert not view.jobs.pending() and not view.rows
    view.set_active(True)
    _shown(qtbot, view)
    assert _whole(calls, LONG) == sorted([toks[0].name, toks[2].name])
    _assert_exact(view, LONG, lambda tok: live if tok is toks[1] else None)
    Worker.shutdown()


def test_a_text_change_stops_at_once_the_job_reading_the_windows_encodings(qtbot, toks, monkeypatch):
    """The window drops the encodings of what an edit replaced, and frees them a slice per
    turn: the job reading them is cancelled at the edit, not after the debounce; a change of
    the document that leaves its text as it was (a format) lets it run."""
    import threading

    from PySide6.QtCore import QObject, Signal

    import bpeinspect.gui.panels.compare as module
    from bpeinspect.core.live_text import LiveEncoding, LiveText, encode_segment

    class Source(QObject):
        changed = Signal()

    text = LiveText(LONG)
    lives = {tok: LiveEncoding(tok, text) for tok in toks[:2]}

    def complete() -> None:
        for tok, live in lives.items():
            for seg, head in live.pending():
                live.put(seg, encode_segment(tok, seg.text, head), head)

    complete()
    source = Source()
    view = CompareView(text_source=text.text, text_changed=source.changed, live=lives.get)
    qtbot.addWidget(view)
    view.show()
    gate = threading.Event()
    real = module.compare
    monkeypatch.setattr(module, "compare", lambda *args, **kwargs: (gate.wait(20), real(*args, **kwargs))[1])
    view.set_tokenizers(toks[:2])
    assert view.jobs.pending()
    source.changed.emit()  # a format change: the text and its encodings stay
    assert view.jobs.pending()
    change = text.replace(len(LONG) // 2, 4, "an edit")
    for live in lives.values():
        live.apply(change)
    source.changed.emit()
    assert not view.jobs.pending()
    gate.set()
    complete()
    qtbot.waitUntil(lambda: view.text == text.text() and view.result is not None and not view.busy, timeout=20000)
    _assert_exact(view, text.text(), lives.get)
    Worker.shutdown()


def test_brought_forward_it_reads_the_windows_text_without_joining_it_on_the_gui_thread(
    qtbot, panel_window, monkeypatch
):
    """The tab reads the window's text as its segments: joining the whole of a 10 MB text on
    the GUI thread took tens of milliseconds each time it came forward after an edit (the
    worker joins what it needs), and it still compares exactly, after edits too."""
    import threading

    from PySide6.QtGui import QTextCursor

    from bpeinspect.core.live_text import LiveText
    from tests.gui.conftest import wait_idle

    window = panel_window
    panels = window.panels
    view = panels.views["compare"]
    for name in ("r50k_base", "o200k_base"):
        window.open_tokenizer(name)
    qtbot.waitUntil(lambda: len(window.registry) == 2 and not window.registry.loading(), timeout=60000)
    window.set_text(LONG)
    wait_idle(qtbot, window, 60000)
    joined_here: list[int] = []
    real = LiveText.text

    def text(self):
        if threading.current_thread() is threading.main_thread():
            joined_here.append(len(self))
        return real(self)

    monkeypatch.setattr(LiveText, "text", text)
    qtbot.wait(100)  # raising works once the dock area is laid out
    panels.docks["compare"].raise_()
    qtbot.waitUntil(lambda: view.active, timeout=5000)
    qtbot.waitUntil(lambda: len(view.rows) == 2 and not view.busy, timeout=30000)
    assert joined_here == []
    cursor = QTextCursor(window.document)
    cursor.setPosition(40)  # (in UTF-16 units: the text before is ASCII)
    cursor.insertText("naïve 日本語 ")
    expected = LONG[:40] + "naïve 日本語 " + LONG[40:]
    want = len(view.toks[0].encode(expected, allowed_special="all"))
    qtbot.waitUntil(lambda: bool(view.rows) and view.rows[0].tokens == want and not view.busy, timeout=30000)
    assert joined_here == []
    monkeypatch.setattr(LiveText, "text", real)
    _assert_exact(view, expected, window.live_encoding)
    Worker.shutdown()
