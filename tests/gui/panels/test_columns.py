"""Columns that fit their table: in a narrow dock no column hides behind a horizontal scroll bar."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QTableView

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.panels.columns import FitColumns, header

WANTED = [40, 60, 120, 120, 80]  # the widths the columns are given
LEAST = {2: 50, 3: 50, 4: 40}  # the ones that give way, and how far


def _table(qtbot, width: int) -> QTableView:
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(QStandardItemModel(30, len(WANTED), view))
    for col, w in enumerate(WANTED):
        view.setColumnWidth(col, w)
    FitColumns(view, LEAST)
    view.resize(width, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def _sizes(view: QTableView) -> list[int]:
    h = header(view)
    return [h.sectionSize(c) for c in range(h.count())]


def _all_in_sight(view: QAbstractItemView) -> bool:
    return header(view).length() <= view.viewport().width() and view.horizontalScrollBar().maximum() == 0


def test_columns_too_wide_for_the_view_give_way_down_to_their_least_width(qtbot) -> None:
    view = _table(qtbot, 330)
    qtbot.waitUntil(lambda: _all_in_sight(view))
    sizes = _sizes(view)
    assert sizes[:2] == WANTED[:2]  # the others keep theirs
    assert all(LEAST[c] <= sizes[c] < WANTED[c] for c in LEAST)
    assert sum(sizes) == view.viewport().width()


def test_a_wider_view_gives_the_columns_their_widths_back_and_the_last_takes_the_rest(qtbot) -> None:
    view = _table(qtbot, 330)
    qtbot.waitUntil(lambda: _all_in_sight(view))
    view.resize(900, 300)
    qtbot.waitUntil(lambda: _sizes(view)[:4] == WANTED[:4])
    assert sum(_sizes(view)) == view.viewport().width()  # the last one fills the row
    assert _sizes(view)[4] > WANTED[4]


def test_past_the_least_widths_the_table_scrolls_and_no_column_gets_narrower(qtbot) -> None:
    view = _table(qtbot, 200)
    qtbot.waitUntil(lambda: _sizes(view)[2:] == [LEAST[2], LEAST[3], LEAST[4]])
    assert view.horizontalScrollBar().maximum() > 0


def test_a_width_the_user_gives_a_column_is_kept_as_its_own(qtbot) -> None:
    view = _table(qtbot, 900)
    header(view).resizeSection(1, 90)  # as a drag of the header does
    view.resize(330, 300)
    qtbot.waitUntil(lambda: _all_in_sight(view))
    assert _sizes(view)[1] == 90


def test_a_hidden_column_leaves_its_room_to_the_others(qtbot) -> None:
    view = _table(qtbot, 330)
    qtbot.waitUntil(lambda: _all_in_sight(view))
    before = _sizes(view)
    view.setColumnHidden(0, True)
    qtbot.waitUntil(lambda: sum(_sizes(view)[2:4]) > sum(before[2:4]))
    assert _all_in_sight(view) and header(view).length() == view.viewport().width()


@pytest.mark.parametrize("panel", ["merge tree", "merge replay", "vocabulary"])
def test_every_column_of_a_panel_is_in_sight_in_a_narrow_dock(qtbot, panel: str) -> None:
    """At 1024x700 a side dock is about 360 px wide: the last columns of the merge tree
    (Merge, Bytes), of the replay (Parts) and of the vocabulary (Kind) were behind a scroll bar."""
    from bpeinspect.gui.panels.merge_tree import MergeTreeBrowser
    from bpeinspect.gui.panels.replay import ReplayWidget
    from bpeinspect.gui.panels.vocabulary import VocabBrowser

    tok = load_tokenizer("cl100k_base")
    if panel == "merge tree":
        widget = MergeTreeBrowser()
        widget.set_tokenizer(tok)
        widget.show_piece(" tokenization")
        views: list[QAbstractItemView] = [widget.down_view, widget.up_view]
    elif panel == "merge replay":
        widget = ReplayWidget()
        widget.set_tokenizer(tok)
        views = [widget.table]
    else:
        widget = VocabBrowser()
        widget.set_tokenizer(tok)
        views = [widget.table]
    qtbot.addWidget(widget)
    widget.resize(360, 650)
    widget.show()
    qtbot.waitExposed(widget)
    for view in views:
        qtbot.waitUntil(lambda v=view: _all_in_sight(v))
        h = header(view)
        assert all(h.sectionSize(c) >= 30 for c in range(h.count()) if not h.isSectionHidden(c))
