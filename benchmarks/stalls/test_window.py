"""The event loop keeps running while big work happens in workers.

A probe timer ticks every 5 ms on the GUI thread and records the longest gap between
ticks; the gap is the longest the window would have been frozen.
"""

from __future__ import annotations

import gc
import threading
import time

import pytest
from PySide6.QtCore import QTimer

from bpeinspect.core import load_tokenizer
from bpeinspect.core.io import builtins as catalog
from tests.gui.conftest import wait_idle

MAX_STALL = 0.050  # seconds


class StallProbe:
    """The longest gap between ticks of a 5 ms timer, and what the cyclic GC did meanwhile
    (reported with a failure: a full collection is one way to stall every thread)."""

    def __init__(self) -> None:
        self.timer = QTimer(interval=5)
        self.timer.timeout.connect(self.tick)
        self.last = 0.0
        self.max_gap = 0.0
        self.max_at = 0.0
        self.ticks = 0
        self.start = 0.0
        self.gc_runs: list[tuple[float, float, int]] = []  # (start, seconds, generation)
        self._gc_t = 0.0

    def tick(self) -> None:
        now = time.perf_counter()
        if self.last and now - self.last > self.max_gap:
            self.max_gap, self.max_at = now - self.last, now
        self.last = now
        self.ticks += 1

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_t = time.perf_counter()
        else:
            self.gc_runs.append((self._gc_t, time.perf_counter() - self._gc_t, info["generation"]))

    def report(self) -> str:
        """A line for an assertion message: the gap, when, and the GC runs that overlapped it."""
        lo = self.max_at - self.max_gap
        gcs = [f"gen{g} {d * 1000:.0f} ms" for t, d, g in self.gc_runs if t < self.max_at and t + d > lo]
        return (
            f"the event loop stalled {self.max_gap * 1000:.0f} ms, ending {(self.max_at - self.start) * 1000:.0f} ms "
            f"into the probe; GC meanwhile: {', '.join(gcs) or 'none'}"
        )

    def __enter__(self) -> StallProbe:
        self.last = 0.0
        self.start = time.perf_counter()
        gc.callbacks.append(self._on_gc)
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.stop()
        gc.callbacks.remove(self._on_gc)


def require_quiet_machine(qtbot) -> None:
    """Skip when the machine alone would fail the probe.

    With other processes keeping every core busy (the CI machine is shared), a thread that
    holds the interpreter lock is preempted by the OS while holding it, and the GUI thread
    waits however long the scheduler decides. So first measure the probe next to a plain
    pure-Python busy thread, which stalls the loop only through that effect: if that alone
    breaks the limit, the numbers would say nothing about our workers.
    """
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(500))

    worker = threading.Thread(target=busy, daemon=True)
    with StallProbe() as baseline:
        worker.start()
        qtbot.wait(600)
    stop.set()
    worker.join()
    if baseline.max_gap > MAX_STALL:
        pytest.skip(
            f"the machine is too busy to measure stalls (a plain busy thread: {baseline.max_gap * 1000:.0f} ms)"
        )


@pytest.fixture
def small_window(window):
    # the probe is about the workers; a small window keeps our own painting (measured in
    # benchmarks/gui.py) from dominating the gaps on a loaded machine
    window.resize(700, 420)
    return window


ATTEMPTS = 3  # a shared machine can preempt a worker holding the GIL; one clean run proves the design


def best_of_attempts(attempt) -> None:
    """Run ``attempt(number)``, which returns its :class:`StallProbe`, until one run stays under
    :data:`MAX_STALL` (at most :data:`ATTEMPTS` runs); fail with the best run's report."""
    probes = []
    for number in range(ATTEMPTS):
        probe = attempt(number)
        assert probe.ticks > 20
        probes.append(probe)
        if probe.max_gap < MAX_STALL:
            return
    best = min(probes, key=lambda p: p.max_gap)
    assert best.max_gap < MAX_STALL, f"best of {len(probes)} runs: " + best.report()


@pytest.mark.slow
def test_loading_o200k_does_not_stall(qtbot, small_window):
    window = small_window
    require_quiet_machine(qtbot)

    def attempt(_: int) -> StallProbe:
        for tok in window.registry.tokenizers():
            window.registry.remove(tok)
        catalog.forget_builtins()
        with StallProbe() as probe:
            window.open_tokenizer("o200k_base")
            qtbot.waitUntil(lambda: len(window.registry) == 1, timeout=60000)
            wait_idle(qtbot, window, timeout=60000)
        return probe

    try:
        best_of_attempts(attempt)
    finally:
        catalog.forget_builtins()
        load_tokenizer("o200k_base")


@pytest.mark.slow
def test_encoding_5mb_does_not_stall(qtbot, small_window):
    window = small_window
    window.open_tokenizer("cl100k_base")
    wait_idle(qtbot, window)
    line = "The quick brown fox jumps over the lazy dog — Grüße, Привет, 日本語 😀 1234.\n"
    base = line * (5_000_000 // len(line.encode("utf-8")) + 1)
    require_quiet_machine(qtbot)

    def attempt(number: int) -> StallProbe:
        text = base + f"attempt {number}\n"
        window.set_text(text)  # the encode starts on the next event-loop turn, inside the probe
        with StallProbe() as probe:
            wait_idle(qtbot, window, timeout=120000)
        pane = window.panes.panes()[0]
        assert len(pane.view.enc.ids) == len(pane.tok.encode_ordinary(text))
        return probe

    best_of_attempts(attempt)
