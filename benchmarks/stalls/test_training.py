"""Training in the window keeps the event loop running: the GUI thread never works 50 ms at a
stretch while a run trains to 1k, 4k and 16k in its child process."""

from __future__ import annotations

import os
import time

import pytest

from benchmarks.stalls.test_window import MAX_STALL, StallProbe
from bpeinspect.gui.training.workspace import TrainingWorkspace
from tests.gui.training.test_workspace import add_corpus, shoot, wait_stopped


class WhereProbe(StallProbe):
    """The main view's stall probe, also noting how much of each gap the GUI thread itself
    was busy (its CPU time) and what the workspace was showing at the longest gap and at the
    GUI thread's longest stretch of work."""

    def __init__(self, ws: TrainingWorkspace) -> None:
        super().__init__()
        self.ws = ws
        self.where = ""
        self.busy = 0.0  # GUI thread CPU time within the longest gap
        self.max_busy = 0.0  # the most CPU time the GUI thread spent between two ticks
        self.busy_where = ""
        self._cpu: float | None = None
        self.gaps: list[float] = []

    def _where(self) -> str:
        r = self.ws.last_report
        where = "before the first report" if r is None else f"after a {r.phase} report at merge {r.merges_done}"
        return where + ("" if self.ws.is_running() else " (finished)")

    def tick(self) -> None:
        cpu = time.thread_time()
        busy = 0.0 if self._cpu is None else cpu - self._cpu
        if self.last:
            self.gaps.append((time.perf_counter() - self.last, busy))
        self._cpu = cpu
        if busy > self.max_busy:
            self.max_busy, self.busy_where = busy, self._where()
        before = self.max_gap
        super().tick()
        if self.max_gap > before:
            self.busy = busy
            self.where = self._where()


def probe_training(qtbot, ws: TrainingWorkspace) -> WhereProbe:
    """Train to 1k, 4k and 16k under a probe; the run must finish whole."""
    reports = []
    ws.progressed.connect(reports.append)
    with WhereProbe(ws) as probe, qtbot.waitSignal(ws.trainingFinished, timeout=120000):
        assert ws.start()
    wait_stopped(qtbot, ws, 30000)
    ws.progressed.disconnect(reports.append)
    assert len(reports) > 10 and reports[-1].merges_done == 16000 - 256
    assert probe.ticks > 100
    return probe


@pytest.mark.slow
def test_training_does_not_stall_the_event_loop(qtbot, ws, big_corpus, tmp_path):
    # Training runs in a child process. (The fallback for when none can start, a thread, is
    # not held to this: sharing the interpreter lock it stalls the loop 100-250 ms at times.)
    assert not ws.in_process
    add_corpus(qtbot, ws, big_corpus)
    ws.form.sizes_edit.setText("1k, 4k, 16k")
    # The GUI thread itself never works 50 ms at a stretch: best of three runs, like the other
    # stall tests (one run on a busy machine can go over where a quiet run stays well under).
    tries = []
    for _ in range(3):
        probe = probe_training(qtbot, ws)
        tries.append(f"{probe.max_busy * 1000:.0f} ms {probe.busy_where}")
        if probe.max_busy < MAX_STALL:
            break
    assert probe.max_busy < MAX_STALL, f"the GUI thread worked at a stretch: {'; '.join(tries)}"
    what = f"{probe.max_gap * 1000:.0f} ms {probe.where}, the GUI thread busy {probe.busy * 1000:.0f} ms of it"
    # On a busy machine the OS sometimes does not run the GUI thread for a while even when
    # our process is idle (the GUI thread was not busy in such a gap), so two
    # such gaps are let pass; the stalls this catches (training or plot rebuilding in the way)
    # came every few reports and lasted 0.3-3 s.
    gaps = sorted(probe.gaps)
    worst = ", ".join(f"{g * 1000:.0f} ms (busy {b * 1000:.0f})" for g, b in gaps[-5:])
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        # next to other work on every core the gaps measure the scheduler; the GUI thread's
        # own work is judged above
        pytest.skip(f"the machine is too busy to judge the event loop's gaps (load average {load:.1f}): {worst}")
    assert gaps[-3][0] < MAX_STALL, f"the event loop stalled three times or more: {worst}"
    assert probe.max_gap < 4 * MAX_STALL, f"the event loop stalled {what}"
    shoot(ws, tmp_path, "training-16k.png")
