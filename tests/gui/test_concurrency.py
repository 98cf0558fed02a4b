"""The one worker: results on the GUI thread by signals, cancelling, generators, "latest wins"."""

from __future__ import annotations

import threading
import time
import weakref
from typing import ClassVar

import pytest
from PySide6.QtCore import QThread, QThreadPool
from PySide6.QtWidgets import QApplication

from bpeinspect.core import Cancelled
from bpeinspect.gui import concurrency
from bpeinspect.gui.concurrency import PROGRESS_INTERVAL, Jobs, Typing, Worker, all_idle


def gui_thread():
    return QApplication.instance().thread()


def test_a_function_returns_on_the_gui_thread(qtbot):
    threads = []
    worker = Worker(lambda a, b: (threads.append(threading.get_ident()), a + b)[1], 40, 2)
    seen = []
    worker.signals.returned.connect(lambda v: seen.append((v, QThread.currentThread())))
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        worker.start()
    assert seen == [(42, gui_thread())]
    assert threads[0] != threading.get_ident()


def test_errors_come_one_way_and_finished_comes_last(qtbot):
    worker = Worker(lambda: 1 / 0)
    events = []
    worker.signals.errored.connect(lambda exc: events.append(type(exc).__name__))
    worker.signals.returned.connect(lambda v: events.append("returned"))
    worker.signals.finished.connect(lambda: events.append("finished"))
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        worker.start()
    assert events == ["ZeroDivisionError", "finished"]


def test_a_generator_yields_and_returns(qtbot):
    def count(n):
        yield from range(n)
        return "done"

    worker = Worker(count, 5)
    got = []
    worker.signals.yielded.connect(got.append)
    with qtbot.waitSignal(worker.signals.returned, timeout=5000) as blocker:
        worker.start()
    assert got == [0, 1, 2, 3, 4] and blocker.args == ["done"]


def test_cancel_closes_a_generator_between_steps(qtbot):
    started, closed = threading.Event(), threading.Event()

    def forever():
        try:
            while True:
                started.set()
                yield 1
                time.sleep(0.001)
        finally:
            closed.set()

    worker = Worker(forever)
    with qtbot.waitSignal(worker.signals.aborted, timeout=5000):
        worker.start()
        assert started.wait(5)
        worker.cancel()
    assert closed.is_set()


def test_a_generator_that_takes_should_stop_ends_itself_and_keeps_its_result(qtbot):
    """What a training does: cancel asks, and the partial result still comes back."""

    def train(should_stop):
        done = 0
        while not should_stop():
            done += 1
            yield done
            time.sleep(0.001)
        return f"partial after {done}"

    worker = Worker(train)
    worker.signals.yielded.connect(lambda n: n >= 3 and worker.cancel())
    with qtbot.waitSignal(worker.signals.returned, timeout=5000) as blocker:
        worker.start()
    assert blocker.args[0].startswith("partial after")


def test_cancel_reaches_should_stop_and_cancelled_ends_as_aborted(qtbot):
    started = threading.Event()

    def slow(should_stop):
        started.set()
        while not should_stop():
            time.sleep(0.001)
        raise Cancelled()

    worker = Worker(slow)
    with qtbot.waitSignal(worker.signals.aborted, timeout=5000):
        worker.start()
        assert started.wait(5)
        worker.cancel()


def test_progress_is_throttled_and_the_last_one_arrives(qtbot):
    def busy(progress):
        for i in range(1, 2001):
            progress(i, 4000)  # never reaches the total: the last one is flushed at the end
        return "ok"

    worker = Worker(busy)
    seen = []
    worker.signals.progressed.connect(lambda d, n: seen.append(d))
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        worker.start()
    assert seen[-1] == 2000 and len(seen) < 50
    assert PROGRESS_INTERVAL > 0


def test_report_hands_values_out_as_yielded(qtbot):
    worker = Worker(lambda report: (report("half"), "all")[1])
    got = []
    worker.signals.yielded.connect(got.append)
    with qtbot.waitSignal(worker.signals.returned, timeout=5000):
        worker.start()
    assert got == ["half"]


