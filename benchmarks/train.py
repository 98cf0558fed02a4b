"""Training speed: bpeinspect against Hugging Face ``tokenizers`` (Rust) and against minbpe.

1. ~10 MB of the running Python's standard library sources (each file one document), vocab
   32,768, the GPT-4 pattern given as a string, as users type it (``--preset`` passes the
   preset's name instead): ``tokenizers``' BpeTrainer and ``train_tokenizer(tie_break="hf")``
   run in this process, interleaved round by round; the merges are checked to be identical
   and the median wall times compared. ``tie_break="first-seen"`` (minbpe's) is timed too.
2. ``taylorswift.txt`` with minbpe's three reference settings: our time against the seconds
   minbpe took (from ``shared/reference/minbpe-taylorswift-merges.json``), merges checked.

    python benchmarks/train.py [--rounds 3] [--mb 10] [--vocab 32768] [--preset] [--skip-stdlib]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers  # noqa: E402

from bpeinspect.core import PRESETS, TrainingProgress, train_tokenizer  # noqa: E402
from tests.paths import SHARED  # noqa: E402


def stdlib_sources(megabytes: float) -> list[str]:
    """Python files of the running interpreter's standard library, sorted by path, until
    ``megabytes`` of UTF-8 are collected (site-packages excluded)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out, total = [], 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append(text)
        total += len(text.encode("utf-8"))
        if total >= megabytes * 1e6:
            break
    return out


def _byte_of() -> dict[str, int]:
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}


def hf_train(docs: list[str], vocab: int, pattern: str) -> list[tuple[bytes, bytes]]:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab, min_frequency=0, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(docs, trainer)
    byte_of = _byte_of()
    merges = json.loads(tok.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return [(bytes(byte_of[c] for c in a), bytes(byte_of[c] for c in b)) for a, b in pairs]


def ours_train(docs: list[str], vocab: int, tie_break: str, pattern: str) -> tuple[list[tuple[bytes, bytes]], float]:
    """Our merges and the seconds spent counting (the rest of the wall time is merging)."""
    start = time.perf_counter()
    first_merge = [0.0]

    def progress(r: TrainingProgress) -> None:
        if r.phase != "counting" and not first_merge[0]:
            first_merge[0] = time.perf_counter() - start

    tok = train_tokenizer(docs, vocab, pattern=pattern, tie_break=tie_break, progress=progress)
    return [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in tok.merges], first_merge[0]


def bench_stdlib(rounds: int, megabytes: float, vocab: int, preset: bool) -> None:
    docs = stdlib_sources(megabytes)
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    given = "the preset name 'gpt4'" if preset else "the GPT-4 pattern as a string"
    print(f"corpus: {len(docs)} stdlib files of {sys.version.split()[0]}, {nbytes / 1e6:.2f} MB; vocab {vocab:,}; {given}")
    times: dict[str, list[float]] = {"tokenizers (Rust)": [], "bpeinspect hf": [], "bpeinspect first-seen": []}
    counting: dict[str, list[float]] = {"bpeinspect hf": [], "bpeinspect first-seen": []}
    pattern = PRESETS["gpt4"].pattern
    expected = None
    for r in range(rounds):
        for label, spent in times.items():
            t0 = time.perf_counter()
            if label.startswith("tokenizers"):
                merges = hf_train(docs, vocab, pattern)
                expected = merges
            else:
                merges, counted = ours_train(docs, vocab, label.split()[-1], "gpt4" if preset else pattern)
                counting[label].append(counted)
            spent.append(time.perf_counter() - t0)
            if label == "bpeinspect hf":
                assert merges == expected, "tie_break='hf' disagrees with tokenizers"
        print(f"  round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))
    base = statistics.median(times["tokenizers (Rust)"])
    print(f"median wall time of {rounds} interleaved rounds (merges of 'hf' mode identical to tokenizers'):")
    for label, v in times.items():
        med = statistics.median(v)
        extra = ""
        if label in counting:
            c = statistics.median(counting[label])
            extra = f"  (counting {c:.2f} s, merging {med - c:.2f} s)"
        print(f"  {label:24} {med:6.2f} s  {med / base:5.2f}x tokenizers{extra}")


def bench_minbpe(rounds: int) -> None:
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text(encoding="utf-8"))
    text = (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")
    print(f"\ntaylorswift.txt ({len(text.encode()):,} bytes) against minbpe's own times (median of {rounds} runs):")
    for entry, pattern in (
        ("taylorswift_regex_gpt4_1024", "gpt4"),
        ("taylorswift_regex_gpt2_512", "gpt2"),
        ("taylorswift_basic_512", None),
    ):
        spec = ref[entry]
        runs = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            tok = train_tokenizer(text, spec["vocab_size"], pattern=pattern)
            runs.append(time.perf_counter() - t0)
        assert [[a, b, 256 + i] for i, (a, b) in enumerate(tok.merges)] == spec["merges"], entry
        med = statistics.median(runs)
        print(f"  {entry:30} {med * 1000:7.1f} ms   minbpe {spec['seconds']:6.2f} s   {spec['seconds'] / med:6.0f}x faster")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=float, default=10.0, help="megabytes of stdlib sources")
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--preset", action="store_true", help="give our trainer the preset name, not the pattern")
    ap.add_argument("--skip-stdlib", action="store_true")
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.skip_stdlib:
        bench_stdlib(args.rounds, args.mb, args.vocab, args.preset)
    bench_minbpe(max(args.rounds, 5))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
