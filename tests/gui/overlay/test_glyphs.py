"""Characters no font draws are shown as their code point, never as an empty box."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetricsF

from bpeinspect.core import display_bytes, load_tokenizer
from bpeinspect.gui.overlay import glyphs, marks
from bpeinspect.gui.overlay.glyphs import (
    CodePointSpacer,
    box_width,
    coverage_for,
    font_suggestion,
    glyph_notices,
    missing_glyphs_message,
    missing_positions,
    prefer_noto,
    shown,
)
from bpeinspect.gui.overlay.token_view import TokenView
from tests.gui.overlay.test_token_view import make_view as make_token_view

PUA = "\ue000"  # private use: no standard font has it
UNASSIGNED = "\u0378"  # unassigned in the Greek block
CJK = "世界"


def restricted_font() -> QFont:
    """One font and no fallback: a machine with only that font installed."""
    family = next((f for f in ("DejaVu Sans", "Noto Sans") if f in QFontDatabase.families()), None)
    if family is None:
        pytest.skip("neither DejaVu Sans nor Noto Sans is installed")
    font = QFont(family)
    font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)
    return font


@pytest.fixture
def o200k():
    return load_tokenizer("o200k_base")


def make_view(qtbot, tok, text, font: QFont | None = None) -> TokenView:
    view = make_token_view(qtbot, tok, text)
    if font is not None:
        font.setPointSizeF(14)
        view.document().setDefaultFont(font)
        view.setFont(font)
    return view


def painted_code_points(qtbot, view, monkeypatch) -> list[tuple[str, float]]:
    """The characters the view paints as code point boxes, with the widths of their cells."""
    calls: list[tuple[str, float]] = []
    real = glyphs.paint_code_point

    def spy(p, rect, ch, color, font):
        calls.append((ch, rect.width()))
        real(p, rect, ch, color, font)

    monkeypatch.setattr(marks, "paint_code_point", spy)
    view.viewport().grab()  # paints now
    return calls


def test_private_use_and_unassigned_code_points_are_missing(qapp):
    cov = coverage_for(QFont())
    assert cov.missing_in(f"a{PUA}b{UNASSIGNED} c") == {PUA, UNASSIGNED}
    assert not cov.is_missing("a") and not cov.is_missing("é")
    assert cov.missing_in("plain ascii\ttext") == set()


def test_a_character_its_font_maps_is_drawn_without_asking_every_font(qapp, monkeypatch):
    """Opening the Training panel probed the preview's characters against every font of the
    system (half a millisecond a character on the GUI thread); the font that shaped it says."""
    asked: list[str] = []
    real = glyphs._some_font_has

    def spy(ch: str) -> bool:
        asked.append(ch)
        return real(ch)

    monkeypatch.setattr(glyphs, "_some_font_has", spy)
    cov = glyphs.GlyphCoverage(QFont())
    assert cov.missing_in("naïve café, Привет") == set()
    assert asked == []
    assert cov.missing_in(f"x{PUA}") == {PUA}


def test_a_restricted_font_set_misses_what_its_font_lacks(qapp):
    cov = coverage_for(restricted_font())
    assert cov.missing_in(f"abc {CJK}") == set(CJK)
    if "Noto Sans CJK JP" in QFontDatabase.families():  # with fallback, an installed CJK font draws it
        assert coverage_for(QFont("Noto Sans")).missing_in(CJK) == set()


def test_positions_count_utf16_units():
    assert missing_positions(f"😀{PUA}x\U000f0000", {PUA, "\U000f0000"}) == [(2, 1, PUA), (4, 2, "\U000f0000")]


def test_the_overlay_draws_missing_characters_as_code_points(qtbot, o200k, monkeypatch):
    view = make_view(qtbot, o200k, f"a{PUA}b {UNASSIGNED}\n")
    calls = painted_code_points(qtbot, view, monkeypatch)
    assert {ch for ch, _ in calls} == {PUA, UNASSIGNED}
    # the spacer widens their cells so the digits fit, and hides Qt's empty box
    qtbot.waitUntil(lambda: view.document().findChild(CodePointSpacer) is not None)
    qtbot.wait(10)
    calls = painted_code_points(qtbot, view, monkeypatch)
    font = view.document().defaultFont()
    for ch, width in calls:
        assert width >= box_width(ch, font) - 1, (ch, width)
    block = view.document().firstBlock()
    ranges = block.layout().formats()
    assert [(r.start, r.length) for r in ranges] == [(1, 1), (4, 1)]
    assert all(r.format.foreground().color().alpha() == 0 for r in ranges)
    assert view.text() == f"a{PUA}b {UNASSIGNED}\n"  # nothing written into the text


def test_a_restricted_font_set_draws_cjk_as_code_points(qtbot, o200k, monkeypatch):
    view = make_view(qtbot, o200k, f"hi {CJK}", restricted_font())
    assert {ch for ch, _ in painted_code_points(qtbot, view, monkeypatch)} == set(CJK)


def test_plain_text_attaches_no_spacer(qtbot, o200k, monkeypatch):
    view = make_view(qtbot, o200k, "plain text, Ωmega, 😀\n")
    assert painted_code_points(qtbot, view, monkeypatch) == []
    qtbot.wait(10)
    assert view.document().findChild(CodePointSpacer) is None


def test_lists_show_code_points(qapp):
    assert shown(f"x{PUA}y") == "x⟨U+E000⟩y"
    assert shown("x⟨U+0378⟩␣") == "x⟨U+0378⟩␣"  # the notation itself stays
    font = restricted_font()
    assert shown(CJK, font) == "⟨U+4E16⟩⟨U+754C⟩"
    assert shown(display_bytes(b" a")) == "␣a"
    assert shown(display_bytes("日".encode()[:2])) == "<e6 97>"


def test_suggested_fonts_name_noto():
    have = {"Noto Sans", "Noto Color Emoji"}
    assert font_suggestion("\U0001fae9", have) == "a newer Noto Color Emoji"
    assert font_suggestion("\U0001f525", set()) == "Noto Color Emoji"
    assert font_suggestion("世", set()) == "Noto Sans CJK"
    assert font_suggestion("\U00011f00", have) == "Noto Sans Kawi"  # newer than Python's Unicode tables
    assert font_suggestion("ༀ", have) == "Noto Sans Tibetan"
    assert font_suggestion(PUA, have).startswith("private use")
    assert "unassigned" in font_suggestion(UNASSIGNED, have)


def test_the_message_names_every_character_once(qapp):
    msg = missing_glyphs_message([PUA, "\U00011f00", PUA])
    assert msg.startswith("No installed font draws 2 characters, shown as code points: ")
    assert "U+E000" in msg and "U+11F00" in msg
    assert "Noto Sans Kawi" in msg


def test_the_status_bar_says_it_once(qtbot, window):
    notices = glyph_notices()
    notices.reported.discard("\ue123")
    with qtbot.waitSignal(notices.found, timeout=5000) as blocker:
        window.set_text("private \ue123 use")
        coverage_for(window.document.defaultFont()).missing_in(window.text())  # what painting asks
    assert "U+E123" in blocker.args[0]
    qtbot.waitUntil(lambda: "U+E123" in window.statusBar().currentMessage())
    assert "U+E123" in window.statusBar().toolTip()
    with qtbot.assertNotEmitted(notices.found, wait=50):
        notices.report(["\ue123"])


def test_prefer_noto_puts_installed_noto_fonts_after_the_own_family():
    font = prefer_noto(QFont("Foo Sans"), {"Noto Sans", "Noto Color Emoji", "Noto Sans Math", "Bar"})
    assert font.families() == ["Foo Sans", "Noto Sans", "Noto Sans Math", "Noto Color Emoji"]
    assert prefer_noto(QFont("Foo Sans"), set()).families() == ["Foo Sans"]


def test_the_code_point_box_is_drawn(qtbot, qapp):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    img = QImage(60, 30, QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    glyphs.paint_code_point(p, QRectF(0, 0, 60, 30), "\U0001f525", QColor("black"), QFont("Noto Sans", 14))
    p.end()
    dark = sum(1 for x in range(60) for y in range(30) if QColor(img.pixel(x, y)).lightness() < 128)
    assert dark > 30  # a frame and five digits


def test_a_missing_combining_mark_gets_its_own_box(qtbot, o200k, monkeypatch):
    kawi = "\U00011f00"  # KAWI SIGN CANDRABINDU: a mark, clustered with the character before it
    view = make_view(qtbot, o200k, f"a:{kawi}b", restricted_font())
    qtbot.waitUntil(lambda: view.document().findChild(CodePointSpacer) is not None)
    qtbot.wait(10)
    calls = painted_code_points(qtbot, view, monkeypatch)
    assert [ch for ch, _ in calls] == [kawi]
    assert calls[0][1] >= box_width(kawi, view.glyph_font()) - 1


def test_the_boxes_of_a_flag_and_of_a_skin_toned_emoji_do_not_overlap(qtbot, o200k, monkeypatch):
    """Two missing characters in one cluster (a flag's two letters, an emoji and its skin tone)
    had the room of one: their boxes were drawn over the box before them."""
    text = "a \U0001f389 \U0001f1e9\U0001f1ea b \U0001f44d\U0001f3fd c"
    view = make_view(qtbot, o200k, text, restricted_font())
    qtbot.waitUntil(lambda: view.document().findChild(CodePointSpacer) is not None)
    qtbot.wait(10)
    rects = []
    real = glyphs.paint_code_point

    def spy(p, rect, ch, color, font):
        rects.append((ch, rect))
        real(p, rect, ch, color, font)

    monkeypatch.setattr(marks, "paint_code_point", spy)
    view.viewport().grab()
    assert [ch for ch, _ in rects] == [c for c in text if ord(c) > 0xFFFF]
    for (a, ra), (b, rb) in zip(rects, rects[1:]):
        assert ra.right() <= rb.left() + 0.5, (f"U+{ord(a):X}", ra, f"U+{ord(b):X}", rb)
        assert rb.width() >= box_width(b, view.glyph_font()) - 1


def test_the_spacer_follows_a_new_font_family(qtbot, o200k):
    view = make_view(qtbot, o200k, f"hi {CJK} {PUA}")
    qtbot.waitUntil(lambda: view.document().findChild(CodePointSpacer) is not None)
    spacer = view.document().findChild(CodePointSpacer)
    assert spacer.cov is coverage_for(view.document().defaultFont())
    narrow = restricted_font()
    view.document().setDefaultFont(narrow)
    view.viewport().grab()
    assert spacer.cov is coverage_for(narrow)

    def covered() -> set[int]:
        return {k for r in view.document().firstBlock().layout().formats() for k in range(r.start, r.start + r.length)}

    qtbot.waitUntil(lambda: covered() == {3, 4, 6})  # the CJK characters are missing too now


def test_attaching_the_spacer_is_no_edit(qtbot, o200k):
    view = make_view(qtbot, o200k, f"a{PUA}b\n" * 3)
    doc = view.document()
    heard = []
    doc.contentsChanged.connect(lambda: heard.append("changed"))
    doc.contentsChange.connect(lambda *a: heard.append(a))
    view.viewport().grab()
    qtbot.waitUntil(lambda: doc.findChild(CodePointSpacer) is not None)
    qtbot.wait(20)
    assert heard == []  # the window would encode the text again
    assert [(r.start, r.length) for r in doc.firstBlock().layout().formats()] == [(1, 1)]
    assert not doc.isModified() and not doc.isUndoAvailable()


SCRIPT_SAMPLES = {
    "Noto Sans Devanagari": "हिन्दी ऋषियों",
    "Noto Sans Bengali": "বাংলা ভাষা",
    "Noto Sans Tamil": "தமிழ் மொழி",
    "Noto Sans Thai": "ภาษาไทย",
    "Noto Sans Ethiopic": "አማርኛ ቋንቋ",
    "Noto Sans Arabic": "العربية",
}


def test_the_bundled_fonts_are_registered_and_draw_their_scripts(qapp):
    families = glyphs.load_bundled_fonts()
    assert set(glyphs.BUNDLED_FAMILIES) <= set(families)
    assert set(SCRIPT_SAMPLES) == set(glyphs.BUNDLED_FAMILIES)
    for family, text in SCRIPT_SAMPLES.items():
        font = QFont(family)
        font.setStyleStrategy(QFont.StyleStrategy.NoFontMerging)  # that font alone, no system fallback
        assert coverage_for(font).missing_in(text) == set(), family


def test_the_bundled_fonts_come_with_their_licence():
    from bpeinspect.core.io import resources_dir

    folder = resources_dir() / "fonts"
    assert sorted(p.name for p in folder.glob("*.ttf"))
    assert "SIL Open Font License" in (folder / "OFL.txt").read_text(encoding="utf-8")


def test_prefer_noto_falls_back_to_the_bundled_fonts(qapp):
    glyphs.load_bundled_fonts()
    families = prefer_noto(QFont("DejaVu Sans")).families()
    assert families[0] == "DejaVu Sans"
    assert "Noto Sans Devanagari" in families


_ONLY_DEJAVU_PROBE = """
import sys
from PySide6.QtWidgets import QApplication
from bpeinspect.gui.overlay import glyphs
app = QApplication([])
if sys.argv[1] == "bundled":
    glyphs.load_bundled_fonts()
font = glyphs.prefer_noto(app.font())
print("".join(sorted(glyphs.coverage_for(font).missing_in("Hindi: हिन्दी ऋषियों।"))))
"""


def missing_with_only_dejavu(tmp_path, mode: str) -> str:
    """The characters of a Hindi line missing on a machine whose only fonts are DejaVu's."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    dejavu = next(Path("/usr/share/fonts").rglob("DejaVuSans.ttf"), None)
    if dejavu is None:
        pytest.skip("DejaVu Sans is not installed")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?><fontconfig><dir>{dejavu.parent}</dir>'
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>",
        encoding="utf-8",
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf), "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, "-c", _ONLY_DEJAVU_PROBE, mode],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_a_script_no_font_has_counts_as_missing(tmp_path):
    assert set(missing_with_only_dejavu(tmp_path, "system")) == set("हिन्दीऋषियों।")


