"""The Vocabularies view: what it lists, sorts, finds, exports and picks equals the core's comparison
and tiktoken's own tables."""

from __future__ import annotations

import csv
import io

import pytest
from PySide6.QtCore import QEvent, QObject, QPointF, Qt

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.vocab_diff import compare_vocabularies
from bpeinspect.gui.panels.vocabs import VocabsView
from bpeinspect.gui.panels.vocabs.plots import composition_series
from tests.gui.conftest import wait_jobs
from tests.reference import tiktoken_encoding

NAMES = ("r50k_base", "cl100k_base")


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in NAMES]


def _view(qtbot, toks, names=NAMES):
    view = VocabsView()
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    view.set_tokenizers(toks, list(names))
    _settled(qtbot, view)
    return view


def _settled(qtbot, view):
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=60000)
    wait_jobs(qtbot, view.jobs, 60000)


def _rows(view):
    return list(view.model.rows())


def test_lists_and_counts_are_tiktokens_sets(qtbot, toks):
    view = _view(qtbot, toks)
    a, b = (set(tiktoken_encoding(n).token_byte_values()) for n in NAMES)
    want = {1: a - b, 2: b - a, 3: a & b}
    labels = [view.which.itemText(k) for k in range(view.which.count())]
    assert labels == [f"only r50k_base ({len(a - b):,})", f"only cl100k_base ({len(b - a):,})",
                      f"r50k_base ∩ cl100k_base ({len(a & b):,})"]  # fmt: skip
    for mask, tokens in want.items():
        view.pick_combination(mask)
        _settled(qtbot, view)
        assert set(_rows(view)) == tokens and view.model.rowCount() == len(tokens)
    assert view.merges is not None and view.merges.totals == (50000, len(b) - 256)


def test_header_click_sorts_on_the_worker_and_search_filters(qtbot, toks):
    view = _view(qtbot, toks)
    view.pick_combination(2)  # only cl100k
    _settled(qtbot, view)
    view.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # Len
    _settled(qtbot, view)
    lengths = [len(t) for t in _rows(view)]
    assert lengths == sorted(lengths, reverse=True)
    view.table.sortByColumn(2, Qt.SortOrder.AscendingOrder)  # id in cl100k
    _settled(qtbot, view)
    ids = [toks[1].token_id(t) for t in _rows(view)]
    assert ids == sorted(ids)
    view.search.setText("␣tokeniz")
    _settled(qtbot, view)
    assert _rows(view) and all(b" tokeniz" in t for t in _rows(view))
    assert {t for t in _rows(view)} == {t for t in set(toks[1].ranks) - set(toks[0].ranks) if b" tokeniz" in t}


def test_cells_show_the_ids_of_each_side(qtbot, toks):
    view = _view(qtbot, toks)
    view.pick_combination(3)
    _settled(qtbot, view)
    for row in range(0, view.model.rowCount(), 4001):
        t = view.model.token(row)
        cells = [view.model.index(row, c).data() for c in range(view.model.columnCount())]
        assert cells[1:4] == [str(toks[0].token_id(t)), str(toks[1].token_id(t)), str(len(t))]


def test_clicking_a_token_picks_it_under_the_tokenizer_that_holds_it(qtbot, toks):
    view = _view(qtbot, toks)
    picked = []
    view.tokenPicked.connect(lambda tok, i: picked.append((tok, i)))
    view.pick_combination(2)  # only cl100k: the one that holds it
    _settled(qtbot, view)
    view._clicked(view.model.index(0, 0))
    t = view.model.token(0)
    assert picked[-1] == (toks[1], toks[1].token_id(t))
    view.pick_combination(3)  # both: the id column clicked says which
    _settled(qtbot, view)
    t = view.model.token(5)
    view._clicked(view.model.index(5, 2))
    assert picked[-1] == (toks[1], toks[1].token_id(t))
    view._clicked(view.model.index(5, 0))
    assert picked[-1] == (toks[0], toks[0].token_id(t))


def test_a_click_on_an_upset_bar_lists_its_combination(qtbot, toks):
    view = _view(qtbot, toks)
    plot = view.upset
    vb = plot.bars_item.getViewBox()
    for k, mask in enumerate(plot.masks):
        assert plot.mask_at(vb.mapViewToScene(QPointF(k + 0.2, 10))) == mask
    assert plot.mask_at(vb.mapViewToScene(QPointF(0.5, 10))) is None  # between two bars
    view.pick_combination(plot.masks[-1])
    assert view.which.currentData() == plot.masks[-1]


