"""Dataset counting (``bpeinspect-cli stats --jsonl``, the GUI's dataset mode) against token
statistics of the same text (``bpeinspect-cli stats FILE``), under two tokenizers.

The dataset is ~``--mb`` MB of chat records in JSON Lines: conversations of 2 to 7 messages
(a system message in a third of them, then user and assistant in turn) whose contents are
pieces of 40 to 2,000 characters of distinct text (files of this Python installation, as in
``encode.py --large``). The same contents, one after another with a newline between them, are
the text file ``stats`` measures. Dataset counting also parses the JSON, renders each
conversation with the tokenizer's chat template (gpt-4/gpt-4o ChatML) and gives each token
to its message. Each run loads fresh tokenizers (empty pre-token caches); both jobs use the
same process count (default: one per CPU). The target: the dataset within 2x the time of
the text.

    python benchmarks/dataset.py [--mb 100] [--rounds 3] [-j N] [--tokenizers o200k_base,cl100k_base]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encode import large_text  # noqa: E402

from bpeinspect.core.analysis.samples import Sample  # noqa: E402
from bpeinspect.core.analysis.stats import compute_stats  # noqa: E402
from bpeinspect.core.dataset import Target, count_dataset  # noqa: E402
from bpeinspect.core.io.builtins import load_builtin  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_dataset(megabytes: float, folder: Path) -> tuple[Path, Path, int, int]:
    """The JSONL dataset and the text file of its contents; their sizes and the record count."""
    text = large_text(megabytes * 0.9)  # JSON escapes and keys add about a tenth
    rng = random.Random(20)
    data, plain = folder / "chats.jsonl", folder / "contents.txt"
    pos, records, contents = 0, 0, []
    with open(data, "w", encoding="utf-8") as f:
        while pos < len(text):
            n = rng.randint(2, 7)
            roles = (["system"] if rng.random() < 1 / 3 else []) + ["user", "assistant"] * 4
            msgs = []
            for role in roles[:n]:
                size = rng.randint(40, 2000)
                piece, pos = text[pos : pos + size], pos + size
                if piece:
                    msgs.append({"role": role, "content": piece})
                    contents.append(piece)
            if msgs:
                f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
                records += 1
    plain.write_text("\n".join(contents), encoding="utf-8")
    return data, plain, records, sum(len(c) for c in contents)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-j", "--processes", type=int, default=None, help="processes for both jobs (default: one per CPU)")
    ap.add_argument("--tokenizers", default="o200k_base,cl100k_base")
    args = ap.parse_args()
    names = args.tokenizers.split(",")
    print(f"cpus: {os.cpu_count()}, processes: {args.processes or 'one per CPU'}, load average before: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        data, plain, records, chars = write_dataset(args.mb, Path(tmp))
        mb_data, mb_text = data.stat().st_size / 1e6, plain.stat().st_size / 1e6
        print(f"dataset: {mb_data:.1f} MB of JSONL, {records:,} chat records; the same contents as text: "
              f"{mb_text:.1f} MB ({chars:,} characters); tokenizers: {', '.join(names)}")  # fmt: skip
        times: dict[str, list[float]] = {"text": [], "dataset": []}
        for r in range(args.rounds):
            toks = [(n, load_builtin(n)) for n in names]
            t0 = time.perf_counter()
            table = compute_stats(toks, [Sample("contents", plain)], processes=args.processes)
            times["text"].append(time.perf_counter() - t0)
            toks = [(n, load_builtin(n)) for n in names]
            t0 = time.perf_counter()
            stats = count_dataset(data, [Target(n, t, spec=n) for n, t in toks], processes=args.processes)
            times["dataset"].append(time.perf_counter() - t0)
            assert stats.records == records and stats.skipped == 0
            text_tokens = {row.tokenizer: row.tokens for row in table.rows}
            content_tokens = {t.label: sum(t.parts.values()) for t in stats.tokenizers}
            print(f"  round {r + 1} (load {load()}): text {times['text'][-1]:.1f} s, dataset {times['dataset'][-1]:.1f} s"
                  f" = {times['dataset'][-1] / times['text'][-1]:.2f}x; tokens of the text {text_tokens}, "
                  f"of the messages' contents {content_tokens}")  # fmt: skip
        text_s, data_s = statistics.median(times["text"]), statistics.median(times["dataset"])
        print(f"median of {args.rounds} rounds: text {text_s:.1f} s ({mb_text / text_s:.1f} MB/s), "
              f"dataset {data_s:.1f} s ({mb_data / data_s:.1f} MB/s of JSONL): **{data_s / text_s:.2f}x** (target <= 2x)")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
