"""The languages view holds the core's numbers in every page, filters without counting, and exports."""

from __future__ import annotations

import csv
import io

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication

from bpeinspect.core import human_size, load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.gui.overlay.palette import colors, dark_window_palette
from bpeinspect.gui.panels.languages import LanguagesView
from bpeinspect.gui.panels.languages.filterbar import source_title
from bpeinspect.gui.panels.languages.tables import CODE_ROLE, SUMMARY_ROWS

NAMES = ["r50k_base", "cl100k_base"]


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in NAMES]


def counted(qtbot, view: LanguagesView, toks, timeout: int = 120000):
    with qtbot.waitSignal(view.statsReady, timeout=timeout) as blocker:
        view.set_tokenizers(toks)
    return blocker.args[0]


@pytest.fixture
def view(qtbot, toks):
    v = LanguagesView(source="fable")
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    counted(qtbot, v, toks)
    return v


def show(qtbot, view: LanguagesView, key: str):
    """Show a page and wait until it is drawn."""
    view.show_page(key)
    page = view.page(key)
    if getattr(page, "is_drawing", lambda: False)():
        with qtbot.waitSignal(page.drawn, timeout=10000):
            pass
    return page


def test_counts_are_the_tokenizers_own(view, toks):
    stats = view.corpus_stats()
    fable = fable_corpus()
    assert stats.tokenizers == tuple(NAMES) and len(stats.corpus) == len(fable)
    for name, tok in zip(NAMES, toks):
        for code in ("en", "ko", "ar", "hi"):
            assert stats.counts[name, code].tokens == len(tok.encode_ordinary(fable.text(code)))
    assert stats.premium("r50k_base", "en") == 1.0
    assert round(stats.premium("r50k_base", "ko"), 1) == 5.2


def test_summary_compares_the_tokenizers(qtbot, qtmodeltester, view):
    page = show(qtbot, view, "summary")
    model = page.model
    qtmodeltester.check(model, force_py=True)
    sums = view.corpus_stats().summaries()
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())] == NAMES
    assert model.rowCount() == len(SUMMARY_ROWS)
    median = [model.index(1, c).data() for c in range(2)]
    assert median == [f"{s.median:.2f}×" for s in sums]
    top = model.index(6, 0)  # most costly under r50k_base
    assert top.data(CODE_ROLE) == sums[0].most_costly[0][0] == "ta"
    assert top.data().startswith("Tamil")


def test_table_searches_and_sorts(qtbot, qtmodeltester, view):
    page = show(qtbot, view, "table")
    qtmodeltester.check(page.model, force_py=True)  # (one tester follows one model: the proxy is Qt's own)
    assert page.proxy.rowCount() == len(fable_corpus())
    page.search.setText("cyrillic")
    codes = sorted(page.proxy.index(r, 0).data() for r in range(page.proxy.rowCount()))
    assert codes == ["ru", "uk"]
    assert "2 of 27" in page.count_label.text()
    page.search.setText("")
    head = [page.model.headerData(c, Qt.Orientation.Horizontal) for c in range(page.model.columnCount())]
    col = head.index("r50k_base\npremium")
    page.table.sortByColumn(col, Qt.SortOrder.DescendingOrder)
    assert page.proxy.index(0, 0).data() == "ta"  # Tamil costs GPT-2 most


def test_filters_and_baseline_derive_without_counting(qtbot, view):
    before = view.corpus_stats()
    view.set_filters(script="Latin")
    latin = view.corpus_stats()
    assert not view.is_running() and not view.jobs.pending("count")
    assert {t.language.script for t in latin.corpus} == {"Latin"} and len(latin.corpus) == 11
    assert latin.counts is before.counts  # the same counts, only restricted
    view.set_filters(region="Asia")
    assert {t.language.region for t in view.corpus_stats().corpus} == {"Asia"}
    view.set_filters()
    view.set_baseline("fr")
    stats = view.corpus_stats()
    assert stats.baseline == "fr" and stats.premium("cl100k_base", "fr") == 1.0
    assert stats.premium("cl100k_base", "en") < 1.0


def test_a_new_tokenizer_is_counted_alone(qtbot, view, toks):
    before = view.corpus_stats()
    o200k = load_tokenizer("o200k_base")
    stats = counted(qtbot, view, [*toks, o200k])
    assert stats.tokenizers == (*NAMES, "o200k_base")
    assert stats.counts["r50k_base", "ko"] is before.counts["r50k_base", "ko"]  # kept, not counted again
    assert stats.counts["o200k_base", "ko"].tokens < stats.counts["cl100k_base", "ko"].tokens