def test_the_bundled_fonts_draw_a_script_the_system_lacks(tmp_path):
    assert missing_with_only_dejavu(tmp_path, "bundled") == ""


@pytest.mark.parametrize("line", ["العربية: نص حكيم له سر قاطع وذو شأن عظيم", "हिन्दी: ऋषियों को सताने वाले"])
def test_a_line_of_a_script_with_tall_marks_is_as_tall_as_its_own_font(qtbot, o200k, line):
    glyphs.load_bundled_fonts()
    family = glyphs.tall_family("Arabic" if "ع" in line else "Devanagari")
    assert family is not None  # bundled
    view = make_view(qtbot, o200k, f"Latin above\n{line}\nLatin below", QFont("DejaVu Sans"))
    view.viewport().grab()
    qtbot.waitUntil(lambda: view.document().findChild(CodePointSpacer) is not None)
    view.viewport().grab()
    own = QFont(family)
    own.setPointSizeF(14)
    fm = QFontMetricsF(own)
    block = view.document().findBlockByNumber(1)
    lines = [block.layout().lineAt(k) for k in range(block.layout().lineCount())]
    assert lines and all(ln.height() >= fm.ascent() + fm.descent() - 0.5 for ln in lines)
    above = view.blockBoundingGeometry(block.previous())
    here = view.blockBoundingGeometry(block)
    assert above.bottom() <= here.top() + 0.5  # the backgrounds of neighbouring lines do not overlap