def test_jobs_latest_wins(qtbot):
    jobs = Jobs()
    results, stopped = [], []
    gate, started = threading.Event(), threading.Event()

    def old(should_stop):
        started.set()
        gate.wait(5)
        stopped.append(should_stop())
        return "old"  # ignores the stop: its result must still be dropped

    jobs.submit("enc", old, on_returned=results.append)
    assert started.wait(5)
    with qtbot.waitSignal(jobs.busyChanged, timeout=5000, check_params_cb=lambda busy: not busy):
        jobs.submit("enc", lambda: "new", on_returned=results.append)
        gate.set()
    assert results == ["new"] and stopped == [True]


def test_jobs_cancel_all_delivers_nothing(qtbot):
    jobs = Jobs()
    results = []
    with qtbot.waitSignal(jobs.busyChanged, timeout=5000, check_params_cb=lambda busy: not busy):
        jobs.submit("a", lambda: (time.sleep(0.05), "a")[1], on_returned=results.append)
        jobs.submit("b", lambda: "b", on_returned=results.append)
        jobs.cancel_all()
    assert results == [] and not jobs.is_busy()


def test_workers_stay_alive_until_delivered_and_then_let_go_of_their_slots(qtbot):
    class Big:
        pass

    big = Big()
    held = weakref.ref(big)
    worker = Worker(lambda: 7)
    worker.signals.returned.connect(lambda value, big=big: None)  # a slot holding a tokenizer, say
    serial = worker.serial
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        worker.start()
        del worker, big  # only the class-level table holds it now
    qtbot.waitUntil(lambda: serial not in Worker._live and held() is None, timeout=5000)
    assert all_idle()


class _LatePoolThread(Worker):
    """A worker whose pool thread is held up after its last signal (a busy machine, or a thread
    waiting for the interpreter lock) until ``go`` is set, and that notes the thread it is
    freed on."""

    freed: ClassVar[list[int]] = []

    def __init__(self, fn):
        super().__init__(fn)
        self.go = threading.Event()

    def run(self):
        super().run()
        self.go.wait(30.0)

    def __del__(self):
        _LatePoolThread.freed.append(threading.get_ident())


def test_a_worker_is_freed_on_the_gui_thread_when_its_pool_thread_lets_go_last(qtbot):
    # it holds its signals, a QObject of the GUI thread: freed on the pool thread, they were
    # destroyed there (while the GUI thread might delete them too: a SIGSEGV at times)
    _LatePoolThread.freed.clear()
    pool = QThreadPool()
    for _ in range(3):
        worker = _LatePoolThread(lambda: 7)
        go, serial = worker.go, worker.serial
        with qtbot.waitSignal(worker.signals.finished, timeout=5000):
            worker.start(pool)
        del worker
        qtbot.waitUntil(lambda s=serial: s not in Worker._live, timeout=5000)  # delivered and released
        go.set()  # now the pool thread deletes the runnable
        qtbot.waitUntil(lambda: pool.activeThreadCount() == 0, timeout=5000)
    qtbot.waitUntil(lambda: len(_LatePoolThread.freed) == 3, timeout=5000)
    assert _LatePoolThread.freed == [threading.get_ident()] * 3


def test_shutdown_waits_for_a_pool_thread_that_has_not_let_go_of_a_delivered_worker(qtbot):
    pool = QThreadPool()
    worker = _LatePoolThread(lambda: 7)
    with qtbot.waitSignal(worker.signals.finished, timeout=5000):
        worker.start(pool)
    qtbot.waitUntil(lambda: worker.serial not in Worker._live, timeout=5000)
    assert pool.activeThreadCount() == 1  # held up after delivering
    threading.Timer(0.05, worker.go.set).start()
    assert Worker.shutdown(5000)  # at quit: no thread may still touch Python objects
    assert pool.activeThreadCount() == 0


def test_shutdown_cancels_every_job_in_every_pool(qtbot):
    pool = QThreadPool()
    ended = []

    def slow(should_stop):
        while not should_stop():
            time.sleep(0.001)
        ended.append(True)
        raise Cancelled()

    for p in (None, pool):
        Worker(slow).start(p)
    assert Worker.shutdown(5000)
    assert ended == [True, True]


