"""Load times per vocabulary format, and GGUF metadata reading against gguf's GGUFReader.

Run from the project root: ``python benchmarks/bench_formats.py`` (reads the shared GPT-2 files,
see ``tests/paths.py``).
The GGUF case writes a synthetic model with o200k_base's 200k-token vocabulary and a 4 GB
sparse tensor region into a temporary folder.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bpeinspect.core import load_tokenizer  # noqa: E402
from bpeinspect.core.io.formats import gguf as gguf_format  # noqa: E402
from bpeinspect.core.io.formats import load_path, save  # noqa: E402
from bpeinspect.core.io.formats._common import bytes_to_token  # noqa: E402
from tests.paths import SHARED  # noqa: E402


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def big_gguf(folder: Path) -> Path:
    import gguf

    tok = load_tokenizer("o200k_base")
    merges = tok.merges
    path = folder / "o200k-synthetic.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-4o")
    ids = tok.ids()
    w.add_token_list([bytes_to_token(tok.token_bytes(i)) if not tok.is_special(i) else tok.token_bytes(i).decode() for i in ids])
    w.add_token_types([3 if tok.is_special(i) else 1 for i in ids])
    w.add_token_merges([f"{bytes_to_token(tok.token_bytes(a))} {bytes_to_token(tok.token_bytes(b))}" for a, b in merges])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(path, "r+b") as f:
        f.truncate(4 << 30)
    return path


def main() -> None:
    vocabs = SHARED / "vocabs"
    print("GPT-2 (50k) load times, best of 3:")
    for rel in ("gpt2.tiktoken", "gpt2/tokenizer.json", "gpt2", "gpt2.gguf"):
        print(f"  {rel:<22} {best(lambda rel=rel: load_path(vocabs / rel)):.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tok = load_tokenizer("r50k_base")
        for out in ("x.tiktoken", "tokenizer.json", "x.json", "encoder.json"):
            print(f"  save {out:<17} {best(lambda out=out: save(tok, folder / out), 1):.3f} s")
        t = time.perf_counter()
        path = big_gguf(folder)
        print(f"\nsynthetic GGUF: 200k tokens, {path.stat().st_size >> 30} GB (built in {time.perf_counter() - t:.1f} s)")
        ours = best(lambda: load_path(path))
        meta = best(lambda: gguf_format.read_metadata(open(path, "rb"), path))
        import gguf

        ref = best(lambda: gguf.GGUFReader(str(path)), 1)
        print(f"  bpeinspect load_path (metadata + Tokenizer): {ours:.3f} s")
        print(f"  bpeinspect read_metadata only:               {meta:.3f} s")
        print(f"  gguf.GGUFReader (metadata only):             {ref:.3f} s  ({ref / meta:.1f}x slower)")


if __name__ == "__main__":
    main()
