"""First open of real vocabularies against each format's own library, side by side in one process.

Run from the project root: ``python benchmarks/first_open.py [--rounds 5] [--only TEXT]``. The
files are those of ``load.py`` (the conformance suite's cache). The targets:

- a first open takes at most 1.3x its own library's loader: HF ``tokenizers.Tokenizer.from_file``
  for ``tokenizer.json``; tiktoken with the model package's own settings for rank files
  (``.tiktoken``, Llama's ``tokenizer.model``); mistral_common's ``Tekkenizer`` for Tekken;
  ``sentencepiece`` for SentencePiece ``.model`` files; ``gguf.GGUFReader`` for GGUF files (it
  reads the metadata and indexes the tensors; it builds no tokenizer, so it is a lower bound);
- a re-open (from the load cache a first open writes) takes at most 1 s.

Each file gets one fresh process, which imports both libraries first (imports are not timed)
and opens a small tokenizer.json once to warm bpeinspect's lazy imports. Then it opens the file
``--rounds`` times with each loader, alternating which goes first, so that both see the same
machine: on a loaded machine, timings of separate processes minutes apart are not comparable,
but a ratio measured this way is. bpeinspect's first opens each write a fresh, empty load cache
(its write runs in the background after the open returns and is waited for untimed), and its
re-opens read the entry of the last one. Printed: the median wall time of each, the ratio of the
medians, and the ratio's spread over the rounds (each round's own ratio). Later rounds of one
process are a little faster than a true first open for both loaders (warm allocator, file in the
page cache); the ratio is what is compared with the target.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_FIRST = 1.3  # x the format's own loader
TARGET_REOPEN = 1.0  # seconds
WARM_UP = ROOT.parent / "shared" / "vocabs" / "gpt2" / "tokenizer.json"


def reference_loader(kind: str):
    """A function that opens a file with its format's own library, as its users would."""
    if kind == "hf":
        import tokenizers

        return tokenizers.Tokenizer.from_file
    if kind.startswith("tiktoken:"):
        from tests.conformance.oracles import _tiktoken_oracle

        return lambda p: _tiktoken_oracle(kind.split(":", 1)[1], Path(p))
    if kind == "o200k":
        from benchmarks.load import _reference_loader

        return _reference_loader("o200k")
    if kind == "mistral":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        return Tekkenizer.from_file
    if kind == "sentencepiece":
        import sentencepiece

        return lambda p: sentencepiece.SentencePieceProcessor(model_file=p)
    if kind == "gguf":
        from gguf import GGUFReader

        return GGUFReader
    raise ValueError(f"no reference loader {kind!r}")


def _timed(load, path: str) -> float:
    gc.collect()
    t = time.perf_counter()
    obj = load(path)
    took = time.perf_counter() - t
    del obj
    return took


def one(path: str, ref: str, rounds: int) -> None:
    """Child process: alternate the two loaders ``rounds`` times; print JSON."""
    warnings.simplefilter("ignore")
    theirs = reference_loader(ref)
    from bpeinspect.core.io import load_cache
    from bpeinspect.core.io.formats import load_path

    root = Path(tempfile.mkdtemp(prefix="first-open-"))
    os.environ["BPEINSPECT_LOAD_CACHE"] = "1"
    if WARM_UP.is_file():
        os.environ["BPEINSPECT_CACHE_DIR"] = str(root / "warm")
        load_path(WARM_UP)
        load_cache.wait()
    ours_first: list[float] = []
    ours_again: list[float] = []
    ref_times: list[float] = []
    for k in range(rounds):
        os.environ["BPEINSPECT_CACHE_DIR"] = str(root / f"round{k}")  # an empty cache: a first open
        order = ("ref", "ours") if k % 2 == 0 else ("ours", "ref")
        for who in order:
            if who == "ref":
                ref_times.append(_timed(theirs, path))
            else:
                ours_first.append(_timed(load_path, path))
                load_cache.wait()  # the entry is written in the background: not part of the open
        ours_again.append(_timed(load_path, path))
    print(json.dumps({"ref": ref_times, "first": ours_first, "again": ours_again}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", help="run only the cases whose label contains this text")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--ref", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one, args.ref, args.rounds)
        return
    from benchmarks.load import CASES, o200k_tiktoken
    from tests.conformance.conftest import _file
    from tests.conformance.sources import VOCABS

    by_id = {v.id: v for v in VOCABS}
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(
        "| vocabulary | reference loader | reference s | first open s | ratio | ratio per round | "
        f"first <= {TARGET_FIRST}x | re-open s | re-open <= {TARGET_REOPEN:.0f} s |"
    )
    print("| --- | --- | ---: | ---: | ---: | --- | --- | ---: | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for label, vid in CASES:
            if args.only and args.only not in label:
                continue
            if vid == "o200k-tiktoken":
                path: Path | str = o200k_tiktoken(Path(tmp))
                ref = "o200k"
            else:
                v = by_id[vid]
                path = _file(v, v.member)
                ref = {"hf": "hf", "mistral": "mistral", "sentencepiece": "sentencepiece"}.get(v.oracle, v.oracle)
                if vid.startswith("gguf-"):
                    ref = "gguf"
            if isinstance(path, str):
                print(f"| {label} | skipped: {path} |")
                continue
            cmd = [sys.executable, __file__, "--one", str(path), "--ref", ref, "--rounds", str(args.rounds)]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
            if proc.returncode != 0:
                print(f"| {label} | failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:100]} |")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            theirs, first, again = (statistics.median(r[k]) for k in ("ref", "first", "again"))
            ratio = first / theirs
            per_round = sorted(f / t for f, t in zip(r["first"], r["ref"]))
            spread = f"{per_round[0]:.2f}-{per_round[-1]:.2f}"
            met = "yes" if ratio <= TARGET_FIRST else "NO"
            print(
                f"| {label} | {ref} | {theirs:.2f} | {first:.2f} | {ratio:.2f}x | {spread} | {met} | {again:.2f} | "
                f"{'yes' if again <= TARGET_REOPEN else 'NO'} |",
                flush=True,
            )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
