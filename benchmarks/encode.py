"""Encode throughput: tiktoken (Rust, one thread), puretiktoken (pure Python) and bpeinspect.

All three run in this one process on the same text, interleaved round by round, and the
script prints each one's throughput and the ratios. Two measurements per tokenizer:
*cold* (a fresh encoder: every distinct pre-token is merged once) and *warm* (the same text
again: the encoders that cache pre-tokens, puretiktoken and bpeinspect, reuse them).

    python benchmarks/encode.py [--rounds 5] [--mb 2]
    python benchmarks/encode.py --large 100     # one encode of 100 MB of distinct files
    python benchmarks/encode.py --only-runs     # long runs of one character, and text full of them
"""

from __future__ import annotations

import argparse
import gc
import gzip
import statistics
import sys
import sysconfig
import tempfile
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import puretiktoken  # noqa: E402
import tiktoken  # noqa: E402
from tiktoken.load import load_tiktoken_bpe  # noqa: E402

from bpeinspect.core.io.builtins import BUILTINS, forget_builtins, load_builtin, resources_dir  # noqa: E402
from bpeinspect.core.tokenizer import Tokenizer  # noqa: E402
from tests.paths import SHARED  # noqa: E402

PATTERNS = {"cl100k_base": "cl100k", "o200k_base": "o200k"}


def mixed_text(megabytes: float) -> str:
    """Python sources from the standard library interleaved with English and multilingual prose."""
    prose = []
    shared = SHARED / "corpora" / "taylorswift.txt"
    if shared.exists():
        prose.append(shared.read_text(encoding="utf-8"))
    samples = resources_dir() / "samples"
    prose += [p.read_text(encoding="utf-8") for p in sorted(samples.glob("*.txt"))]
    code = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            code.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
        if sum(map(len, code)) > megabytes * 1e6:
            break
    parts, p = [], 0
    for i, c in enumerate(code):
        parts.append(c)
        if prose and i % 8 == 0:
            parts.append(prose[p % len(prose)])
            p += 1
    return "".join(parts)[: int(megabytes * 1e6)]


def large_text(megabytes: float) -> str:
    """Distinct text files of this Python installation (standard library, then site-packages:
    sources, stubs, docs, JSON), each once, up to ``megabytes``."""
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    seen: set[int] = set()
    parts: list[str] = []
    size = 0
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".py", ".pyi", ".txt", ".md", ".rst", ".json", ".html") or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if hash(text) in seen:
                continue
            seen.add(hash(text))
            parts.append(text)
            size += len(text.encode("utf-8"))
            if size > megabytes * 1e6:
                return "".join(parts)
    return "".join(parts)


def run_large(name: str, text: str) -> None:
    """One encode of a large text by tiktoken and by a freshly loaded bpeinspect tokenizer:
    the pre-token cache starts empty and warms up as it goes, as when counting a corpus."""
    tk = reference(name)
    base = load_builtin(name)
    ours = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, special_tokens=base.special_tokens)
    # Results are kept as compact arrays between the two runs: a list of 27 million ints
    # alive during the other encode would make every full GC collection walk it.
    gc.collect()
    t0 = time.perf_counter()
    ids = tk.encode_ordinary(text)
    t1 = time.perf_counter()
    want = array("q", ids)
    del ids
    gc.collect()
    t2 = time.perf_counter()
    ids = ours.encode_ordinary(text)
    t3 = time.perf_counter()
    assert array("q", ids) == want, "bpeinspect disagrees with tiktoken"
    del ids
    mb = len(text.encode("utf-8")) / 1e6
    print(
        f"  {name}: {len(want):,} tokens; tiktoken {t1 - t0:.1f} s ({mb / (t1 - t0):.1f} MB/s), "
        f"bpeinspect {t3 - t2:.1f} s ({mb / (t3 - t2):.1f} MB/s): {(t1 - t0) / (t3 - t2):.2f}x tiktoken"
    )


def plain_rank_file(name: str, folder: str) -> str:
    """The built-in's rank file uncompressed into ``folder`` (tiktoken reads plain files)."""
    spec = BUILTINS[name]
    plain = Path(folder) / spec.filename.removesuffix(".gz")
    plain.write_bytes(gzip.decompress((resources_dir() / "vocabs" / spec.filename).read_bytes()))
    return str(plain)


def reference(name: str) -> tiktoken.Encoding:
    spec = BUILTINS[name]
    with tempfile.TemporaryDirectory() as tmp:
        ranks = load_tiktoken_bpe(plain_rank_file(name, tmp), expected_hash=spec.sha256)
    ours = load_builtin(name)
    return tiktoken.Encoding(name, pat_str=ours.split_rule.pattern, mergeable_ranks=ranks, special_tokens=spec.special_tokens)