def test_rank_plot_lines_fall_and_leave_out_the_baseline(qtbot, view):
    page = show(qtbot, view, "rank")
    items = [i for i in page.item.listDataItems() if i.name() in NAMES]
    assert [i.name() for i in items] == NAMES
    for item in items:
        _, ys = item.getData()
        assert len(ys) == len(fable_corpus()) - 1
        assert list(ys) == sorted(ys, reverse=True)
    codes = [code for code, tok in page.targets.keys if tok == "r50k_base"]
    assert codes[0] == "ta" and "en" not in codes


def test_script_plot_has_a_row_per_script(qtbot, view):
    page = show(qtbot, view, "scripts")
    scripts = {t.language.script for t in fable_corpus()}
    assert sorted(page.rows) == sorted(scripts)
    assert len(page.targets.keys) == 2 * len(fable_corpus())


def test_map_hover_and_click_open_a_language(qtbot, view):
    page = show(qtbot, view, "map")
    located = [t for t in fable_corpus() if t.language.located]
    assert sorted(page.codes) == sorted(t.code for t in located)
    code = "ko"
    i = [k for k, _ in page.targets.keys].index(code)
    vb = page.item.getViewBox()

    def hovered():  # where the point is now: a late layout pass on a busy machine may still move the view
        return page.hit(vb.mapViewToScene(QPointF(page.targets.x[i], page.targets.y[i])))

    qtbot.waitUntil(lambda: hovered() is not None, timeout=5000)
    assert hovered() == (code, view.focus())
    tip = page.tooltip_for(code, view.focus())
    assert "Korean" in tip and "r50k_base" in tip and "cl100k_base" in tip
    got: list = []
    view.languageActivated.connect(got.append)
    for _ in range(5):  # where the point is now (a late layout pass may still move the view's range)
        pos = page.plot.mapFromScene(vb.mapViewToScene(QPointF(page.targets.x[i], page.targets.y[i])))
        qtbot.mouseClick(page.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))
        qtbot.wait(400)  # not taken for the second click of a double-click
        if got:
            break
    assert got and got[0].code == code and got[0].sample.read() == fable_corpus().text(code)


def test_bars_for_a_small_corpus(qtbot, view, toks):
    page = show(qtbot, view, "bars")
    series = page.series()
    assert list(series) == NAMES
    fable = fable_corpus()
    for name, tok in zip(NAMES, toks):
        _, heights = series[name]
        assert heights == [float(len(tok.encode_ordinary(fable.text(c)))) for c in page.order]
    with qtbot.waitSignal(page.drawn, timeout=10000):
        page.set_metric("premium")
    xs, hs = page.series()["r50k_base"]
    ko = page.order.index("ko")
    assert page.bar_at(xs[ko], 1.0) == ("r50k_base", "ko")
    assert hs[page.order.index("en")] == 1.0


@pytest.mark.parametrize("key", ["summary", "rank", "scripts", "map", "table", "bars"])
def test_every_page_exports_png_svg_csv(qtbot, view, tmp_path, key):
    show(qtbot, view, key)
    kinds = ("csv",) if key == "table" else ("png", "svg", "csv")  # a picture of a long table: its screen only
    for kind in kinds:
        path = tmp_path / f"{key}.{kind}"
        with qtbot.waitSignal(view.exported, timeout=10000):
            view.export(kind, path)
        data = path.read_bytes()
        if kind == "png":
            assert data[:4] == b"\x89PNG"
        elif kind == "svg":
            assert b"<svg" in data
        else:
            rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
            assert len(rows) > 2 and all(len(r) == len(rows[0]) for r in rows)


def test_the_table_page_exports_csv_only(qtbot, view, tmp_path):
    show(qtbot, view, "table")
    assert view.export_buttons["csv"].isEnabled()
    assert not view.export_buttons["png"].isEnabled() and not view.export_buttons["svg"].isEnabled()
    assert "CSV" in view.export_buttons["png"].toolTip()
    view.export("png", tmp_path / "table.png")
    assert not (tmp_path / "table.png").exists()
    show(qtbot, view, "summary")
    assert view.export_buttons["png"].isEnabled()


