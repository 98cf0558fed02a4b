"""Training as the app does it: in a child process, against the core trainer in this process.

The app's training workspace runs :class:`~bpeinspect.core.train.process.ProcessTrainingRun`
(a child ``python``, reports over a pipe, the tokenizers built here) so that the window never
waits on the trainer for the interpreter lock. This measures what that costs, interleaved
round by round on the same corpus files, merges checked to be identical:

* ``in-process``: ``train_tokenizer(iter_corpus(paths))`` in this process;
* ``child``: ``ProcessTrainingRun(paths)``, all reports read, ``tokenizer()`` built;
* ``workspace``: the whole :class:`~bpeinspect.gui.training.workspace.TrainingWorkspace` (offscreen),
  from ``start()`` to its ``trainingFinished`` signal, live plots included.

    QT_QPA_PLATFORM=offscreen python benchmarks/train_app.py [--rounds 3] [--vocab 16384]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpeinspect.core import train_tokenizer  # noqa: E402
from bpeinspect.core.train.corpus import iter_corpus  # noqa: E402
from bpeinspect.core.train.process import ProcessTrainingRun  # noqa: E402
from tests.paths import SHARED  # noqa: E402


def synthetic(path: Path, n_bytes: int) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.gui.training.test_workspace import synthetic_corpus

    path.write_text(synthetic_corpus(n_bytes), encoding="utf-8")
    return path


def in_process(paths: list[Path], vocab: int):
    return train_tokenizer(iter_corpus(paths, "gpt4"), vocab, pattern="gpt4")


def child(paths: list[Path], vocab: int):
    run = ProcessTrainingRun(paths, vocab, pattern="gpt4")
    for _ in run.reports():
        pass
    run.close()
    return run.tokenizer()


def workspace_runner():
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.app import configure_process
    from bpeinspect.gui.registry import TokenizerRegistry
    from bpeinspect.gui.training.workspace import TrainingWorkspace

    app = QApplication.instance() or QApplication([])
    configure_process()  # as the app does

    def run(paths: list[Path], vocab: int):
        reg = TokenizerRegistry()
        ws = TrainingWorkspace(reg)
        ws.resize(1200, 780)
        ws.show()
        ws.form.corpus.add_paths(paths)
        while ws.form.corpus.is_summarizing():
            app.processEvents()
        ws.form.sizes_edit.setText(str(vocab))
        done = []
        ws.trainingFinished.connect(done.append)
        t0 = time.perf_counter()
        assert ws.start(), ws.message.text()
        while not done:
            app.processEvents()
            time.sleep(0.001)
        seconds = time.perf_counter() - t0
        while ws.is_running():
            app.processEvents()
        tok = reg.current()
        ws.shutdown()
        ws.deleteLater()
        app.processEvents()
        return tok, seconds

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--vocab", type=int, default=16384)
    p.add_argument("--mb", type=float, default=3.0, help="size of the synthetic corpus")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp())
    corpora = {
        "taylorswift.txt (186 kB)": [SHARED / "corpora" / "taylorswift.txt"],
        f"synthetic Latin/Cyrillic words ({args.mb:g} MB)": [synthetic(tmp / "synthetic.txt", int(args.mb * 1e6))],
    }
    ws_run = workspace_runner() if os.environ.get("QT_QPA_PLATFORM") else None
    for name, paths in corpora.items():
        times: dict[str, list[float]] = {"in-process": [], "child": [], "workspace": []}
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            ref = in_process(paths, args.vocab)
            times["in-process"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tok = child(paths, args.vocab)
            times["child"].append(time.perf_counter() - t0)
            assert tok.merges == ref.merges, "child process merges differ"
            if ws_run is not None:
                tok, seconds = ws_run(paths, args.vocab)
                times["workspace"].append(seconds)
                assert tok.merges == ref.merges, "workspace merges differ"
        base = statistics.median(times["in-process"])
        print(f"{name}, vocab {args.vocab:,} ({len(ref.merges):,} merges):")
        for what, ts in times.items():
            if ts:
                med = statistics.median(ts)
                print(f"  {what:<11} {med:7.2f} s   ({med / base:.2f}x in-process)")


if __name__ == "__main__":
    main()
