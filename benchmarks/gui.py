"""How the main window feels with big texts, measured offscreen.

* **open 1 MB**: ``set_text`` of a 1 MB document until every pane is coloured (the encode
  finished and the views were painted), for o200k_base and cl100k_base stacked;
* **scroll**: the time of each repaint while paging through that document (what scrolling
  costs the GUI thread), and the longest event-loop gap while encoding it;
* **typing**: keystrokes in a 100 KB document, from the insert until the pane shows the new
  encoding (incremental re-encode + repaint), next to one full encode of the same text by
  bpeinspect and by tiktoken (the reference), so the ratio says what re-encoding only the
  edited lines saves.

    QT_QPA_PLATFORM=offscreen python benchmarks/gui.py [--keys 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import tiktoken  # noqa: E402
from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

from bpeinspect.core.io.builtins import BUILTINS, resources_dir  # noqa: E402
from bpeinspect.gui.app import configure_process, welcome_text  # noqa: E402
from bpeinspect.gui.window.main_window import MainWindow  # noqa: E402


def document(size: int) -> str:
    """``size`` bytes of the multilingual welcome text and Python-like code, repeated."""
    base = welcome_text() + "\n" + "\n".join(f"def f{i}(x):\n    return x * {i} + len('{i}')\n" for i in range(40))
    reps = size // len(base.encode("utf-8")) + 1
    text = base * reps
    return text[: len(text) * size // len(text.encode("utf-8"))]


def reference(tok) -> tiktoken.Encoding:
    """tiktoken over the same (bundled) vocabulary, so the benchmark works offline."""
    import gzip
    import tempfile

    spec = BUILTINS[tok.name]
    with tempfile.NamedTemporaryFile(suffix=".tiktoken") as f:
        f.write(gzip.decompress((resources_dir() / "vocabs" / spec.filename).read_bytes()))
        f.flush()
        ranks = load_tiktoken_bpe(f.name, expected_hash=spec.sha256)
    return tiktoken.Encoding(
        tok.name, pat_str=tok.split_rule.pattern, mergeable_ranks=ranks, special_tokens=spec.special_tokens
    )


def wait_idle(app: QApplication, win: MainWindow) -> None:
    app.processEvents()
    while not win.is_idle():
        app.processEvents()
        time.sleep(0.0005)
    app.processEvents()


class Probe:
    """Longest gap between ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.timer = QTimer(interval=5)
        self.timer.timeout.connect(self.tick)
        self.last = 0.0
        self.max_gap = 0.0

    def tick(self) -> None:
        now = time.perf_counter()
        if self.last:
            self.max_gap = max(self.max_gap, now - self.last)
        self.last = now


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=60, help="keystrokes to time")
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    configure_process()  # as the app does
    win = MainWindow(settings=QSettings(str(Path("/tmp") / "bpeinspect-bench.ini"), QSettings.Format.IniFormat), panels=())
    win.resize(1100, 800)
    win.show()
    for name in ("o200k_base", "cl100k_base"):
        win.open_tokenizer(name)
    wait_idle(app, win)

    big = document(1 << 20)
    probe = Probe()
    first_colour: list[float] = []
    win.encoder.partial.connect(lambda tok, enc: first_colour.append(time.perf_counter()))
    t0 = time.perf_counter()
    win.set_text(big)
    set_text = time.perf_counter() - t0
    probe.timer.start()
    wait_idle(app, win)
    for pane in win.panes.panes():
        pane.view.viewport().repaint()
    opened = time.perf_counter() - t0
    probe.timer.stop()
    counts = {p.tok.name: len(p.view.enc.ids) for p in win.panes.panes()}
    top = (min(first_colour) - t0) * 1000 if first_colour else float("nan")
    print(
        f"open 1 MB ({len(big):,} chars, tokens {counts}): top of the text coloured after {top:.0f} ms, "
        f"all of it after {opened * 1000:.0f} ms "
        f"(the set_text call itself {set_text * 1000:.0f} ms: the text goes in a slice per turn); "
        f"longest event-loop gap after it "
        f"{probe.max_gap * 1000:.0f} ms"
    )

    paints = []
    pane = win.panes.panes()[0]
    sb = pane.view.verticalScrollBar()
    for step in range(40):
        sb.setValue(step * sb.maximum() // 40)
        t = time.perf_counter()
        for p in win.panes.panes():
            p.view.viewport().repaint()
        paints.append((time.perf_counter() - t) / len(win.panes.panes()))
    print(
        f"scroll: full-viewport repaint per pane median {statistics.median(paints) * 1000:.1f} ms, "
        f"max {max(paints) * 1000:.1f} ms (1100x800 window, two panes)"
    )

    doc = document(100 << 10)
    win.set_text(doc)
    wait_idle(app, win)
    cur = QTextCursor(win.document)
    keys = []
    for k in range(args.keys):
        cur.setPosition(len(doc) // 2 + k)
        t = time.perf_counter()
        cur.insertText("x" if k % 7 else " ")
        wait_idle(app, win)  # includes the repaints Qt and the views asked for
        keys.append(time.perf_counter() - t)
    modes = {e.result.mode for e in win.registry.entries()}
    text = win.text()
    full = []
    ref = []
    tok = win.registry.find("o200k_base")
    enc_ref = reference(tok)
    for _ in range(5):
        t = time.perf_counter()
        tok.encode_with_offsets(text)
        full.append(time.perf_counter() - t)
        t = time.perf_counter()
        enc_ref.encode(text, allowed_special="all")
        ref.append(time.perf_counter() - t)
    med = statistics.median(keys)
    p95 = sorted(keys)[int(len(keys) * 0.95) - 1]
    print(
        f"typing in 100 KB ({len(text):,} chars), two tokenizers, {args.keys} keys ({', '.join(sorted(modes))}): "
        f"keystroke to coloured median {med * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"
    )
    print(
        f"  one full o200k encode of that text: bpeinspect with offsets {statistics.median(full) * 1000:.1f} ms, "
        f"tiktoken ids only {statistics.median(ref) * 1000:.1f} ms; keystroke / tiktoken full encode = "
        f"{med / statistics.median(ref):.2f}x"
    )


if __name__ == "__main__":
    main()
