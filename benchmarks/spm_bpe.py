"""SentencePiece-style BPE: load and encode time of bpeinspect against ``sentencepiece`` and HF ``tokenizers``.

Pass the vocabulary files to compare (a ``.model`` is compared with ``sentencepiece``, a
``tokenizer.json`` with ``tokenizers``, a GGUF with neither). All run in this one process on
the same text, interleaved round by round. bpeinspect is timed *cold* (a fresh tokenizer:
every distinct pre-token is merged once) and *warm* (the same text again, from its cache),
and for ``encode_with_offsets`` (what the overlay draws).

    python benchmarks/spm_bpe.py [--mb 1] [--rounds 3] FILE...
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.encode import mixed_text  # noqa: E402
from bpeinspect.core.io.formats import detect_format, load_path  # noqa: E402


def _reference(path: Path):
    kind = detect_format(path)
    if kind == "sentencepiece":
        import sentencepiece as spm

        t0 = time.perf_counter()
        sp = spm.SentencePieceProcessor(model_file=str(path))
        return "sentencepiece", time.perf_counter() - t0, sp.encode
    if kind == "huggingface":
        import tokenizers

        t0 = time.perf_counter()
        hf = tokenizers.Tokenizer.from_file(str(path))
        return "tokenizers", time.perf_counter() - t0, lambda s: hf.encode(s, add_special_tokens=False).ids
    return None, 0.0, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    text = mixed_text(args.mb)
    mb = len(text.encode("utf-8")) / 1e6
    print(f"text: {mb:.2f} MB (stdlib code + multilingual prose)")
    for path in args.files:
        ref_name, ref_load, ref = _reference(path)
        loads = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            tok = load_path(path)
            loads.append(time.perf_counter() - t0)
        cold, warm, offs, refs = [], [], [], []
        for _ in range(args.rounds):
            tok = load_path(path)
            t0 = time.perf_counter()
            ids = tok.encode(text, allowed_special="all")
            cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tok.encode(text, allowed_special="all")
            warm.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tok.encode_with_offsets(text)
            offs.append(time.perf_counter() - t0)
            if ref is not None:
                t0 = time.perf_counter()
                expected = ref(text)
                refs.append(time.perf_counter() - t0)
                assert expected == ids, f"{path}: ids differ from {ref_name}"
        med = statistics.median
        line = (f"{path.name}: {len(tok):,} tokens; load {med(loads):.2f} s"
                f"{f' ({ref_name} {ref_load:.2f} s)' if ref else ''}; encode cold {mb / med(cold):.2f} MB/s, "
                f"warm {mb / med(warm):.2f} MB/s, with offsets {mb / med(offs):.2f} MB/s")
        if refs:
            line += f"; {ref_name} {mb / med(refs):.2f} MB/s (cold/warm = {med(refs) / med(cold):.2f}x/{med(refs) / med(warm):.2f}x its speed)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
