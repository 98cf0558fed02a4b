"""The whole of a big document encoded in the window, against the core's own encode of it.

For each size (5, 10, 20, 40 and 64 MB of the latency tour's multilingual document), a fresh
process per tokenizer (o200k_base, cl100k_base) times the core's own single-thread encode of
the text with a fresh copy of it (cold: every distinct pre-token merged once); then another
fresh process opens the window with both, opens the text as a file and times it until the
window is idle: every token counted and coloured in every pane. It then types in the middle of
the text. Printed per size:

- *until idle* and per MB, and its ratio to the slower tokenizer's core time (the target is at
  most 2: the window encodes on child processes, every tokenizer at once);
- *first paint*: the first screen in colour;
- *worst stall*: the longest gap between ticks of the tour's 10 ms timer on the GUI thread
  while the text went in and was encoded, and the GUI thread's own CPU time in that gap;
- *keystroke p95* after the whole text was encoded.

    QT_QPA_PLATFORM=offscreen python benchmarks/document.py [--sizes 5 10 20 40 64] [--json] [--why]

``--why`` (as in ``latency.py``) prints where the GUI thread was during stalls over 50 ms, its
callbacks that took long, the cyclic GC's runs and the workers' long C calls; it slows the
window down, so its figures are not the ones to compare.

The core is timed in a process of its own, not in the window's: there its encode of 64 MB took
two to four times as long (cl100k_base: 33 s alone, 67 s after o200k_base, against 15-19 s in a
fresh process), much of it the cyclic garbage collector. The window freezes the objects it has
built (``gc.freeze``), and CPython then finds its oldest generation nearly empty, so that a
full collection runs at about every tenth collection of the middle one: 196 of them (12 s) during
a 64 MB encode, 60 during a 20 MB one, where a fresh process runs one at most; each walks the encode's
own lists of millions of items as they grow, so their cost grows with the square of the size.
(``encode_with_offsets`` now holds the collector off for a long text, but a fresh process
still keeps the window's heap and caches out of the core's figure.)
Each tokenizer has its own process, so that neither inherits the other's memory.

Per MB figures grow with the size if anything is worse than linear. On a shared machine the
times grow with its load (say ``uptime`` with them); the ratio to the core, measured minutes
apart, holds better. Each row says the window's peak memory, and its JSON the core's: at 64 MB
the core's encode peaked at 6.9 GB (o200k_base) and 7.3 GB (cl100k_base), the window's run at
4.0 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SIZES_MB = (5, 10, 20, 40, 64)
TOKENIZERS = ("o200k_base", "cl100k_base")


def core_seconds(mb: int, name: str) -> float:
    """Seconds of one cold encode of the ``mb`` MB document by a fresh copy of tokenizer
    ``name``, in this process (a fresh one: see the module; :func:`peak_mb` then says its
    memory at its peak)."""
    from encode import fresh
    from latency import document

    text = document(mb * 1_000_000)
    tok = fresh(name)
    t0 = time.perf_counter()
    tok.encode_with_offsets(text)
    return time.perf_counter() - t0


def peak_mb() -> float:
    """This process's largest resident memory so far, in MB (Linux counts it in KB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_child(*args: str) -> dict:
    """What this script prints as JSON when run with ``args`` in a fresh process."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        subprocess.run([sys.executable, "-P", __file__, *args, "--out", out], check=True)
        return json.loads(Path(out).read_text())
    finally:
        os.unlink(out)


def app_fonts() -> None:
    """The fonts as the app starts with them: its bundled Noto fonts loaded, installed Noto
    fonts preferred (lines of scripts with tall marks, the text's Arabic and Hindi, then take
    their own font, as they do in the app)."""
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.overlay.glyphs import load_bundled_fonts, prefer_noto

    running = QApplication.instance()
    app = running if isinstance(running, QApplication) else QApplication([])
    load_bundled_fonts()
    app.setFont(prefer_noto(app.font()))


def one_size(mb: int, why: bool = False) -> dict[str, float]:
    from latency import TEXT_SIZES, Tour

    label = f"{mb}MB"
    TEXT_SIZES[label] = mb * 1_000_000
    app_fonts()
    tour = Tour(why=why, only=None)
    tour.load()
    tour.wait_idle()
    tour.open_file(label, mb * 1_000_000)
    tour.keystrokes(label)
    if tour.probe.samples:
        print("where the GUI thread was during stalls over 50 ms (samples every 5 ms):")
        for stack, n in tour.probe.samples.most_common(25):
            print(f"  {n:4d}  {stack}")
    opened, typed = tour.results[f"open {label}"], tour.results[f"type in the middle of {label}"]
    idle = opened["ms"] / 1000
    return {
        "mb": mb,
        "until_idle_s": idle,
        "per_mb_s": idle / mb,
        "first_paint_ms": opened["first_paint_ms"],
        "worst_stall_ms": opened["stall_ms"],
        "worst_gui_cpu_ms": opened["gui_cpu_ms"],
        "keystroke_p95_ms": typed["p95_ms"],
        "keystroke_worst_stall_ms": typed["stall_ms"],
        "peak_mb": peak_mb(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES_MB), help="sizes in MB")
    ap.add_argument("--json", action="store_true", help="end with the rows as one JSON line")
    ap.add_argument("--why", action="store_true", help="say where the GUI thread was during stalls")
    ap.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--core", nargs=2, metavar=("MB", "TOKENIZER"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.core:
        seconds = core_seconds(int(args.core[0]), args.core[1])
        Path(args.out).write_text(json.dumps({"s": seconds, "peak_mb": peak_mb()}))
        return
    if args.one_size:
        Path(args.out).write_text(json.dumps(one_size(args.one_size, args.why)))
        os._exit(0)  # skip Qt's teardown of a window with running workers
    rows = []
    print(f"{'size':>6} {'until idle':>10} {'per MB':>7} {'o200k':>7} {'cl100k':>7} {'to core':>7} "
          f"{'1st paint':>9} {'stall':>6} {'(cpu)':>6} {'key p95':>7} {'peak':>8}", flush=True)  # fmt: skip
    for mb in args.sizes:
        core = {name: in_child("--core", str(mb), name) for name in TOKENIZERS}
        r = in_child("--one-size", str(mb), *(["--why"] if args.why else []))
        r["to_core"] = r["until_idle_s"] / max(c["s"] for c in core.values())
        r.update({f"core_{name}_s": c["s"] for name, c in core.items()})
        r.update({f"core_{name}_peak_mb": c["peak_mb"] for name, c in core.items()})
        rows.append(r)
        print(
            f"{mb:4d} MB {r['until_idle_s']:9.1f}s {r['per_mb_s']:6.2f}s {r['core_o200k_base_s']:6.1f}s "
            f"{r['core_cl100k_base_s']:6.1f}s {r['to_core']:6.2f}x {r['first_paint_ms']:7.0f}ms "
            f"{r['worst_stall_ms']:4.0f}ms {r['worst_gui_cpu_ms']:4.0f}ms {r['keystroke_p95_ms']:5.1f}ms "
            f"{r['peak_mb'] / 1024:6.1f}GB",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.1f} now")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
