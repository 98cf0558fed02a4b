"""The languages panel never freezes the window: opening it, counting the UDHR, drawing every page.

pyqtgraph, the counting and the tables are imported on the worker, the UDHR is counted there,
and the plots are built a page per event-loop turn and drawn in steps; a 10 ms probe timer on
the GUI thread records the longest gap between its ticks.
"""

from __future__ import annotations

import os

import pytest

from benchmarks.stalls.test_window import StallProbe, best_of_attempts, require_quiet_machine
from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.panels.languages.view import PAGES
from bpeinspect.gui.panels.specs import PANELS
from tests.gui.conftest import wait_idle

PROBE_MS = 10


def _window(qtbot, settings):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=settings, panels=PANELS)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    for name in ("r50k_base", "cl100k_base"):
        win.open_tokenizer(name)
    wait_idle(qtbot, win, timeout=60000)
    return win


@pytest.mark.slow
def test_opening_languages_on_the_udhr_does_not_stall(qtbot, settings):
    # the count's pool children compete for the cores with whatever else runs: with more runnable
    # processes than cores the GUI thread waits for the scheduler, not for us
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        pytest.skip(f"the machine is too busy to measure stalls (load average {load:.1f})")
    require_quiet_machine(qtbot)

    def attempt(_: int) -> StallProbe:
        win = _window(qtbot, settings)
        try:
            with StallProbe() as probe:
                probe.timer.setInterval(PROBE_MS)
                win.commands["panels.languages"].trigger()
                view = win.panels.view("languages")
                with qtbot.waitSignal(view.statsReady, timeout=180000) as counted:
                    pass
                assert len(counted.args[0].corpus) == 527 and len(counted.args[0].tokenizers) == 2
                for key in PAGES:
                    view.show_page(key)
                    page = view.page(key)
                    if getattr(page, "is_drawing", lambda: False)():
                        with qtbot.waitSignal(page.drawn, timeout=30000):
                            pass
                    qtbot.wait(150)  # its paint
        finally:
            win.close()
            Worker.shutdown()
        return probe

    best_of_attempts(attempt)
