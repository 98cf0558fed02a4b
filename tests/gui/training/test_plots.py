"""The training plots stay cheap to repaint as a run grows: a long run's curves are drawn
from at most a few thousand points, and growing the axes does not relabel them (a relabel
relays the plot out, which paused the window for 40 ms during a 16k training)."""

from __future__ import annotations

import numpy as np
import pytest

from bpeinspect.core import TrainedMerge
from bpeinspect.gui.training.plots import MAX_POINTS, TrainingPlots


@pytest.fixture
def plots(qtbot):
    p = TrainingPlots()
    qtbot.addWidget(p)
    p.resize(1000, 300)
    p.show()
    p.reset([1024, 4096, 16384])
    qtbot.waitUntil(lambda: p.bpt_plot is not None, timeout=5000)  # made once shown
    return p


def merges(start: int, n: int) -> list[TrainedMerge]:
    return [TrainedMerge(r, 97, 98, 256 + r, max(1, 100000 // (r + 1)), b"ab") for r in range(start, start + n)]


def test_long_run_curves_are_drawn_from_few_points_that_keep_their_shape(plots):
    n = 16128
    rng = np.random.default_rng(3)
    bpt = np.linspace(1.0, 4.3, n) + rng.random(n) * 0.01
    plots.add_points(list(zip(range(257, 257 + n), bpt.tolist(), strict=True)))
    plots.add_merges(merges(0, n))
    plots.redraw()
    for curve, xs, ys in ((plots.bpt_curve, np.arange(257, 257 + n), bpt),):
        x, y = curve.getData()
        assert len(x) <= 2 * MAX_POINTS + 2
        assert x[0] == xs[0] and 0 <= xs[-1] - x[-1] <= n // MAX_POINTS + 1
        assert y.min() == ys.min() and y.max() == ys.max()
    x, _ = plots.counts_curve.getData()
    assert len(x) <= 2 * MAX_POINTS + 2


def test_growing_the_axes_does_not_relay_their_labels_out(plots, monkeypatch):
    plots.add_merges(merges(0, 10))
    plots.redraw()
    relabels = []
    for plot in (plots.counts_plot, plots.bpt_plot):
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            monkeypatch.setattr(axis, "_updateLabel", lambda a=axis: relabels.append(a))
    done = 10
    for step in (1000, 4000, 11000):
        plots.add_merges(merges(done, step))
        plots.add_points([(256 + r, 1.0 + r / 5000) for r in range(done, done + step)])
        done += step
        plots.redraw()
        assert plots.counts_plot.getAxis("bottom").range[1] >= done  # the x axis did grow
    assert relabels == []


def test_in_a_narrow_panel_the_plots_stack_and_neither_is_cut_off(qtbot):
    """Beside a 1920 px window the training panel is about 628 px wide: the second plot ran
    past the right edge."""
    from bpeinspect.gui.training.plots import TrainingPlots

    w = TrainingPlots()
    qtbot.addWidget(w)
    w.resize(260, 400)
    w.show()
    qtbot.waitUntil(lambda: w.bpt_plot is not None, timeout=5000)
    qtbot.wait(20)
    for plot in (w.counts_plot, w.bpt_plot):
        assert plot.geometry().right() < w.width()
    assert w.counts_plot.geometry().bottom() < w.bpt_plot.geometry().top()  # one above the other
    w.resize(900, 400)
    qtbot.wait(20)
    assert w.counts_plot.geometry().right() < w.bpt_plot.geometry().left()  # side by side when wide


def test_the_plots_are_made_after_the_panel_first_paints_one_per_turn(qtbot, monkeypatch):
    """Made as the panel was built, the first plot came in the turn of the panel's first paint,
    and the two together held the GUI thread for over 50 ms."""
    from PySide6.QtCore import QCoreApplication, QTimer

    w = TrainingPlots()
    qtbot.addWidget(w)
    w.resize(900, 300)
    QCoreApplication.processEvents()
    assert w.counts_plot is None  # not shown yet: nothing made
    made_at_paint = []
    real = TrainingPlots.paintEvent

    def paint(self, event):
        made_at_paint.append(self.counts_plot is not None)
        real(self, event)

    monkeypatch.setattr(TrainingPlots, "paintEvent", paint)
    w.show()
    turns = []
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: turns.append((w.counts_plot is not None, w.bpt_plot is not None)))
    ticker.start()
    qtbot.waitUntil(lambda: w.bpt_plot is not None, timeout=5000)
    ticker.stop()
    assert made_at_paint and made_at_paint[0] is False  # the first paint came before any plot
    assert (True, False) in turns  # a turn with one plot made, the other still to come


def test_points_that_come_before_the_plots_are_made_are_kept_and_drawn_once_they_are(qtbot):
    """A run in a training panel behind another tab made both plots at its first progress: 45 ms
    on the GUI thread. The points and axes are kept, and drawn when the panel first paints."""
    w = TrainingPlots()
    qtbot.addWidget(w)
    w.reset([1024, 4096])
    w.add_merges(merges(0, 300))
    w.add_points([(257 + r, 1.0 + r / 100) for r in range(300)])
    w.redraw()
    assert w.counts_plot is None and w.bpt_plot is None
    w.resize(1000, 300)
    w.show()
    qtbot.waitUntil(lambda: w.bpt_plot is not None, timeout=5000)
    x, y = w.counts_curve.getData()
    assert x[0] == 0 and x[-1] == 299
    x, y = w.bpt_curve.getData()
    assert x[0] == 257 and y.max() == pytest.approx(1.0 + 299 / 100)
    top = w.bpt_plot.getViewBox().viewRange()[1][1]
    assert top >= y.max()  # the axis grew for the points kept
    assert [line.value() for line in w.size_lines] == [1024, 4096]


def test_before_any_run_the_axes_show_their_usual_ranges(qtbot):
    w = TrainingPlots()
    qtbot.addWidget(w)
    w.resize(1000, 300)
    w.show()
    qtbot.waitUntil(lambda: w.bpt_plot is not None, timeout=5000)
    low, high = w.bpt_plot.getViewBox().viewRange()[1]
    assert low == pytest.approx(1.0, abs=0.05) and high == pytest.approx(2.0, abs=0.05)  # bytes per token
    low, high = w.counts_plot.getViewBox().viewRange()[1]
    assert low == pytest.approx(0.0, abs=0.1) and high == pytest.approx(4.0, abs=0.1)  # log10 of a count