def test_release_encoding_empties_lists(cl100k):
    from bpeinspect.gui.window.encoder import release_encoding

    enc = cl100k.encode_with_offsets("some text " * 10_000)
    n = len(enc.ids)
    assert release_encoding(enc, step=1000, budget=3)  # something left after three slices
    assert len(enc.ids) == n - 3000
    assert not release_encoding(enc, step=1000)
    assert enc.ids == [] and enc.piece_spans == []


def test_a_worker_gives_way_until_the_gui_thread_beats_again(qtbot, monkeypatch):
    monkeypatch.setattr(concurrency, "GIVE_WAY_FOR", 30.0)  # only a beat ends the wait here
    hb = concurrency._heartbeat
    hb.start()
    try:
        hb.last -= 1.0  # the GUI thread is late: busy, or waiting for the interpreter
        stale = hb.last
        seen = []
        worker = threading.Thread(target=lambda: (concurrency.give_way(), seen.append(hb.last)))
        worker.start()
        qtbot.waitUntil(lambda: bool(seen), timeout=10000)  # the event loop turns: the heartbeat beats
        worker.join()
        assert seen[0] != stale  # it waited for the beat
    finally:
        hb.stop()


def test_a_gui_thread_that_does_not_beat_is_waited_for_once(qtbot, monkeypatch):
    monkeypatch.setattr(concurrency, "GIVE_WAY_FOR", 0.05)
    real_sleep, sleeps = time.sleep, []
    monkeypatch.setattr(concurrency.time, "sleep", lambda s: (sleeps.append(s), real_sleep(s)))
    hb = concurrency._heartbeat
    hb.start()
    try:
        hb.last -= 1.0
        waits = []

        def work():
            for _ in range(3):
                n = len(sleeps)
                concurrency.give_way()
                waits.append(len(sleeps) - n)

        work_on_the_gui_thread = len(sleeps)
        concurrency.give_way()  # the GUI thread never waits for its own beat
        assert len(sleeps) == work_on_the_gui_thread
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()  # the GUI thread blocks here, as it would waiting for the worker: no beat
        assert waits[0] > 0 and waits[1:] == [0, 0]
        assert hb.waited_out == hb.last
    finally:
        hb.stop()


def test_the_heartbeat_beats_only_while_workers_live(qtbot):
    hb = concurrency._heartbeat
    gate = threading.Event()
    worker = Worker(gate.wait)
    with qtbot.waitSignal(worker.signals.finished, timeout=10000):
        worker.start()
        assert hb.running
        gate.set()
    qtbot.waitUntil(lambda: not Worker._live, timeout=30000)  # workers of earlier tests deliver too
    assert not hb.running


def test_a_background_job_pauses_while_the_user_types(qtbot):
    """Work nobody waits for (the merge tree's index of a 200k vocabulary) stops at
    its checks while edits come, so that it never shares the interpreter with a keystroke."""
    typing = Typing(quiet=0.4)
    steps: list[float] = []

    def work(should_stop):
        for _ in range(3):
            should_stop()
            steps.append(time.monotonic())

    typing.note()
    typed = time.monotonic()
    jobs = Jobs()
    jobs.submit("index", work, paused_by=typing)
    qtbot.wait(150)
    assert steps == []  # still waiting for the typing to pause
    typing.note()  # another keystroke: the wait starts over
    typed = time.monotonic()
    qtbot.waitUntil(lambda: len(steps) == 3, timeout=5000)
    assert steps[0] >= typed + 0.4
    plain = Jobs()
    ran = []
    typing.note()
    with qtbot.waitSignal(plain.ended, timeout=5000):
        plain.submit("encode", lambda should_stop: ran.append(should_stop()))
    assert ran == [False]  # a job that is waited for goes on while the user types


