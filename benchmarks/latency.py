"""How the window feels: a scripted tour of the real window, offscreen, with a 10 ms stall probe.

The tour loads o200k_base and cl100k_base, opens texts of 1, 5 and 10 MB from files, types in
texts of 100 KB, 1 MB, 5 MB and 10 MB, pastes 1 MB and 3.9 MB, clicks a token, brings the
compare tab forward, sorts and searches the vocabulary, opens the Languages and Training
panels for the first time and runs a small training. For every action it records the
longest gap between ticks of a 10 ms timer on the GUI thread (the *stall*) and how long the
action took to show its result; a keystroke's time runs from the key press to the end of the
paint that shows every pane's new colours, a file's *first paint* from asking for it to the
first paint of its first screen in colour.

Every run is a fresh process (so first-use costs such as importing pyqtgraph count); the tour
runs ``--runs`` times (3) and each figure is the median of the runs. The noise floor of the
probe is 10-13 ms; on a shared machine a busy neighbour adds its own stalls, so say the load
(``uptime``) with the figures.

    QT_QPA_PLATFORM=offscreen python benchmarks/latency.py [--runs 3] [--json] [--only ACTION ...] [--why]

With ``--json`` the last line printed is one JSON object::

    {"keystroke_p95_ms": {"100KB": 0, "1MB": 0, "10MB": 0}, "open_first_paint_ms": {"10MB": 0},
     "worst_stall_ms": {"<action>": 0, ...}, "worst_gui_cpu_ms": {"<action>": 0, ...}}

``worst_gui_cpu_ms`` is the GUI thread's own CPU time between the two probe ticks furthest
apart in CPU: on a machine that other work keeps busy, the stall grows (the GUI thread waits
for a core, or for the interpreter a worker holds) but this does not.

``--why`` samples the GUI thread's Python stack during every stall over 50 ms and prints
where it was (the C++ event loop shows as the tour's own frame); under each action it lists
the workers' C calls and the GC passes that took over 5 ms of CPU (what holds the interpreter
lock) and the GUI thread's callbacks that took over 15 ms, with their CPU time (the rest is
the wait for the lock). It profiles every call, so the times it prints run slow.

``--only`` still sets up the texts the chosen actions need (``--only compare`` compares 1 MB).

``--all-actions`` runs, instead of the tour, every action the window offers, found in the
window itself: each ``QAction`` of its menus and tool bars (and of the menus their buttons
pop up), each dock's tab and each tab of a panel, and each button of every panel (the widget
tree walked), with a text of ``--mb`` MB (10) and three tokenizers open. A checkable one runs
twice (on, then off). The probe ticks every 5 ms. File dialogs answer with the tour's own
files (the text, a vocabulary, a dataset, a corpus), a modal message box is answered by its
first accepting button (Save, the visible part) and a dialog is cancelled; windows an action
opens are closed after it, and the tour goes back to its text and tokenizers. Actions that
would end the tour (Quit) and those disabled or hidden at their turn are skipped, with the
reason printed. With ``--json`` the last line is::

    {"document_bytes": 0, "worst_stall_ms": {"<action>": 0, ...}, "worst_gui_cpu_ms": {"<action>": 0, ...},
     "skipped": {"<action>": "why"}}

each figure the median of the runs' (``worst_gui_cpu_ms``: as in the tour, what a loaded
machine does not inflate). ``--why`` prints under each action where
the GUI thread was during its stalls over 50 ms, and (as in the tour) its callbacks that took
over 15 ms, the workers' long C calls and the GC passes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

KEYS = 30  # keystrokes timed per text size
STALL_PROBE_MS = 10
TEXT_SIZES = {"100KB": 100_000, "1MB": 1_000_000, "5MB": 5_000_000, "10MB": 10_000_000}


def document(size: int) -> str:
    """``size`` bytes of the multilingual welcome text and Python-like code, repeated."""
    from bpeinspect.gui.app import welcome_text

    base = welcome_text() + "\n" + "\n".join(f"def f{i}(x):\n    return x * {i} + len('{i}')\n" for i in range(40))
    reps = size // len(base.encode("utf-8")) + 1
    text = base * reps
    return text[: len(text) * size // len(text.encode("utf-8"))]


class Probe:
    """The longest gap between ticks of a 10 ms timer on the GUI thread, per action; with
    ``why``, a sampler thread records the GUI thread's stack while a tick is overdue."""

    def __init__(self, why: bool = False) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer(interval=STALL_PROBE_MS)
        self.timer.timeout.connect(self.tick)
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.max_gap = self.max_cpu = 0.0
        self.why = why
        self.samples: collections.Counter[str] = collections.Counter()
        self.gui = threading.get_ident()
        self._stop = threading.Event()
        self.timer.start()
        if why:
            threading.Thread(target=self._sample, daemon=True).start()

    def tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.max_gap = max(self.max_gap, now - self.last)
        # the GUI thread's own CPU time between two ticks: what the stall would be on an idle
        # machine (no waiting for a core, nor for the GIL a worker holds)
        self.max_cpu = max(self.max_cpu, cpu - self.last_cpu)
        self.last, self.last_cpu = now, cpu

    def reset(self) -> None:
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.max_gap = self.max_cpu = 0.0

    def _sample(self) -> None:
        while not self._stop.is_set():
            time.sleep(0.005)
            if time.perf_counter() - self.last > 0.05:
                # the GUI thread, and any other thread running Python (it may hold the GIL)
                for ident, frame in sys._current_frames().items():
                    if ident == threading.get_ident():
                        continue
                    stack = traceback.extract_stack(frame)[-4:]
                    if ident != self.gui and stack[-1].name in ("wait", "_wait_for_tstate_lock", "_sample"):
                        continue
                    where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(stack))
                    self.samples[("GUI: " if ident == self.gui else "worker: ") + where] += 1

    def stop(self) -> None:
        self._stop.set()
        self.timer.stop()