def test_export_figures_and_lists(qtbot, toks, tmp_path):
    view = _view(qtbot, toks)
    written = []
    view.exported.connect(written.append)
    for page in ("overlap", "composition"):
        view.show_page(page)
        for kind in ("png", "svg"):
            path = tmp_path / f"{page}.{kind}"
            view.export(kind, path)
            _settled(qtbot, view)  # a PNG is written on the worker
            assert path.stat().st_size > 1000
        view.export("csv", tmp_path / f"{page}.csv")
        _settled(qtbot, view)
    overlap = list(csv.reader(io.StringIO((tmp_path / "overlap.csv").read_text("utf-8"))))
    diff = view.diff
    assert overlap[0] == ["combination", *NAMES, "tokens"]
    assert sorted(int(r[-1]) for r in overlap[1:]) == sorted(diff.exclusive_counts().values())
    comp = list(csv.reader(io.StringIO((tmp_path / "composition.csv").read_text("utf-8"))))
    labels, values = composition_series(diff, "script")
    assert [r[0] for r in comp[1:]] == labels and sum(int(r[1]) for r in comp[1:]) == 50256
    view.pick_combination(1)
    _settled(qtbot, view)
    view.export("list", tmp_path / "only-r50k.csv")
    _settled(qtbot, view)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "only-r50k.csv").read_text("utf-8"))))
    assert {bytes.fromhex(r["hex"]) for r in rows} == set(toks[0].ranks) - set(toks[1].ranks)
    assert len(written) == 7


def test_fewer_than_two_tokenizers_say_so(qtbot, toks):
    view = _view(qtbot, toks[:1], NAMES[:1])
    assert view.diff is None and "two to four" in view.status.text()
    assert view.model.rowCount() == 0


def test_with_one_tokenizer_a_note_stands_in_for_the_empty_figures_and_list(qtbot, toks):
    """With one tokenizer the panel drew empty axes, an empty picker and an empty table; a note
    now says what will be there, and a second tokenizer brings the figures and the list."""
    view = _view(qtbot, toks[:1], NAMES[:1])
    assert view.body.currentWidget() is view.empty_note and view.empty_note.isVisible()
    assert not view.pages.isVisible() and not view.table.isVisible()
    assert not view.export_button.isEnabled()
    view.set_tokenizers(toks[:2], list(NAMES[:2]))
    _settled(qtbot, view)
    assert view.body.currentWidget() is not view.empty_note
    assert view.pages.isVisible() and view.table.isVisible() and view.model.rowCount() > 0
    assert view.export_button.isEnabled()
    view.set_tokenizers(toks[:1], list(NAMES[:1]))  # one closed again
    assert view.body.currentWidget() is view.empty_note


def test_four_sides_list_every_combination(qtbot, toks):
    four = [*toks, load_tokenizer("o200k_base"), load_tokenizer("gpt2")]
    view = _view(qtbot, four, [*NAMES, "o200k_base", "gpt2"])
    diff = compare_vocabularies(list(zip([*NAMES, "o200k_base", "gpt2"], four)))
    data = [view.which.itemData(k) for k in range(view.which.count())]
    assert sorted(m for m in data if m > 0) == list(range(1, 16))
    assert view.diff.exclusive_counts() == diff.exclusive_counts()
    pairs = sorted(-m for m in data if m < 0)  # two sides, maybe others
    assert pairs == sorted(1 << a | 1 << b for a in range(4) for b in range(a + 1, 4))
    view.which.setCurrentIndex(data.index(-(1 | 4)))  # r50k and o200k, whatever else
    _settled(qtbot, view)
    assert set(_rows(view)) == set(four[0].ranks) & set(four[2].ranks)