def formatted(block) -> bool:
    return bool(block.layout().formats())


def test_a_long_text_is_formatted_where_it_is_shown_not_all_at_once(qtbot, o200k):
    """Formatting every line of a text of tens of megabytes held the window for seconds: the
    spacer formats the lines a view shows, and the others as they are scrolled to."""
    from PySide6.QtGui import QTextCursor

    view = make_view(qtbot, o200k, f"a{PUA}b\n" * 3000)
    doc = view.document()
    view.viewport().grab()
    qtbot.waitUntil(lambda: doc.findChild(CodePointSpacer) is not None and formatted(doc.firstBlock()))
    far = doc.findBlockByNumber(2500)
    assert not formatted(far)
    shown = sum(formatted(doc.findBlockByNumber(k)) for k in range(doc.blockCount()))
    assert 0 < shown < 200
    cur = QTextCursor(far)
    view.setTextCursor(cur)
    view.ensureCursorVisible()
    view.viewport().grab()
    qtbot.waitUntil(lambda: formatted(doc.findBlockByNumber(2500)))
    assert [(r.start, r.length) for r in doc.findBlockByNumber(2500).layout().formats()] == [(1, 1)]


def test_text_going_in_is_formatted_as_it_is_shown_and_an_edit_at_once(qtbot, o200k):
    from PySide6.QtGui import QTextCursor

    view = make_view(qtbot, o200k, f"a{PUA}b\n")
    doc = view.document()
    view.viewport().grab()
    qtbot.waitUntil(lambda: doc.findChild(CodePointSpacer) is not None and formatted(doc.firstBlock()))
    cur = QTextCursor(doc)
    cur.movePosition(QTextCursor.MoveOperation.End)
    cur.insertText(f"x{PUA}y\n" * 2000)  # a big paste below the view: no line of it formatted yet
    assert not any(formatted(doc.findBlockByNumber(k)) for k in range(1, doc.blockCount()))
    cur.setPosition(0)
    cur.insertText(f"{PUA}")  # a keystroke: its line is formatted before it is painted
    assert [(r.start, r.length) for r in doc.firstBlock().layout().formats()] == [(0, 1), (2, 1)]
    view.viewport().grab()
    qtbot.waitUntil(lambda: formatted(doc.findBlockByNumber(3)))