def _run_queue_wait() -> float:
    """Seconds this thread has waited runnable for a core (Linux schedstat; 0 elsewhere): the
    wall time of a callback beyond its CPU time and this is mostly the wait for the GIL."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


class LongHolds:
    """``--why``: the cyclic GC's runs and the C calls of workers that took over ``LONG_HOLD``
    of their thread's CPU time (a C call that does not release the interpreter lock stalls the
    GUI thread as long as it runs; the list says which ones ran, not which released the lock).
    CPU time, so that a loaded machine preempting a thread does not make a short call look long."""

    LONG_HOLD = 0.005
    BLOCKING = frozenset({"sleep", "wait", "acquire", "join", "read", "readinto", "stat", "select", "poll"})  # release the lock

    def __init__(self) -> None:
        import gc

        self.events: list[tuple[float, float, str]] = []  # (start, seconds, what)
        self._stacks: dict[int, list] = collections.defaultdict(list)
        self._gc_t = self._gc_cpu = 0.0
        self.main = threading.get_ident()
        gc.callbacks.append(self._on_gc)
        from bpeinspect.gui.concurrency import Worker

        run, profile = Worker.run, self._profile

        def profiled_run(worker, _run=run):  # pool threads are Qt's: threading.setprofile misses them
            sys.setprofile(profile)
            try:
                _run(worker)
            finally:
                sys.setprofile(None)

        Worker.run = profiled_run
        self._gui_depth = 0  # Python frames of a callback from Qt on the GUI thread
        self._gui_start: tuple[float, float, object] | None = None
        self._in_loop = 0
        sys.setprofile(self._gui_profile)

    SLOW_CALLBACK = 0.015

    def _gui_profile(self, frame, event: str, arg) -> None:
        """On the GUI thread: each Python callback Qt makes from the event loop, with its wall
        and CPU time (the wall time beyond the CPU is the wait for the interpreter lock)."""
        if event == "c_call" and getattr(arg, "__name__", "") == "processEvents":
            self._in_loop += 1
        elif event in ("c_return", "c_exception") and getattr(arg, "__name__", "") == "processEvents":
            self._in_loop -= 1
        elif event == "call" and self._in_loop:
            if self._gui_depth == 0:
                self._gui_start = (time.perf_counter(), time.thread_time(), frame, _run_queue_wait())
            self._gui_depth += 1
        elif event == "return" and self._in_loop and self._gui_depth:
            self._gui_depth -= 1
            if self._gui_depth == 0 and self._gui_start is not None:
                t0, c0, fr, q0 = self._gui_start
                wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
                queued = _run_queue_wait() - q0
                if wall > self.SLOW_CALLBACK:
                    code = fr.f_code
                    self.events.append((t0, wall, f"GUI callback {code.co_qualname} ({Path(code.co_filename).name}:{code.co_firstlineno}): wall {wall * 1000:.0f} ms, cpu {cpu * 1000:.0f} ms, waiting for a core {queued * 1000:.0f} ms"))

    def _on_gc(self, phase: str, info: dict) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if phase == "start":
            self._gc_t, self._gc_cpu = now, cpu
        elif cpu - self._gc_cpu > self.LONG_HOLD:
            who = "GUI" if threading.get_ident() == self.main else threading.current_thread().name
            self.events.append((self._gc_t, cpu - self._gc_cpu, f"gc gen{info['generation']} in {who}, {info['collected']} freed"))

    def _profile(self, frame, event: str, arg) -> None:
        if event == "c_call":
            self._stacks[threading.get_ident()].append([time.perf_counter(), arg, frame, True, time.thread_time()])
        elif event == "call":  # Python code runs inside the C call: it lets other threads in
            stack = self._stacks[threading.get_ident()]
            if stack:
                stack[-1][3] = False
        elif event in ("c_return", "c_exception"):
            stack = self._stacks[threading.get_ident()]
            if not stack:
                return
            t0, fn, fr, pure, cpu = stack.pop()
            d = time.thread_time() - cpu
            if pure and d > self.LONG_HOLD and getattr(fn, "__name__", "") not in self.BLOCKING:
                where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(traceback.extract_stack(fr)[-3:]))
                name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
                self.events.append((t0, d, f"{name}() at {where}"))

    def take(self, since: float) -> list[tuple[float, float, str]]:
        got = [e for e in self.events if e[0] >= since]
        self.events.clear()
        return got


class Tour:
    """The scripted actions, each measured with the probe."""

    def __init__(self, why: bool, only: set[str] | None) -> None:
        # before the window starts its worker threads: they take the profile hook when they start
        self.holds = LongHolds() if why else None
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from bpeinspect.gui.app import configure_process
        from bpeinspect.gui.overlay.token_view import TokenView

        self.app = QApplication.instance() or QApplication([])
        configure_process()
        self.tmp = Path(tempfile.mkdtemp(prefix="bpeinspect-latency-"))
        from bpeinspect.gui.window.main_window import MainWindow

        self.win = MainWindow(settings=QSettings(str(self.tmp / "s.ini"), QSettings.Format.IniFormat))
        self.win.resize(1400, 860)
        self.win.show()
        self.only = only
        self.results: dict[str, dict] = {}
        # (end time, view, whether its top line was coloured) of every pane paint
        self.paints: list[tuple[float, object, bool]] = []
        original = TokenView.paintEvent
        paints = self.paints

        def paint(view, e, _orig=original):
            _orig(view, e)
            parts = view.parts
            top = view.firstVisibleBlock().position()
            coloured = parts is not None and view.document().characterCount() > 1000 and parts.part_at_u16(top) is not None
            paints.append((time.perf_counter(), view, coloured))

        TokenView.paintEvent = paint
        self.probe = Probe(why)
        # and the lazy panels' modules imported: the first action must not share the
        # interpreter with the window's own start-up worker
        self.wait(lambda: self.win.is_idle() and not self.win.panels.importing(), 60)

    # -- helpers --------------------------------------------------------------------------------

    def pump(self, seconds: float = 0.0) -> None:
        end = time.perf_counter() + seconds
        self.app.processEvents()
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.001)

    def wait(self, cond, timeout: float = 120.0) -> float:
        start = time.perf_counter()
        self.app.processEvents()
        while not cond():
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"waited {timeout} s")
            self.app.processEvents()
            time.sleep(0.0005)
        return time.perf_counter()

    def wait_idle(self, timeout: float = 300.0) -> float:
        return self.wait(self.win.is_idle, timeout)

    def views(self) -> list:
        return [p.view for p in self.win.panes.panes()]

    def wanted(self, name: str) -> bool:
        return self.only is None or any(o in name for o in self.only)

    def measure(self, name: str, action, *, settle: float = 0.2) -> None:
        """Run ``action()`` (returning extra figures or None) under the probe, until the window
        is idle again and ``settle`` seconds more."""
        if not self.wanted(name):
            return
        self.pump(0.1)
        self.probe.reset()
        t0 = time.perf_counter()
        if self.holds is not None:
            self.holds.take(t0)
        extra = action() or {}
        done = self.wait_idle()
        self.pump(settle)
        self.results[name] = {"stall_ms": self.probe.max_gap * 1000, "ms": (done - t0) * 1000,
                              "gui_cpu_ms": self.probe.max_cpu * 1000, **extra}  # fmt: skip
        print(f"  {name:<38} stall {self.probe.max_gap * 1000:6.0f} ms (GUI cpu {self.probe.max_cpu * 1000:4.0f})"
              f"   took {(done - t0) * 1000:7.0f} ms"
              + "".join(f"   {k} {v:.0f}" for k, v in extra.items()), flush=True)  # fmt: skip
        if self.holds is not None:
            for start, d, what in sorted(self.holds.take(t0), key=lambda e: -e[1])[:12]:
                print(f"      {d * 1000:5.0f} ms at {(start - t0) * 1000:6.0f}: {what}", flush=True)

    def set_text(self, size: int) -> None:
        self.win.set_text(document(size))
        self.wait_idle()
        self.pump(0.2)

    def first_coloured_paint(self, since: float, timeout: float = 60.0) -> float:
        """When the first pane first painted its top line in colour after ``since``."""
        view = self.views()[0]
        found: list[float] = []

        def coloured() -> bool:
            found[:] = [t for t, v, c in self.paints[-50:] if t > since and v is view and c][:1]
            return bool(found)

        self.wait(coloured, timeout)
        return found[0]

    # -- the actions ----------------------------------------------------------------------------------

    def load(self) -> None:
        def act():
            for name in ("o200k_base", "cl100k_base"):
                self.win.open_tokenizer(name)

        self.measure("load o200k and cl100k", act)

    def open_file(self, label: str, size: int) -> None:
        if not self.wanted(f"open {label}"):
            # later actions on this text still want it (``--only compare`` compares 1 MB)
            if any(self.wanted(f"{what} {label}") for what in ("type in the middle of", "click a token in", "compare tab with")):
                self.set_text(size)
            return
        path = self.tmp / f"{label}.txt"
        path.write_text(document(size), encoding="utf-8")
        first = {}

        def act():
            t0 = time.perf_counter()
            self.win.open_text_file(str(path))
            first["first_paint_ms"] = (self.first_coloured_paint(t0) - t0) * 1000
            return first

        self.measure(f"open {label}", act)

    def keystrokes(self, label: str) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QTextCursor
        from PySide6.QtTest import QTest

        name = f"type in the middle of {label}"
        if not self.wanted(name):
            return
        view = self.views()[0]
        view.setFocus()
        cur = view.textCursor()
        cur.setPosition(view.document().characterCount() // 2)
        cur.movePosition(QTextCursor.MoveOperation.EndOfLine)
        view.setTextCursor(cur)
        view.ensureCursorVisible()
        self.wait_idle()
        self.pump(0.3)
        times = []

        def act():
            for k in range(KEYS):
                t0 = time.perf_counter()
                QTest.keyClick(view, Qt.Key.Key_Space if k % 6 == 5 else Qt.Key.Key_X)
                self.wait_idle()
                # recoloured: every pane has painted since its new encoding came
                self.wait(lambda t0=t0: all(any(t > t0 and w is v for t, w, _ in self.paints[-8:]) for v in self.views()), 5)
                times.append(max(t for t, _, _ in self.paints[-8:]) - t0)
                self.pump(0.03)
            times_ms = sorted(x * 1000 for x in times)
            return {"p50_ms": statistics.median(times_ms), "p95_ms": times_ms[int(len(times_ms) * 0.95) - 1]}

        self.measure(name, act)

    def paste(self, label: str, size: int) -> None:
        from PySide6.QtGui import QGuiApplication, QTextCursor

        name = f"paste {label}"
        if not self.wanted(name):
            return
        self.set_text(50_000)
        QGuiApplication.clipboard().setText(document(size))
        view = self.views()[0]
        view.moveCursor(QTextCursor.MoveOperation.End)
        self.measure(name, view.paste)

    def click_token(self, label: str) -> None:
        from PySide6.QtCore import QPointF, Qt
        from PySide6.QtTest import QTest

        if not self.wanted(f"click a token in {label}"):
            return
        view = self.views()[0]
        view.verticalScrollBar().setValue(view.verticalScrollBar().maximum() // 2)
        self.pump(0.2)
        block = view.firstVisibleBlock().next()
        geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
        i = view._token_range(block).start + 2
        rect = view._segments(block, geo, i)[0]

        def act():
            QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPointF(rect.center()).toPoint())

        self.measure(f"click a token in {label}", act, settle=1.0)

    def compare_tab(self, label: str) -> None:
        dock = self.win.panels.docks.get("compare")
        view = self.win.panels.view("compare")
        if dock is None:
            return

        def act():
            dock.raise_()
            self.wait(lambda: not view.busy, 300)

        self.measure(f"compare tab with {label}", act)
        self.win.panels.docks["tree"].raise_()

    def vocabulary(self) -> None:
        from PySide6.QtCore import Qt

        from bpeinspect.gui.panels.vocabulary_model import COL_ID, COL_LEN, COL_SCRIPT

        dock, view = self.win.panels.docks.get("vocab"), self.win.panels.view("vocab")
        if dock is None:
            return
        dock.raise_()
        self.pump(0.3)
        until_done = lambda: self.wait(lambda: not view.busy and not view.debounce.isActive(), 300)  # noqa: E731
        for name, column in (("vocabulary: sort by length", COL_LEN), ("vocabulary: sort by script", COL_SCRIPT)):
            self.measure(name, lambda c=column: (view.table.sortByColumn(c, Qt.SortOrder.AscendingOrder), until_done()) and None)
        self.measure("vocabulary: sort by id", lambda: (view.table.sortByColumn(COL_ID, Qt.SortOrder.AscendingOrder), until_done()) and None)
        self.measure("vocabulary: search", lambda: (view.search.setText("ing"), until_done()) and None)
        self.measure("vocabulary: clear the search", lambda: (view.search.clear(), until_done()) and None)
        self.win.panels.docks["tree"].raise_()

    def panel_first_open(self, key: str, title: str) -> None:
        def act():
            self.win.panels.show(key)
            view = self.win.panels.view(key)
            busy = getattr(view, "busy", None)
            if busy is not None:
                self.wait(lambda: not (busy() if callable(busy) else view.busy), 300)

        self.measure(f"first open of {title}", act, settle=0.5)

    def training(self) -> None:
        name = "a training run (1k merges), to its end"
        if not self.wanted(name):
            return
        ws = self.win.panels.view("training") or self.win.panels.show("training")
        corpus = self.tmp / "corpus.txt"
        corpus.write_text(document(400_000), encoding="utf-8")
        ws.form.corpus.add_paths([str(corpus)])
        self.wait(lambda: not ws.form.corpus.jobs.pending(), 60)
        ws.form.sizes_edit.setText("1k")
        ended: dict[str, float] = {}

        def finished(_outcome: object) -> None:
            ended["t"], ended["stall"], ended["cpu"] = time.perf_counter(), self.probe.max_gap, self.probe.max_cpu
            self.probe.reset()  # from here on: the end (results join the window, texts are encoded)

        ws.trainingFinished.connect(finished)

        def act():
            t0 = time.perf_counter()
            ws.start()
            self.wait(lambda: "t" in ended and not ws.is_running(), 300)
            return {"training_ms": (ended["t"] - t0) * 1000}

        self.measure("end of a training", act, settle=0.5)
        if "end of a training" in self.results:
            self.results[name] = {"stall_ms": ended["stall"] * 1000, "ms": self.results["end of a training"]["training_ms"],
                                  "gui_cpu_ms": ended["cpu"] * 1000}  # fmt: skip

    # -- the tour ---------------------------------------------------------------------------------

    def run(self) -> dict:
        self.load()
        self.set_text(TEXT_SIZES["100KB"])
        self.keystrokes("100KB")
        self.open_file("1MB", TEXT_SIZES["1MB"])
        self.keystrokes("1MB")
        self.click_token("1MB")
        self.compare_tab("1MB")
        self.vocabulary()
        self.paste("1MB", 1_000_000)
        self.paste("3.9MB", 3_900_000)
        self.open_file("5MB", TEXT_SIZES["5MB"])
        self.keystrokes("5MB")
        self.open_file("10MB", TEXT_SIZES["10MB"])
        self.keystrokes("10MB")
        self.set_text(100_000)
        self.panel_first_open("languages", "Languages")
        self.panel_first_open("training", "Training")
        self.training()
        if self.probe.samples:
            print("where the GUI thread was during stalls over 50 ms (samples every 5 ms):")
            for stack, n in self.probe.samples.most_common(25):
                print(f"  {n:4d}  {stack}")
        self.probe.stop()
        return self.results


# -- every action of the window ------------------------------------------------------------------

ALL_ACTIONS_PROBE_MS = 5
ALL_ACTIONS_TOKENIZERS = ("o200k_base", "cl100k_base", "p50k_base")  # open while every action runs
ALL_ACTIONS_BYTES = 10_000_000
ACTION_TIMEOUT = 300.0  # seconds an action may run (a training, a count) before it is cut short
# never run: what they would do ends the tour
DESTRUCTIVE = {"File ▸ Quit": "quits the application"}


def _clean(text: str) -> str:
    return text.replace("&", "").strip()


class DialogDriver:
    """Drives what would block the tour: the file dialogs' static functions answer with files
    of the tour's own, and a modal message box or dialog is answered a moment after it opens
    (a message box by its first accepting button, "Save" or "The visible part"; a dialog is
    cancelled). Non-modal windows an action opens are closed after it."""

    def __init__(self, tmp: Path, files: dict[str, Path]) -> None:
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QFileDialog

        self.tmp, self.files = tmp, files
        self.asked: list[str] = []
        self._n = 0

        def open_one(parent=None, caption="", directory="", filter="", *a, **k):
            self.asked.append(caption)
            return str(self.answer_open(caption)), filter

        def open_many(parent=None, caption="", directory="", filter="", *a, **k):
            self.asked.append(caption)
            return [str(self.answer_open(caption))], filter

        def folder(parent=None, caption="", *a, **k):
            self.asked.append(caption)
            return str(self.files["languages folder" if "language" in caption.lower() else "corpus folder"])

        def save(parent=None, caption="", directory="", filter="", *a, **k):
            self.asked.append(caption)
            self._n += 1
            import re

            found = re.search(r"\*\.(\w+)", filter or "") or re.search(r"\.(\w+)$", directory or "")
            return str(self.tmp / f"out-{self._n}.{found.group(1) if found else 'txt'}"), filter

        QFileDialog.getOpenFileName = staticmethod(open_one)
        QFileDialog.getOpenFileNames = staticmethod(open_many)
        QFileDialog.getExistingDirectory = staticmethod(folder)
        QFileDialog.getSaveFileName = staticmethod(save)
        self.timer = QTimer(interval=40)
        self.timer.timeout.connect(self.answer_modal)
        self.timer.start()

    def answer_open(self, caption: str) -> Path:
        c = caption.lower()
        for word, key in (("dataset", "dataset"), ("tokenizer", "tokenizer"), ("corpus", "corpus"), ("text", "text")):
            if word in c:
                return self.files[key]
        return self.files["text"]

    def answer_modal(self) -> None:
        from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

        w = QApplication.activeModalWidget()
        if isinstance(w, QMessageBox):
            roles = (QMessageBox.ButtonRole.AcceptRole, QMessageBox.ButtonRole.YesRole)
            button = next((b for b in w.buttons() if w.buttonRole(b) in roles), None) or w.defaultButton()
            self.asked.append(f"message box: {w.text()[:60]!r} -> {button.text() if button else 'closed'}")
            if button is not None:
                button.click()
            else:
                w.reject()
        elif isinstance(w, QDialog):
            self.asked.append(f"dialog {w.windowTitle()!r} cancelled")
            w.reject()


class ActionTour:
    """Every action the window offers, found in the window: each ``QAction`` of its menus and
    tool bars (and the menus of their buttons), the tabs of its docks, and each button of
    every panel (its widget tree walked), run one at a time with a long multilingual text and
    three tokenizers open, each under the stall probe until the window is idle again."""

    def __init__(self, only: set[str] | None, size: int = ALL_ACTIONS_BYTES, why: bool = False) -> None:
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from bpeinspect.gui.app import configure_process

        # before the window starts its worker threads: they take the profile hook when they start
        self.holds = LongHolds() if why else None
        self.app = QApplication.instance() or QApplication([])
        configure_process()
        self.only = only
        self.tmp = Path(tempfile.mkdtemp(prefix="bpeinspect-actions-"))
        os.environ["BPEINSPECT_CONFIG_DIR"] = str(self.tmp / "config")  # no recent files of the user's
        self.text = document(size)
        self.files = self._make_files()
        self.driver = DialogDriver(self.tmp, self.files)
        self.results: dict[str, float] = {}
        self.gui_cpu: dict[str, float] = {}  # the GUI thread's own CPU time in its longest stretch
        self.skipped: dict[str, str] = {}
        self.done: set[str] = set()
        self.probe = Probe(why)
        self.probe.timer.setInterval(ALL_ACTIONS_PROBE_MS)
        from bpeinspect.gui.window.main_window import MainWindow

        self.win = MainWindow(settings=QSettings(str(self.tmp / "s.ini"), QSettings.Format.IniFormat))
        self.win.resize(1400, 860)
        self.measure("the window's first show", self.win.show, restore=False)
        if not self.win.isVisible():  # not measured (--only): every action still runs in the shown window
            self.win.show()
        self.wait(lambda: not self.win.panels.importing(), 120)
        for name in ALL_ACTIONS_TOKENIZERS:
            self.win.open_tokenizer(name)
        self.wait(self.settled, 300)
        self.win.set_text(self.text)
        self.wait(self.settled, 600)
        self.baseline_tokenizers = list(self.win.registry.tokenizers())
        self.theme = self.win.appearance.theme

    def _make_files(self) -> dict[str, Path]:
        """The files the dialogs answer with: the text, a vocabulary, a dataset, a corpus."""
        import gzip

        from bpeinspect.core.io.builtins import BUILTINS, resources_dir

        t = self.tmp
        files = {
            "text": t / "text.txt",
            "tokenizer": t / "r50k_base.tiktoken",
            "dataset": t / "chats.jsonl",
            "corpus": t / "corpus.txt",
            "corpus folder": t / "corpus",
            "languages folder": t / "languages",
        }
        files["text"].write_text(self.text, encoding="utf-8")
        spec = BUILTINS["r50k_base"]
        files["tokenizer"].write_bytes(gzip.decompress((resources_dir() / "vocabs" / spec.filename).read_bytes()))
        chats = []
        for i in range(3000):
            msgs = [
                {"role": "user", "content": f"Question {i}: " + self.text[i * 97 : i * 97 + 300]},
                {"role": "assistant", "content": "Answer: " + self.text[i * 89 + 5000 : i * 89 + 5600]},
            ]
            chats.append(json.dumps({"messages": msgs}, ensure_ascii=False))
        files["dataset"].write_text("\n".join(chats) + "\n", encoding="utf-8")
        files["corpus"].write_text(document(400_000), encoding="utf-8")
        for key in ("corpus folder", "languages folder"):
            files[key].mkdir()
        for i in range(5):
            (files["corpus folder"] / f"part{i}.txt").write_text(document(80_000), encoding="utf-8")
        from bpeinspect.gui.app import welcome_text

        for code, line in zip(("eng", "fra", "deu", "rus", "jpn"), welcome_text().splitlines()[:5], strict=False):
            (files["languages folder"] / f"{code}.txt").write_text((line + "\n") * 200, encoding="utf-8")
        return files

    # -- waiting --------------------------------------------------------------------------------

    def pump(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        self.app.processEvents()
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.001)

    def wait(self, cond, timeout: float) -> bool:
        start = time.perf_counter()
        self.app.processEvents()
        while not cond():
            if time.perf_counter() - start > timeout:
                return False
            self.app.processEvents()
            time.sleep(0.0005)
        return True

    def settled(self) -> bool:
        """Nothing loads, encodes, counts, trains or imports panels, the docks have followed the current
        tokenizer, and no modal dialog is open."""
        from PySide6.QtWidgets import QApplication

        from bpeinspect.gui.concurrency import all_idle
        from bpeinspect.gui.turns import pending

        panels, training = self.win.panels, self.win.panels.view("training")
        opening = training is not None and training.pending()  # what a finished run made
        busy = panels.importing() or panels.inspector.pending() or opening or pending()
        busy = busy or QApplication.activeModalWidget() is not None
        return not busy and self.win.is_idle() and all_idle()

    # -- measuring ------------------------------------------------------------------------------

    def wanted(self, name: str) -> bool:
        return self.only is None or any(o.lower() in name.lower() for o in self.only)

    def skip(self, name: str, why: str) -> None:
        if self.wanted(name) and name not in self.skipped and name not in self.results:
            self.skipped[name] = why
            print(f"  {name:<58} skipped: {why}", flush=True)

    def measure(self, name: str, act, *, restore: bool = True) -> None:
        if not self.wanted(name) or name in self.results:
            return
        from PySide6.QtWidgets import QApplication

        before = {w for w in QApplication.topLevelWidgets() if w.isVisible()}
        self.pump(0.1)
        self.driver.asked.clear()
        self.probe.reset()
        t0 = time.perf_counter()
        if self.holds is not None:
            self.holds.take(t0)
        act()
        self.pump(0.1)  # work an action starts after a short delay (a debounce) counts as its own
        finished = self.wait(self.settled, ACTION_TIMEOUT)
        took = time.perf_counter() - t0
        self.pump(0.3)
        stall, cpu = self.probe.max_gap * 1000, self.probe.max_cpu * 1000
        self.results[name] = stall
        self.gui_cpu[name] = cpu
        asked = f"   ({'; '.join(self.driver.asked)})" if self.driver.asked else ""
        cut = "" if finished else f"   (still running after {ACTION_TIMEOUT:.0f} s)"
        print(
            f"  {name:<58} stall {stall:6.0f} ms (GUI cpu {cpu:4.0f})   took {took * 1000:7.0f} ms{cut}{asked}",
            flush=True,
        )
        for stack, n in self.probe.samples.most_common(6):  # --why: where the GUI thread was
            print(f"      {n:4d}  {stack}", flush=True)
        self.probe.samples.clear()
        if self.holds is not None:  # --why: the GUI thread's slow callbacks, the workers' long C calls, GC
            for start, d, what in sorted(self.holds.take(t0), key=lambda e: -e[1])[:8]:
                print(f"      {d * 1000:5.0f} ms at {(start - t0) * 1000:6.0f}: {what}", flush=True)
        for w in QApplication.topLevelWidgets():  # what the action opened beside the window
            from PySide6.QtWidgets import QDockWidget, QMenu

            if w.isVisible() and w not in before and not isinstance(w, (QDockWidget, QMenu)) and w is not self.win:
                w.close()
        if restore:
            self.restore()

    def restore(self) -> None:
        """Back to the tour's state: the three tokenizers, the text, light theme, no zoom."""
        from bpeinspect.gui.window.theme import default_text_size

        win, reg = self.win, self.win.registry
        for tok in reg.tokenizers():
            if tok not in self.baseline_tokenizers:
                reg.remove(tok)
        names = {t.name for t in reg.tokenizers()}
        for name in ALL_ACTIONS_TOKENIZERS:
            if name not in names:
                win.open_tokenizer(name)
        self.wait(lambda: not reg.loading(), 300)
        self.baseline_tokenizers = list(reg.tokenizers())
        for tok in self.baseline_tokenizers:
            if not reg.is_shown(tok):
                reg.set_shown(tok, True)
        if win.text() != self.text:
            win.set_text(self.text)
        if win.appearance.theme != self.theme:
            win.set_theme(self.theme)
        if win.appearance.text_size != default_text_size():
            win.appearance.zoom(0)
        self.wait(self.settled, 600)
        self.pump(0.2)

    # -- finding the actions --------------------------------------------------------------------

    def menu_actions(self) -> list[tuple[str, object]]:
        """(name, QAction) of every menu entry, submenus walked (filled as when they open)."""
        found: list[tuple[str, object]] = []

        def walk(menu, path: list[str]) -> None:
            menu.aboutToShow.emit()
            for act in menu.actions():
                if act.isSeparator():
                    continue
                if act.menu() is not None:
                    walk(act.menu(), [*path, _clean(act.text())])
                else:
                    found.append((" ▸ ".join([*path, _clean(act.text())]), act))

        for top in self.win.menuBar().actions():
            walk(top.menu(), [_clean(top.text())])
        return found

    def toolbar_actions(self) -> list[tuple[str, object]]:
        from PySide6.QtWidgets import QToolBar, QToolButton

        found = []
        for bar in self.win.findChildren(QToolBar):
            for act in bar.actions():
                widget = bar.widgetForAction(act)
                if isinstance(widget, QToolButton) and widget.menu() is not None:
                    menu = widget.menu()
                    menu.aboutToShow.emit()
                    for sub in menu.actions():
                        if not sub.isSeparator():
                            found.append((f"Toolbar ▸ {_clean(widget.text())} ▸ {_clean(sub.text())}", sub))
                elif not act.isSeparator() and act.text():
                    found.append((f"Toolbar ▸ {_clean(act.text())}", act))
                elif isinstance(widget, QToolButton) and widget.text():
                    found.append((f"Toolbar ▸ {_clean(widget.text())}", widget.defaultAction() or widget))
        return found

    def panel_buttons(self, key: str) -> list[tuple[str, object]]:
        """(name, button) of every button of panel ``key`` (its widget tree walked), and the
        entries of the menus those buttons pop up."""
        from PySide6.QtWidgets import QAbstractButton, QToolButton

        dock = self.win.panels.docks[key]
        title = dock.windowTitle()
        found, seen = [], collections.Counter()
        for b in dock.widget().findChildren(QAbstractButton):
            if b.objectName().startswith(("qt_", "Scroll")):
                continue  # Qt's own (a table's corner, a tab bar's arrows)
            label = _clean(b.text()) or _clean(b.toolTip())[:30] or type(b).__name__
            if len(label) <= 2 and b.toolTip():
                label = f"{label} ({_clean(b.toolTip())[:30]})"
            seen[label] += 1
            name = f"{title} ▸ {label}" + (f" #{seen[label]}" if seen[label] > 1 else "")
            if isinstance(b, QToolButton) and b.menu() is not None:
                b.menu().aboutToShow.emit()
                for sub in b.menu().actions():
                    if not sub.isSeparator():
                        found.append((f"{name} ▸ {_clean(sub.text())}", sub))
            else:
                found.append((name, b))
        return found

    def dock_tabs(self) -> list[tuple[str, object]]:
        """Each dock brought forward (its tab clicked) and each tab of a panel's own tab widget."""
        from PySide6.QtWidgets import QTabWidget

        found = []
        for dock in self.win.panels.docks.values():
            if not dock.isFloating():
                found.append((f"Dock tab ▸ {dock.windowTitle()}", lambda d=dock: (d.show(), d.raise_())))
            for tabs in dock.widget().findChildren(QTabWidget):
                for i in range(tabs.count()):
                    name = f"{dock.windowTitle()} ▸ tab {_clean(tabs.tabText(i))}"
                    found.append((name, lambda t=tabs, i=i: t.setCurrentIndex(i)))
        return found

    # -- running them ---------------------------------------------------------------------------

    def run_action(self, name: str, target) -> None:
        """Trigger a QAction or click a button (a checkable one twice: on, then off again)."""
        import shiboken6
        from PySide6.QtWidgets import QAbstractButton

        if name in DESTRUCTIVE:
            self.skip(name, DESTRUCTIVE[name])
            return
        if callable(target) and not hasattr(target, "trigger") and not isinstance(target, QAbstractButton):
            self.measure(name, target)
            return
        if not shiboken6.isValid(target):
            self.skip(name, "gone (an earlier action removed it)")
            return
        if not target.isEnabled():
            self.skip(name, "disabled in this state")
            return
        is_button = isinstance(target, QAbstractButton)
        if is_button and not target.isVisibleTo(target.window()):
            self.skip(name, "hidden in this state")
            return
        press = target.click if is_button else target.trigger
        if target.isCheckable() and not (target.actionGroup() if not is_button else target.group()):
            first = "on" if not target.isChecked() else "off"
            second = "off" if first == "on" else "on"
            self.measure(f"{name} ({first})", press, restore=False)
            if shiboken6.isValid(target) and target.isEnabled():
                self.measure(f"{name} ({second})", press)
            self.done.add(name)
            return
        self.measure(name, press)
        self.done.add(name)

    def extras(self) -> None:
        """What the issue list names beyond a plain click: a running training cancelled, and
        files that are not datasets opened as datasets."""
        ws = self.win.panels.view("training")
        if ws is not None and self.wanted("Training ▸ Cancel a running training"):
            ws.start()
            self.wait(ws.is_running, 30)
            self.pump(0.3)
            self.measure("Training ▸ Cancel a running training", ws.cancel)
        dataset = self.win.panels.view("dataset")
        shared = Path(os.environ.get("BPEINSPECT_SHARED") or ROOT.parent / "shared")
        pdf = self.tmp / "paper.pdf"
        pdf.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" * 200)
        for what, path in (("a tokenizer.json", shared / "vocabs" / "gpt2" / "tokenizer.json"), ("a PDF", pdf)):
            name = f"Dataset ▸ open {what} as a dataset"
            if dataset is None or not path.exists():
                self.skip(name, f"no {path}")
            else:
                self.measure(name, lambda p=path: dataset.open_file(p))

    def run(self) -> dict:
        from PySide6.QtGui import QGuiApplication

        from bpeinspect.core import human_size

        names: dict[int, str] = {}
        for name, act in self.menu_actions() + self.toolbar_actions():
            if id(act) in names:
                continue  # the same QAction in a menu and on a tool bar: run once
            names[id(act)] = name
            if name.startswith("Tokenizers ▸ Add ") and act.isEnabled() is False:
                # already open: close it first, so that adding it is measured
                tok = self.win.registry.find(name.split()[3])
                if tok is not None and self.wanted(name):
                    self.win.registry.remove(tok)
                    self.wait(self.settled, 60)
            self.run_action(name, act)
        # beyond the menus: the editor's paste, and the docks' tabs
        view = self.win.panes.panes()[0].view

        QGuiApplication.clipboard().setText(self.text)  # what another application copied: not timed

        def paste() -> None:
            view.selectAll()
            view.paste()

        self.measure(f"Editor ▸ Paste the {human_size(len(self.text.encode()))} text over itself", paste)
        for name, act in self.dock_tabs():
            self.run_action(name, act)
        for key in list(self.win.panels.docks):
            buttons = self.panel_buttons(key)
            for name, b in buttons:
                self.run_action(name, b)
            for name, b in self.panel_buttons(key):  # what the first pass enabled (Save… after Train)
                if name in self.skipped and name not in self.done:
                    del self.skipped[name]
                    self.run_action(name, b)
        self.extras()
        self.probe.stop()
        size = len(self.text.encode("utf-8"))
        return {
            "document_bytes": size,
            "worst_stall_ms": self.results,
            "worst_gui_cpu_ms": self.gui_cpu,
            "skipped": self.skipped,
        }


