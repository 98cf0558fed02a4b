"""Vocabulary views: opening the table, searches, unreachable scans, merge-graph linking.

The unreachable scan is run twice on each built-in, interleaved: once with bpeinspect's
encoder (``core.vocab.unreachable_tokens``) and once with the same loop over tiktoken's
encoder (its ``_encode_single_piece`` and ``encode_ordinary``), and the ratio is printed.
"Open table" is ``VocabBrowser.set_tokenizer`` plus showing and painting the window.

    QT_QPA_PLATFORM=offscreen python benchmarks/vocab.py [--rounds 3]
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

from bpeinspect.core import Tokenizer, load_tokenizer  # noqa: E402
from bpeinspect.core.analysis.vocab import TokenQuery, VocabIndex, unreachable_tokens  # noqa: E402
from tests.reference import tiktoken_encoding  # noqa: E402

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]
QUERIES = {
    "text ' the'": TokenQuery(text=" the"),
    "regex \\p{Han}{2}": TokenQuery(text=r"\p{Han}{2}", mode="regex"),
    "script Cyrillic (cold)": TokenQuery(script="Cyrillic"),
    "length 10-12": TokenQuery(min_len=10, max_len=12),
}


def tiktoken_unreachable(name: str) -> int:
    enc = tiktoken_encoding(name)
    n = 0
    for bts, i in enc._mergeable_ranks.items():
        if enc._encode_single_piece(bts) != [i]:
            n += 1
            continue
        try:
            text = bts.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if enc.encode_ordinary(text) != [i]:
            n += 1
    return n


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.panels.vocabulary import VocabBrowser

    app = QApplication.instance() or QApplication([])
    print(f"{'tokenizer':12} {'measure':28} {'seconds':>9}")
    for name in NAMES:
        tok = load_tokenizer(name)
        opens = []
        for _ in range(args.rounds):
            w = VocabBrowser()
            w.resize(1200, 700)
            t = time.perf_counter()
            w.set_tokenizer(tok)
            w.show()
            w.repaint()
            app.processEvents()
            opens.append(time.perf_counter() - t)
            w.close()
        print(f"{name:12} {'open table (median)':28} {statistics.median(opens):9.3f}")
        ix = VocabIndex(tok)
        for label, q in QUERIES.items():
            dt, rows = timed(lambda q=q, ix=ix: ix.search(q))
            print(f"{name:12} {'search ' + label:28} {dt:9.3f}  ({len(rows)} rows)")
        ours, theirs = [], []
        for _ in range(args.rounds):
            dt, found = timed(lambda tok=tok: unreachable_tokens(tok))
            ours.append(dt)
            dt2, n = timed(lambda name=name: tiktoken_unreachable(name))
            theirs.append(dt2)
            assert n == len(found), (n, len(found))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:12} {'unreachable scan, ours':28} {a:9.3f}  ({len(found)} tokens)")
        print(f"{name:12} {'same scan with tiktoken':28} {b:9.3f}  (ours/tiktoken = {a / b:.2f}x)")
        fresh = Tokenizer(tok.mergeable_ranks, pattern=tok.split_rule, special_tokens=tok.special_tokens)
        dt, _ = timed(fresh.merge_graph.compute_all)
        print(f"{name:12} {'merge_graph.compute_all':28} {dt:9.3f}")


if __name__ == "__main__":
    main()