def test_the_window_docks_the_view_and_a_pick_reaches_the_token_views(qtbot, panel_window):
    win = panel_window
    win.open_tokenizer("r50k_base")
    win.open_tokenizer("cl100k_base")
    qtbot.waitUntil(lambda: len(win.registry.tokenizers()) >= 2, timeout=30000)
    win.commands["panels.vocabs"].trigger()
    qtbot.waitUntil(lambda: win.panels.view("vocabs") is not None, timeout=30000)
    view = win.panels.view("vocabs")
    qtbot.waitUntil(lambda: view.diff is not None, timeout=60000)
    _settled(qtbot, view)
    seen = []
    win.tokenActivated.connect(lambda tok, i: seen.append((tok, i)))
    view.pick_combination(2)
    _settled(qtbot, view)
    view._clicked(view.model.index(0, 0))
    assert seen and seen[-1][0] is view.toks[1] and seen[-1][0].token_bytes(seen[-1][1]) == view.model.token(0)


def test_a_png_export_is_drawn_here_and_compressed_and_written_on_a_worker(qtbot, toks, tmp_path, monkeypatch):
    import threading

    from bpeinspect.gui.panels.languages import export

    view = _view(qtbot, toks)
    writers = []
    save = export.save_image
    monkeypatch.setattr(export, "save_image", lambda *a: (writers.append(threading.current_thread()), save(*a))[1])
    view.show_page("overlap")
    path = tmp_path / "overlap.png"
    with qtbot.waitSignal(view.exported, timeout=30000):
        view.export("png", path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert writers and writers[0] is not threading.main_thread()


def test_the_composition_figure_is_made_after_its_page_first_paints(qtbot, toks):
    """Made as its page was shown, the plot came in the turn of the page's first paint: the two
    held the GUI thread for over 50 ms. It is made in the turn after that paint."""
    view = _view(qtbot, toks)
    _settled(qtbot, view)
    assert view.current_page() == "overlap"
    figure = view.composition
    assert not figure.canvas.ci.items  # no plot yet behind the other tab
    made_at_paint = []

    class Seen(QObject):
        def eventFilter(self, watched, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                made_at_paint.append(bool(figure.canvas.ci.items))
            return False

    seen = Seen()
    figure.canvas.viewport().installEventFilter(seen)
    view.show_page("composition")
    assert not figure.canvas.ci.items  # not in the turn it is shown
    qtbot.waitUntil(lambda: bool(figure.canvas.ci.items), timeout=5000)
    assert made_at_paint and made_at_paint[0] is False  # the page was painted before its plot was made
    plot = figure.plot
    qtbot.waitUntil(lambda: bool(plot.listDataItems()), timeout=5000)  # and drawn from the comparison
    assert plot.titleLabel.text


def test_the_overlap_figure_is_made_after_the_panel_opens_a_plot_per_turn(qtbot, toks):
    """Both pyqtgraph plots made as the panel opened held the GUI thread for tens of ms."""
    view = VocabsView()
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    assert not view.upset.canvas.ci.items  # the panel is open, its plots still to come
    view.set_tokenizers(toks, list(NAMES))  # (with one tokenizer a note stands in for them)
    assert not view.upset.canvas.ci.items
    qtbot.waitUntil(lambda: len(view.upset.canvas.ci.items) == 2, timeout=5000)
    _settled(qtbot, view)
    plot = view.upset
    qtbot.waitUntil(
        lambda: bool(plot.masks) and bool(plot.bars_item.listDataItems() or plot.bars_item.items), timeout=5000
    )
    assert len(plot.masks) == 3


def test_the_composition_legend_is_filled_in_the_turn_after_its_bars(qtbot, toks):
    """The bars, their legend and the paint after them held the GUI thread for over 50 ms in one
    turn: the legend comes in the next, with an entry per category drawn, and a redraw in
    between leaves no entry of the bars it cleared."""
    view = _view(qtbot, toks)
    _settled(qtbot, view)
    view.show_page("composition")
    figure = view.composition
    qtbot.waitUntil(lambda: bool(figure.plot.listDataItems()) or bool(figure.plot.items), timeout=5000)
    qtbot.waitUntil(lambda: len(figure.legend.items) > 0, timeout=5000)
    bars = [i for i in figure.plot.items if i.__class__.__name__ == "BarGraphItem"]
    assert len(figure.legend.items) == len(bars)

    figure.set_by("length")  # drawn now; the legend comes next turn
    bars = [i for i in figure.plot.items if i.__class__.__name__ == "BarGraphItem"]
    assert bars and len(figure.legend.items) == 0
    figure.set_by("script")  # drawn again before that turn
    qtbot.waitUntil(lambda: len(figure.legend.items) > 0, timeout=5000)
    qtbot.wait(50)
    bars = [i for i in figure.plot.items if i.__class__.__name__ == "BarGraphItem"]
    assert len(figure.legend.items) == len(bars)
    assert [label.text for _, label in figure.legend.items] == [
        label for label, counts in zip(*composition_series(figure.diff, "script")) if any(counts)
    ]


def test_the_first_comparison_is_computed_once_the_view_has_been_drawn(qtbot, toks, monkeypatch):
    """Computed from the moment the panel opened, it took the interpreter from the view's first
    paint and the making of its plots (over 100 ms of stall): it waits for them."""
    from bpeinspect.gui.panels.vocabs import view as view_module

    plots_when_computed: list[int] = []
    real = view_module.compare_vocabularies

    def compare(sides, **kwargs):
        plots_when_computed.append(len(view.upset.canvas.ci.items))
        return real(sides, **kwargs)

    monkeypatch.setattr(view_module, "compare_vocabularies", compare)
    view = VocabsView()
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.set_tokenizers(toks, list(NAMES))  # as the panel is made, before it is shown
    view.show()
    _settled(qtbot, view)
    assert plots_when_computed == [2]
    assert view.diff is not None


def test_a_comparison_under_way_stops_when_the_tokenizers_change(qtbot, toks, monkeypatch):
    """The comparison runs on a worker for a second or more: when the tokenizers change
    meanwhile it is asked to stop (its should_stop turns true), and the new comparison is the
    one shown."""
    import time

    from bpeinspect.core import Cancelled
    from bpeinspect.gui.panels.vocabs import view as view_module

    asked: list = []
    real = view_module.compare_vocabularies

    def compare(sides, should_stop=None, **kwargs):
        if not asked:  # the first: wait until told to stop
            asked.append(should_stop)
            end = time.monotonic() + 20
            while should_stop is not None and not should_stop() and time.monotonic() < end:
                time.sleep(0.01)
            raise Cancelled()
        return real(sides, should_stop=should_stop, **kwargs)

    monkeypatch.setattr(view_module, "compare_vocabularies", compare)
    view = VocabsView()
    qtbot.addWidget(view)
    view.show()
    view.set_tokenizers(toks, list(NAMES))
    qtbot.waitUntil(lambda: bool(asked), timeout=10000)
    view.set_tokenizers(toks[::-1], list(NAMES[::-1]))
    _settled(qtbot, view)
    assert asked[0] is not None and asked[0]()
    assert view.diff is not None and [s.name for s in view.diff.sides] == list(NAMES[::-1])


def test_a_child_process_starts_only_for_tokenizers_not_sorted_yet(qtbot, monkeypatch):
    """The comparison's child sorts tokens into categories: comparing tokenizers whose tokens are
    sorted already (the reference changed, a panel shown again) starts none."""
    from bpeinspect.core import Tokenizer
    from bpeinspect.core.analysis import sorted_already
    from bpeinspect.core.pool import ProcessPool

    toks = [  # made here: nothing sorted yet
        Tokenizer.from_merges([(104, 105), (111, 107)], pattern=None),
        Tokenizer.from_merges([(104, 105), (97, 98), (256, 33)], pattern=None),
    ]
    assert not any(sorted_already(t) for t in toks)
    started: list[int] = []
    real = ProcessPool.start

    def start(self):
        started.append(1)
        return real(self)

    monkeypatch.setattr(ProcessPool, "start", start)
    view = _view(qtbot, toks)
    assert started and all(sorted_already(t) for t in toks)
    started.clear()
    view.set_tokenizers(toks[::-1], list(NAMES[::-1]))
    _settled(qtbot, view)
    assert started == [] and [s.name for s in view.diff.sides] == list(NAMES[::-1])


def test_a_new_comparison_redraws_the_overlap_figure_in_the_items_it_has(qtbot, toks):
    """Adding and removing pyqtgraph items cost 45 ms for four vocabularies, in the turn the
    comparison arrived: a new comparison now gives the same items its numbers, and a figure
    with fewer combinations hides the labels it no longer needs."""
    view = _view(qtbot, toks)
    plot = view.upset
    qtbot.waitUntil(lambda: len(plot.masks) == 3, timeout=5000)
    before = list(plot.bars_item.items), list(plot.matrix.items)
    swapped = compare_vocabularies(list(zip(reversed(NAMES), reversed(toks))))
    plot.set_diff(swapped)
    assert (list(plot.bars_item.items), list(plot.matrix.items)) == before
    counts = swapped.exclusive_counts()
    labels = [i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem" and i.isVisible()]
    assert [label.toPlainText() for label in labels] == [f"{counts[m]:,}" for m in plot.masks]
    assert [label.pos().y() for label in labels] == [counts[m] for m in plot.masks]
    bars = next(i for i in plot.bars_item.items if i.__class__.__name__ == "BarGraphItem")
    assert list(bars.opts["height"]) == [counts[m] for m in plot.masks]

    one_side = compare_vocabularies([(NAMES[0], toks[0]), (NAMES[1], toks[0])])  # all shared: one bar
    plot.set_diff(one_side)
    labels = [i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem" and i.isVisible()]
    assert plot.masks == [3] and [label.toPlainText() for label in labels] == [f"{one_side.exclusive_counts()[3]:,}"]
    plot.set_diff(None)
    assert plot.masks == [] and not any(i.isVisible() for i in plot.bars_item.items + plot.matrix.items)


def _bar_names(figure):
    """The vocabularies the composition's bars are labelled with, top to bottom."""
    return [name for _, name in figure.plot.getAxis("left")._tickLevels[0]]


def test_a_comparison_arriving_behind_another_page_draws_the_composition_when_it_is_shown(qtbot, toks):
    """The composition's bars were drawn, unseen, in the turn the overlap figure was drawn (over
    50 ms together): a hidden figure now draws when it is next shown."""
    view = _view(qtbot, toks)
    view.show_page("composition")
    figure = view.composition
    qtbot.waitUntil(lambda: len(figure.legend.items) > 0, timeout=5000)
    view.show_page("overlap")
    swapped = compare_vocabularies(list(zip(reversed(NAMES), reversed(toks))))
    figure.set_diff(swapped)
    assert _bar_names(figure) == list(NAMES)  # not drawn behind the other page
    view.show_page("composition")
    qtbot.waitUntil(lambda: _bar_names(figure) == list(reversed(NAMES)), timeout=5000)
    bars = [i for i in figure.plot.items if i.__class__.__name__ == "BarGraphItem"]
    labels, values = composition_series(swapped, "script")
    assert len(bars) == sum(1 for v in values if any(v))


def test_the_overlap_labels_still_to_make_come_in_the_next_turn(qtbot, toks):
    """A fourth vocabulary made eight more count labels, about 3 ms each, in the turn its
    comparison arrived: those already made show their counts at once, the others come next turn."""
    view = _view(qtbot, toks)
    plot = view.upset
    qtbot.waitUntil(lambda: len(plot.masks) == 3, timeout=5000)
    made = [i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem"]
    four = [*toks, load_tokenizer("o200k_base"), load_tokenizer("p50k_base")]
    diff = compare_vocabularies(list(zip([*NAMES, "o200k_base", "p50k_base"], four)))
    plot.set_diff(diff)
    now = [i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem"]
    assert now == made  # none made in this turn
    counts = diff.exclusive_counts()
    assert [label.toPlainText() for label in now] == [f"{counts[m]:,}" for m in plot.masks[: len(now)]]
    qtbot.waitUntil(
        lambda: len([i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem"]) == len(plot.masks),
        timeout=5000,
    )
    labels = [i for i in plot.bars_item.items if i.__class__.__name__ == "TextItem"]
    assert [label.toPlainText() for label in labels] == [f"{counts[m]:,}" for m in plot.masks]
    assert all(label.isVisible() for label in labels)


def test_redrawing_the_composition_empties_its_legend_at_once(qtbot, toks, monkeypatch):
    """The plot's clear took each bar out of the legend, which measured itself after each (14
    bars: 40 ms in one turn): the legend is emptied in one go first."""
    view = _view(qtbot, toks)
    view.show_page("composition")
    figure = view.composition
    qtbot.waitUntil(lambda: len(figure.legend.items) > 3, timeout=5000)
    sizings = []
    real = type(figure.legend).updateSize
    monkeypatch.setattr(type(figure.legend), "updateSize", lambda self: (sizings.append(1), real(self))[1])
    figure.set_diff(None)
    assert len(sizings) <= 2 and not figure.legend.items
    assert not [i for i in figure.plot.items if i.__class__.__name__ == "BarGraphItem"]
