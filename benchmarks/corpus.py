"""Corpus work on every core: single-process against process-pool throughput, side by side.

Two jobs on the same file of distinct text (files of this Python installation, as in
``encode.py --large``), each run with 1 process and with 2, 3, ... up to the CPU count,
interleaved round by round in this one run:

* token statistics (``bpeinspect-cli stats``: ``compute_stats``) under a freshly loaded
  tokenizer each time (default o200k_base), so that no run starts with a warm pre-token cache;
* training's counting phase (``count_pretokens``, GPT-4 pattern given as a string).

The counts are checked to be identical before any time is printed. Beside each wall time the
script prints the CPU seconds this process and its children spent (``getrusage``). On a
machine that others load, wall-time ratios say little (the processes get what the scheduler
leaves them); the CPU times give two estimates of an idle machine's speed-up: the one-process
CPU time over the pool's CPU time shared evenly by its processes ("even"), and over the
busiest process's CPU time as this run shared it ("as run"; under load the child, starved,
takes fewer items, so this one is pessimistic).

    python benchmarks/corpus.py [--mb 100] [--rounds 3] [--tokenizer o200k_base] [--skip-counting]
"""

from __future__ import annotations

import argparse
import os
import resource
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
from bpeinspect.core.io.builtins import forget_builtins, load_builtin  # noqa: E402
from bpeinspect.core.pool import default_processes  # noqa: E402
from bpeinspect.core.split.patterns import GPT4_PATTERN  # noqa: E402
from bpeinspect.core.train.corpus import iter_corpus  # noqa: E402
from bpeinspect.core.train.counts import count_pretokens  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def timed(job, times: list, cpus: list):
    c0, t0 = cpu(), time.perf_counter()
    out = job()
    t1, c1 = time.perf_counter(), cpu()
    times.append(t1 - t0)
    cpus.append((c1[0] - c0[0], c1[1] - c0[1]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokenizer", default="o200k_base")
    ap.add_argument("--skip-counting", action="store_true", help="time token statistics only")
    args = ap.parse_args()
    widths = list(range(1, max(2, default_processes()) + 1))
    print(f"cpus: {os.cpu_count()}, usable: {default_processes()}, load average before: {load()}")
    text = large_text(args.mb)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.txt"
        path.write_text(text, encoding="utf-8")
        size = path.stat().st_size
        del text
        print(f"corpus: {size / 1e6:.1f} MB of distinct files in one file; processes: {widths}")
        jobs = {"stats": {n: [] for n in widths}}
        if not args.skip_counting:
            jobs["counting"] = {n: [] for n in widths}
        cpus = {job: {n: [] for n in widths} for job in jobs}
        results: dict[str, dict[int, object]] = {job: {} for job in jobs}
        for r in range(args.rounds):
            for n in widths:
                # fresh: an empty pre-token cache (load_builtin keeps what it loaded, and a
                # tokenizer run before would start warm while the pool's children start cold)
                forget_builtins()
                tok = load_builtin(args.tokenizer)
                table = timed(lambda tok=tok, n=n: compute_stats({args.tokenizer: tok}, [Sample("corpus", path)], processes=n),
                              jobs["stats"][n], cpus["stats"][n])  # fmt: skip
                results["stats"][n] = table.rows[0].tokens
                if "counting" in jobs:
                    counts = timed(lambda n=n: count_pretokens(iter_corpus(path, GPT4_PATTERN), GPT4_PATTERN, processes=n),
                                   jobs["counting"][n], cpus["counting"][n])  # fmt: skip
                    results["counting"][n] = hash(frozenset(counts.items()))
            print(f"  round {r + 1} (load {load()}): " + "; ".join(
                f"{job} " + ", ".join(f"{n}p {v[n][-1]:.1f} s" for n in widths) for job, v in jobs.items()
            ))  # fmt: skip
        for job in jobs:
            assert len(set(results[job].values())) == 1, f"{job}: the results differ between process counts"
        print(f"median of {args.rounds} interleaved rounds (results identical for every process count):")
        for job, times in jobs.items():
            base = statistics.median(times[1])
            what = f"{args.tokenizer} token statistics" if job == "stats" else "training's counting (GPT-4 pattern string)"
            print(f"  {what}:")
            one_cpu = statistics.median(sum(c) for c in cpus[job][1])
            for n in widths:
                med = statistics.median(times[n])
                here = statistics.median(c[0] for c in cpus[job][n])
                kids = statistics.median(c[1] for c in cpus[job][n])
                even = (here + kids) / n
                busiest = max(here, kids / max(n - 1, 1))
                print(f"    {n} process{'es' if n > 1 else '  '} {med:7.2f} s  {size / 1e6 / med:6.1f} MB/s  {base / med:5.2f}x"
                      f"   CPU here {here:6.2f} s, children {kids:6.2f} s; idle-machine estimate "
                      f"{one_cpu / even:4.2f}x even, {one_cpu / busiest:4.2f}x as run")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