def test_pages_follow_the_theme(qtbot, view):
    page = show(qtbot, view, "map")
    app = QApplication.instance()
    app.setPalette(dark_window_palette())
    try:
        qtbot.waitUntil(lambda: page.plot.backgroundBrush().color().name() == colors(dark=True).plot_bg, timeout=5000)
    finally:
        app.setPalette(app.style().standardPalette())
    qtbot.waitUntil(lambda: page.plot.backgroundBrush().color().name() == colors(dark=False).plot_bg, timeout=5000)


def test_udhr_filters_by_stage_script_and_region(qtbot, toks):
    v = LanguagesView(source="udhr")
    qtbot.addWidget(v)
    stats = counted(qtbot, v, toks[:1])
    assert len(stats.corpus) == 527 and stats.baseline == "eng"
    v.set_filters(stage=None)
    assert len(v.corpus_stats().corpus) == 532
    v.set_filters(script="Ethiopic")
    assert [t.code for t in v.corpus_stats().corpus] == ["amh", "tir"]
    v.set_filters(region="Oceania")
    assert {t.language.region for t in v.corpus_stats().corpus} == {"Oceania"}
    assert v.corpus().language("arb").direction == "rtl"


def test_cancel_stops_counting(qtbot, toks):
    v = LanguagesView(source="udhr")
    qtbot.addWidget(v)
    with qtbot.waitSignal(v.loaded, timeout=60000):
        pass
    v.set_tokenizers([load_tokenizer("o200k_base")])
    assert v.is_running() and v.status.text().endswith(" under 1 tokenizer…")
    with qtbot.waitSignal(v.jobs.ended, timeout=60000):
        v.cancel()
    assert not v.is_running() and "Cancelled" in v.status.text()


def test_the_status_names_the_corpus_counted_and_under_how_many_tokenizers(qtbot, toks):
    v = LanguagesView(source="fable")
    qtbot.addWidget(v)
    with qtbot.waitSignal(v.loaded, timeout=60000):
        pass
    with qtbot.waitSignal(v.statsReady, timeout=120000):
        v.set_tokenizers(toks)
        assert v.is_running() and v.status.text() == f"Counting {source_title('fable')} under 2 tokenizers…"
    with qtbot.waitSignal(v.statsReady, timeout=120000):
        v.measures_box.setChecked(True)
        assert v.status.text() == f"Measuring {source_title('fable')} under 2 tokenizers…"


def test_the_status_says_how_much_text_was_counted(qtbot, view):
    stats = view.corpus_stats()
    size = sum(stats.counts[stats.tokenizers[0], t.code].bytes for t in stats.corpus)
    assert size < 1 << 20 and f"({human_size(size)} in all)" in view.status.text()  # the fable: not "0.0 MB"
    assert human_size(size).endswith(" KB")


def test_pages_not_shown_are_built_after_the_count(qtbot, toks, monkeypatch):
    """While the corpus is counted (its children and worker share the cores and the interpreter
    with the window) only the page shown is built; the plots, 20-30 ms each, come after."""
    import time

    from bpeinspect.core.analysis import languages as counting
    from bpeinspect.gui.panels.languages.view import PAGES

    real = counting.run_job

    def slow_count(*args, processes, pool, progress, should_stop):
        if args[0] == "count":
            time.sleep(0.6)  # long enough for every page to be built meanwhile, one per turn
        yield from real(*args, processes=processes, pool=pool, progress=progress, should_stop=should_stop)

    monkeypatch.setattr(counting, "run_job", slow_count)
    v = LanguagesView(source="fable")
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    built = []
    v.statsReady.connect(lambda _stats: built.append([k for k in PAGES if v.page(k) is not None]))
    counted(qtbot, v, toks)
    assert built and built[0] == [v.current_page()]
    qtbot.waitUntil(lambda: all(v.page(k) is not None for k in PAGES), timeout=10000)


def test_the_tables_fit_their_columns_one_per_turn(qtbot, toks, monkeypatch):
    """Never the whole table in one turn (every cell of 60 rows of each column: 50-80 ms next to
    the counting), and in the end each column as wide as its contents ask."""
    from PySide6.QtWidgets import QTableView

    monkeypatch.setattr(QTableView, "resizeColumnsToContents", lambda self: pytest.fail("the whole table at once"))
    sized: list[int] = []
    real = QTableView.resizeColumnToContents
    monkeypatch.setattr(QTableView, "resizeColumnToContents", lambda self, c: (sized.append(c), real(self, c)))
    v = LanguagesView(source="fable")
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    counted(qtbot, v, toks)
    page = show(qtbot, v, "table")
    qtbot.waitUntil(lambda: not page.sizing(), timeout=10000)
    n = page.model.columnCount()
    assert n > 2 * len(toks) and set(range(n)) <= set(sized)
    table, header = page.table, page.table.horizontalHeader()
    for c in range(n):
        assert table.columnWidth(c) == max(table.sizeHintForColumn(c), header.sectionSizeHint(c)), c


