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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="end with the summary as one JSON line")
    ap.add_argument("--only", nargs="*", help="only actions whose name holds one of these words")
    ap.add_argument("--why", action="store_true", help="sample the GUI thread's stack during stalls")
    ap.add_argument("--one-run", metavar="OUT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one_run:
        results = Tour(args.why, set(args.only) if args.only else None).run()
        Path(args.one_run).write_text(json.dumps(results))
        os._exit(0)  # skip Qt's teardown of a window with running workers
    runs = []
    for n in range(args.runs):
        print(f"run {n + 1} of {args.runs}:", flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            out = f.name
        cmd = [sys.executable, "-P", __file__, "--one-run", out] + (["--why"] if args.why else [])
        cmd += ["--only", *args.only] if args.only else []
        subprocess.run(cmd, check=True)
        runs.append(json.loads(Path(out).read_text()))
        os.unlink(out)
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
