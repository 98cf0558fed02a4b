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