@pytest.mark.parametrize("key", ["rank", "use"])
def test_a_plots_side_label_fits_the_least_plot_height(qtbot, view, key):
    """A panel docked below the text gives a plot its least height: its side label was longer
    than that, and cut at both ends."""
    from PySide6.QtGui import QFontMetrics

    from bpeinspect.gui.panels.languages.plotbase import LEAST_PLOT_HEIGHT

    page = show(qtbot, view, key)
    label = page.item.getAxis("left").label
    qtbot.waitUntil(lambda: bool(label.toPlainText()), timeout=60000)  # (the use page counts first)
    text = label.toPlainText()
    room = LEAST_PLOT_HEIGHT - 40  # the title and the bottom axis take the rest
    assert QFontMetrics(label.font()).horizontalAdvance(text) <= room, text


def test_a_new_tokenizer_redraws_the_page_shown_and_the_others_when_shown(qtbot, toks, monkeypatch):
    """A tokenizer joining the view redrew every page (the map's dots, the tables' columns, the
    plots) one after the other while the window waited: only the page shown is redrawn, each
    other one when its tab is shown, with the same figures."""
    from bpeinspect.gui.panels.languages.view import PAGES

    v = LanguagesView(source="fable")
    qtbot.addWidget(v)
    v.resize(1100, 650)
    v.show()
    counted(qtbot, v, toks)
    qtbot.waitUntil(lambda: all(v.page(k) is not None for k in PAGES), timeout=20000)
    show(qtbot, v, "rank")
    drawn: list[tuple[str, tuple[str, ...]]] = []
    for key in PAGES:
        page = v.page(key)
        real = page.set_stats
        monkeypatch.setattr(
            page, "set_stats", lambda stats, *a, k=key, f=real: (drawn.append((k, stats.tokenizers)), f(stats, *a))[1]
        )
    o200k = load_tokenizer("o200k_base")
    stats = counted(qtbot, v, [*toks, o200k])
    qtbot.wait(300)  # turns enough for pages drawn in the background
    assert {k for k, _ in drawn} == {"rank"} and drawn[-1] == ("rank", stats.tokenizers)
    drawn.clear()
    for key in ("map", "table"):
        show(qtbot, v, key)
        assert drawn == [(key, stats.tokenizers)]
        drawn.clear()
    assert sorted(v.page("map").codes) == sorted(t.code for t in stats.corpus if t.language.located)
    assert v.page("table").model.rowCount() == len(stats.corpus)


def test_the_map_is_drawn_in_later_turns_and_ends_as_drawn_at_once(qtbot, view):
    """New figures redrew the map's first items in the slot that brought them (a tokenizer
    added: beside every other panel's work in that turn): the map now draws from the next turn
    on, a few dots per item, and ends with the same dots, colours and targets."""
    import pyqtgraph as pg

    from bpeinspect.gui.overlay.palette import app_colors
    from bpeinspect.gui.panels.languages.mapplot import DOTS_PER_STEP

    page = show(qtbot, view, "map")
    stats, focus = view.corpus_stats(), view.focus()

    def picture():
        dots = []
        for item in page.item.listDataItems():
            if isinstance(item, pg.ScatterPlotItem):
                assert len(item.points()) <= DOTS_PER_STEP
                xs, ys = item.getData()
                dots += zip(xs.tolist(), ys.tolist(), [p.brush().color().name() for p in item.points()])
        return dots, list(page.codes), list(page.targets.keys), page.targets.x.tolist()

    page.item.clear()
    page.legend.clear()
    for _ in page.draw(stats, app_colors()):
        pass
    at_once = picture()
    assert len(at_once[0]) == len(page.codes) > 10
    page.set_stats(stats, focus)
    assert page.is_drawing() and page.item.listDataItems() == []  # nothing in the caller's turn
    with qtbot.waitSignal(page.drawn, timeout=10000):
        pass
    assert picture() == at_once