def test_the_line_format_and_the_code_point_cells_share_a_line(qtbot, o200k):
    """Inline ids raise every line with a format of the layout, which the spacer's own formats
    (a missing character's cell) go on top of: neither drops the other."""
    from PySide6.QtGui import QTextCharFormat

    view = make_view(qtbot, o200k, f"a{PUA}b\nplain\n")
    doc = view.document()
    view.viewport().grab()
    qtbot.waitUntil(lambda: doc.findChild(CodePointSpacer) is not None and formatted(doc.firstBlock()))
    spacer = doc.findChild(CodePointSpacer)
    up = QTextCharFormat()
    up.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
    spacer.format_lines(up)

    def ranges(k: int) -> list[tuple[int, int, bool]]:
        superscript = QTextCharFormat.VerticalAlignment.AlignSuperScript
        return [
            (r.start, r.length, r.format.verticalAlignment() == superscript)
            for r in doc.findBlockByNumber(k).layout().formats()
        ]

    line = (0, glyphs.LINE_LENGTH, True)
    assert ranges(0) == [line, (1, 1, False)] and ranges(1) == [line]
    spacer.follow(glyphs.coverage_for(QFont("DejaVu Sans")))  # formatted again for another font
    spacer.format_blocks([doc.firstBlock()])
    assert ranges(0)[0] == line
    spacer.format_lines(None)
    assert ranges(0) == [(1, 1, False)] and ranges(1) == []