def summarize(runs: list[dict]) -> dict:
    """Medians over the runs: keystroke p95, first paint and worst stall per action."""
    names = [n for n in runs[0] if all(n in r for r in runs)]
    med = {n: {k: statistics.median(r[n][k] for r in runs) for k in runs[0][n]} for n in names}
    keys = {label: round(med[f"type in the middle of {label}"]["p95_ms"], 1)
            for label in ("100KB", "1MB", "10MB") if f"type in the middle of {label}" in med}  # fmt: skip
    first = {"10MB": round(med["open 10MB"]["first_paint_ms"], 1)} if "open 10MB" in med else {}
    return {
        "keystroke_p95_ms": keys,
        "open_first_paint_ms": first,
        "worst_stall_ms": {n: round(m["stall_ms"], 1) for n, m in med.items()},
        # beside those figures: the GUI thread's own CPU time in its longest stretch,
        # which a loaded machine does not inflate (see Probe.tick)
        "worst_gui_cpu_ms": {n: round(m["gui_cpu_ms"], 1) for n, m in med.items() if "gui_cpu_ms" in m},
        "_all": med,
    }


def report_all_actions(runs: list[dict], as_json: bool) -> None:
    """The median over the runs of each action's worst stall, worst first; the actions skipped, with why."""
    names = [n for n in runs[0]["worst_stall_ms"] if all(n in r["worst_stall_ms"] for r in runs)]
    med = {n: round(statistics.median(r["worst_stall_ms"][n] for r in runs), 1) for n in names}
    cpu = {n: round(statistics.median(r["worst_gui_cpu_ms"][n] for r in runs), 1) for n in names}
    load = os.getloadavg()[0]
    print(f"\nworst stall of each of {len(med)} actions, median of {len(runs)} runs (load average {load:.1f} now):")
    for name, ms in sorted(med.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:7.0f} ms (GUI cpu {cpu[name]:4.0f})  {name}")
    over = [n for n, ms in med.items() if ms > 50]
    print(f"{len(over)} of {len(med)} actions over 50 ms")
    skipped = {n: why for r in runs for n, why in r["skipped"].items() if n not in med}
    for name, why in skipped.items():
        print(f"  skipped: {name}: {why}")
    if as_json:
        summary = {"document_bytes": runs[0]["document_bytes"], "worst_stall_ms": med, "worst_gui_cpu_ms": cpu}
        print(json.dumps({**summary, "skipped": skipped}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="end with the summary as one JSON line")
    ap.add_argument("--only", nargs="*", help="only actions whose name holds one of these words")
    ap.add_argument("--why", action="store_true", help="sample the GUI thread's stack during stalls")
    ap.add_argument("--all-actions", action="store_true", help="run every action the window offers instead of the tour")
    ap.add_argument("--mb", type=float, default=ALL_ACTIONS_BYTES / 1e6, help="the text's size for --all-actions")
    ap.add_argument("--one-run", metavar="OUT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    only = set(args.only) if args.only else None
    if args.one_run and args.all_actions:
        results = ActionTour(only, int(args.mb * 1e6), args.why).run()
        Path(args.one_run).write_text(json.dumps(results))
        os._exit(0)
    if args.one_run:
        results = Tour(args.why, only).run()
        Path(args.one_run).write_text(json.dumps(results))
        os._exit(0)  # skip Qt's teardown of a window with running workers
    runs = []
    for n in range(args.runs):
        print(f"run {n + 1} of {args.runs}:", flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        cmd = [sys.executable, "-P", __file__, "--one-run", out] + (["--why"] if args.why else [])
        cmd += ["--all-actions", "--mb", str(args.mb)] if args.all_actions else []
        cmd += ["--only", *args.only] if args.only else []
        subprocess.run(cmd, check=True)
        runs.append(json.loads(Path(out).read_text()))
        os.unlink(out)
    if args.all_actions:
        report_all_actions(runs, args.json)
        return
    summary = summarize(runs)
    print(f"\nmedians of {len(runs)} runs (load average {os.getloadavg()[0]:.1f} now):")
    for name, m in summary["_all"].items():
        extra = "".join(f"  {k} {v:.0f}" for k, v in m.items() if k not in ("stall_ms", "ms"))
        print(f"  {name:<38} stall {m['stall_ms']:6.0f} ms  took {m['ms']:7.0f} ms{extra}")
    del summary["_all"]
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
