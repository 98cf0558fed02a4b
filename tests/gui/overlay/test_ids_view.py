"""The ids strip after an edit: it repaints only when the cells on screen change,
so a keystroke far below them costs it no paint."""

from __future__ import annotations

from bpeinspect.gui.overlay.ids_view import IdsView


class Source:
    """Ids read a stretch at a time, changed in place (as a LiveEncoding is)."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def ids_between(self, first: int, end: int) -> tuple[list[int], bytearray]:
        return self.ids[first:end], bytearray(len(self.ids[first:end]))


def test_an_edit_below_the_cells_on_screen_repaints_nothing(qtbot):
    view = IdsView()
    qtbot.addWidget(view)
    view.resize(300, 120)
    view.show()
    qtbot.waitExposed(view)
    src = Source(list(range(5000)))
    view.set_ids(src, n_vocab=100_000)
    painted = []
    real = view.paintEvent
    view.paintEvent = lambda e: painted.append(1) or real(e)
    qtbot.waitUntil(lambda: bool(painted))
    assert view.verticalScrollBar().value() == 0  # the first rows are on screen
    painted.clear()
    src.ids[4000:4001] = [7, 8]  # a keystroke far below: one more token
    view.set_ids(src, n_vocab=100_000)
    qtbot.wait(50)
    assert painted == []
    assert view.verticalScrollBar().maximum() > 0  # the strip knows the new length all the same
    src.ids[3] = 99  # on screen
    view.set_ids(src, n_vocab=100_000)
    qtbot.waitUntil(lambda: bool(painted))