def test_a_job_waits_only_for_the_typing_it_is_paused_by(qtbot):
    here, elsewhere = Typing(quiet=30.0), Typing(quiet=30.0)
    elsewhere.note()  # typing in another text
    jobs = Jobs()
    ran = []
    with qtbot.waitSignal(jobs.ended, timeout=5000):
        jobs.submit("index", lambda should_stop: ran.append(should_stop()), paused_by=here)
    assert ran == [False]


def test_a_background_job_paused_by_typing_still_cancels(qtbot):
    typing = Typing(quiet=30.0)
    typing.note()
    jobs = Jobs()
    stopped = []
    worker = jobs.submit("index", lambda should_stop: stopped.append(should_stop()), paused_by=typing)
    qtbot.wait(50)
    assert stopped == []
    worker.cancel()
    qtbot.waitUntil(lambda: not jobs.is_busy(), timeout=2000)  # long before the typing pause ends
    assert stopped == [True]


def test_a_job_paused_by_typing_waits_while_the_typing_is_held_without_any_edit(qtbot):
    typing = Typing(quiet=0.0)
    typing.hold(True)  # a big text is being encoded
    jobs = Jobs()
    ran = []
    jobs.submit("index", lambda should_stop: ran.append(should_stop()), paused_by=typing)
    qtbot.wait(150)
    assert ran == []  # no edit, but held
    with qtbot.waitSignal(jobs.ended, timeout=5000):
        typing.hold(False)
    assert ran == [False]


@pytest.mark.parametrize("change", ["value", "range", "reset"])
def test_a_progress_bar_repaints_with_the_window_not_in_the_callback_that_moves_it(qtbot, change):
    """QProgressBar repaints at once when its value moves: a paint of the window's waiting
    regions too, inside the worker's progress callback. The shared bar waits for the next paint."""
    from PySide6.QtCore import QEvent, QObject

    from bpeinspect.gui.concurrency import ProgressBar

    bar = ProgressBar()
    qtbot.addWidget(bar)
    bar.setRange(0, 100)
    bar.show()
    qtbot.waitExposed(bar)
    bar.setValue(10)
    qtbot.wait(50)
    painted: list[int] = []

    class Count(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                painted.append(bar.value())
            return False

    counter = Count()
    bar.installEventFilter(counter)
    {"value": lambda: bar.setValue(60), "range": lambda: bar.setRange(50, 200), "reset": bar.reset}[change]()
    assert painted == []
    want = bar.value()
    qtbot.waitUntil(lambda: bool(painted))
    assert painted[-1] == want


def test_a_worker_waits_out_a_gui_stretch_longer_than_a_new_plot_and_its_paint(qtbot):
    """A worker gave up waiting after 50 ms; the GUI thread's longest stretches (a new plot and
    the paint after it) are longer, and two workers that went on in the middle of one made it
    take 250-400 ms. A worker now waits for a heartbeat 100 ms late."""
    hb = concurrency._heartbeat
    hb.start()
    try:
        hb.last -= 1.0
        stale = hb.last
        seen = []
        worker = threading.Thread(target=lambda: (concurrency.give_way(), seen.append(hb.last)))
        worker.start()
        time.sleep(0.1)  # the GUI thread busy for 100 ms, its event loop not turning
        assert not seen  # the worker still waits
        qtbot.waitUntil(lambda: bool(seen), timeout=10000)
        worker.join()
        assert seen[0] != stale  # it went on at the beat
    finally:
        hb.stop()


def test_jobs_of_a_deleted_view_deliver_nothing_to_it(qtbot):
    """A chat panel deleted while its template lookup ran was called back on its deleted combo
    box: an error in the event loop. The jobs of a view deleted go with it."""
    from PySide6.QtWidgets import QWidget

    owner = QWidget()
    jobs = Jobs(owner)
    started, calls = threading.Event(), []

    def slow() -> str:
        started.set()
        time.sleep(0.2)
        return "done"

    jobs.submit("lookup", slow, on_returned=calls.append, on_errored=calls.append)
    assert started.wait(5)
    owner.deleteLater()
    qtbot.waitUntil(lambda: Worker.running_count() == 0, timeout=5000)
    qtbot.wait(50)
    assert calls == []