def run(name: str, text: str, rounds: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Median throughputs (MB/s) and median per-round ratios of bpeinspect to each reference.

    Ratios are taken within a round (the three encoders ran seconds apart), so a burst of
    load on the machine moves both sides of a ratio instead of one median.
    """
    tk = reference(name)
    base = load_builtin(name)
    labels = ("tiktoken", "puretiktoken", "bpeinspect")
    times: dict[str, dict[str, list[float]]] = {k: {"cold": [], "warm": []} for k in labels}
    expected = tk.encode_ordinary(text)
    for _ in range(rounds):
        # fresh encoders each round so "cold" really is cold
        pure = puretiktoken.get_encoding(name)
        pure._cache.clear()
        ours = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, special_tokens=base.special_tokens)
        for label, fn in zip(labels, (tk.encode_ordinary, pure.encode_ordinary, ours.encode_ordinary)):
            for phase in ("cold", "warm"):
                t0 = time.perf_counter()
                ids = fn(text)
                times[label][phase].append(time.perf_counter() - t0)
                assert ids == expected, f"{label} disagrees with tiktoken"
    nbytes = len(text.encode("utf-8"))
    mbs = {k: {ph: nbytes / statistics.median(v) / 1e6 for ph, v in d.items()} for k, d in times.items()}
    ratios = {
        ref: {
            ph: statistics.median(r / o for r, o in zip(times[ref][ph], times["bpeinspect"][ph]))
            for ph in ("cold", "warm")
        }
        for ref in ("tiktoken", "puretiktoken")
    }
    return mbs, ratios


ZWJ_FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
# Runs that make one long pre-token each (or a row of them), as in logs, tables and chat.
RUNS = {
    "x": "x",
    "spaces": " ",
    "newlines": "\n",
    "one letter (é)": "é",
    "equals signs": "=",
    "ZWJ family emoji": ZWJ_FAMILY,
}


def fresh(name: str) -> Tokenizer:
    """A new bpeinspect tokenizer for built-in ``name``: its pre-token cache holds the whole
    tokens it is seeded with at the first miss (done here) and nothing else."""
    base = load_builtin(name)
    tok = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, special_tokens=base.special_tokens)
    tok.encode_ordinary("seeded, ready")
    return tok


def pathological(name: str, rounds: int, chars: int = 20_000) -> None:
    """Long runs of one character (or one emoji sequence), each one long pre-token: the first
    encounter (fresh encoder: the large-piece merge) and a repeat, against tiktoken (which does
    not cache) and puretiktoken (whose first encounter is quadratic: shown at a tenth of the
    length). Then how one run's time grows with its length."""
    tk = reference(name)
    cases = {label: unit * (chars // len(unit)) for label, unit in RUNS.items()}
    first: dict[str, list[float]] = {k: [] for k in cases}
    again: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(rounds):
        ours = fresh(name)
        for label, text in cases.items():
            gc.collect()  # not the garbage of building the tokenizer, in the first case's time
            t0 = time.perf_counter()
            want = tk.encode_ordinary(text)
            t1 = time.perf_counter()
            got = ours.encode_ordinary(text)
            t2 = time.perf_counter()
            ours.encode_ordinary(text)
            t3 = time.perf_counter()
            assert got == want, f"bpeinspect disagrees with tiktoken on {label}"
            first[label].append((t2 - t1) / (t1 - t0))
            again[label].append((t3 - t2) / (t1 - t0))
    print(f"  {chars:,} characters, bpeinspect's time / tiktoken's (median of {rounds} rounds; < 1 is faster):")
    print(f"  {'run':20} {'first':>8} {'repeat':>8}")
    for label in cases:
        print(f"  {label:20} {statistics.median(first[label]):7.2f}x {statistics.median(again[label]):7.2f}x")
    pure = puretiktoken.get_encoding(name)
    short = {label: unit * (chars // 10 // len(unit)) for label, unit in RUNS.items()}
    print(f"  puretiktoken at {chars // 10:,} characters, its time / bpeinspect's (> 1: bpeinspect faster):")
    ours = fresh(name)
    for label, text in short.items():
        pure._cache.clear()
        t0 = time.perf_counter()
        pure.encode_ordinary(text)
        t1 = time.perf_counter()
        ours.encode_ordinary(text)
        t2 = time.perf_counter()
        pure.encode_ordinary(text)
        t3 = time.perf_counter()
        ours.encode_ordinary(text)
        t4 = time.perf_counter()
        print(f"  {label:20} first {(t1 - t0) / (t2 - t1):8.1f}x   repeat {(t3 - t2) / (t4 - t3):5.2f}x")
    prev = None
    for n in (10_000, 100_000, 1_000_000):
        text = "x" * n
        t0 = time.perf_counter()
        ours.encode_piece(text)  # the merge itself, past the pre-token cache
        dt = time.perf_counter() - t0
        t0 = time.perf_counter()
        tk.encode_ordinary(text)
        dtk = time.perf_counter() - t0
        growth = f"  ({dt / prev:.1f}x for 10x the length)" if prev else ""
        print(f"  'x' * {n:>9,}: {dt * 1000:8.1f} ms, tiktoken {dtk * 1000:8.1f} ms{growth}")
        prev = dt


def with_runs(text: str, every: int = 16_384, scale: int = 1) -> str:
    """``text`` with one of :data:`RUNS` (1,000-3,000 characters) after every ``every`` characters,
    in turn: each run comes back many times, as a table rule or an indentation does."""
    lengths = (2000, 3000, 1000, 1500, 1500, 100)
    runs = [unit * n * scale for unit, n in zip(RUNS.values(), lengths)]
    parts = []
    for k, i in enumerate(range(0, len(text), every)):
        parts.append(text[i : i + every])
        parts.append(runs[k % len(runs)])
    return "".join(parts)


def load_times(repeats: int = 3) -> None:
    """Loading each built-in, best of ``repeats``: bpeinspect's ``load_builtin`` (gunzip, sha256,
    parse, build, seed the pre-token cache) and tiktoken's ``load_tiktoken_bpe`` + ``Encoding``
    on the same file (uncompressed for tiktoken, which reads plain files)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in BUILTINS.items():
            plain = plain_rank_file(name, tmp)
            pattern = load_builtin(name).split_rule.pattern
            ours, theirs = [], []
            for _ in range(repeats):
                forget_builtins()
                gc.collect()
                t0 = time.perf_counter()
                load_builtin(name)
                t1 = time.perf_counter()
                ranks = load_tiktoken_bpe(plain, expected_hash=spec.sha256)
                tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=spec.special_tokens)
                t2 = time.perf_counter()
                ours.append(t1 - t0)
                theirs.append(t2 - t1)
            print(f"  load {name}: bpeinspect {min(ours) * 1000:.0f} ms, tiktoken {min(theirs) * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=float, default=2.0, help="megabytes of text")
    ap.add_argument("--large", type=float, default=0, metavar="MB",
                    help="instead: one encode of MB of distinct files of this Python installation")
    ap.add_argument("--only-runs", action="store_true", help="only the long runs and the text with long runs")
    args = ap.parse_args()
    if args.large:
        text = large_text(args.large)
        print(f"large text: {len(text.encode('utf-8')) / 1e6:.1f} MB of distinct files, one encode each")
        for name in ("cl100k_base", "o200k_base"):
            run_large(name, text)
        return
    text = mixed_text(args.mb)
    nbytes = len(text.encode("utf-8"))
    print(f"text: {nbytes / 1e6:.2f} MB UTF-8 ({len(text):,} chars), median of {args.rounds} interleaved rounds")
    if not args.only_runs:
        print("\nloading the built-ins (best of 3):")
        load_times()
    print("\nlong runs, cl100k_base:")
    pathological("cl100k_base", args.rounds)
    runs_text = with_runs(text)
    cases = [("cl100k_base", runs_text, "with a long run every 16 KB")]
    if not args.only_runs:
        cases = [(name, text, "") for name in ("cl100k_base", "o200k_base")] + cases
    for name, t, what in cases:
        r, ratios = run(name, t, args.rounds)
        size = f"{len(t.encode('utf-8')) / 1e6:.2f} MB {what}" if what else ""
        print(f"\n{name}{': ' + size if size else ''}: throughput in MB/s (medians)")
        print(f"  {'':14} {'cold':>8} {'warm':>8}")
        for k, v in r.items():
            print(f"  {k:14} {v['cold']:8.2f} {v['warm']:8.2f}")
        for phase in ("cold", "warm"):
            print(
                f"  {phase}: bpeinspect / tiktoken = {ratios['tiktoken'][phase]:.2f}x, "
                f"bpeinspect / puretiktoken = {ratios['puretiktoken'][phase]:.2f}x  (median of per-round ratios)"
            )


if __name__ == "__main__":
    main()
