"""Real vocabulary files to fuzz from: a small trained tokenizer saved in every format we
write, a small GGUF written with the ``gguf`` package, and the GPT-2 files in shared/."""

from __future__ import annotations

import functools
from pathlib import Path

from bpeinspect.core import Tokenizer, train_tokenizer
from bpeinspect.core.io.formats import save
from tests.paths import SHARED

SAMPLE = (
    "Byte-level BPE merges the most frequent pair, again and again: lower, lowest, newer, wider. "
    "Größe, naïve café, Ελληνικά, русский текст, 日本語のテキスト, 👩‍💻 emoji and code: def f(x): return x**2\n"
) * 4


@functools.cache
def small_tokenizer() -> Tokenizer:
    """A 320-token tokenizer (64 merges, two special tokens) trained on :data:`SAMPLE`."""
    return train_tokenizer(SAMPLE, 322, pattern="gpt4", special_tokens=["<|endoftext|>", "<|pad|>"])


# file name -> the format it is saved in (the name tells ``save`` which)
SAVED_NAMES = {
    "small.tiktoken": "tiktoken",
    "tokenizer.json": "huggingface",
    "small.model": "minbpe",
    "small.json": "native",
    "encoder.json": "gpt2",
}


def write_gguf(tok: Tokenizer, path: Path) -> Path:
    """``tok`` as the tokenizer metadata of a GGUF file (no tensors), as llama.cpp stores one."""
    import gguf

    from bpeinspect.core.io.formats._common import bytes_to_token

    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_name("small")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    specials = {i: s for s, i in tok.special_tokens.items()}
    tokens, types = [], []
    for i in range(tok.n_vocab):
        if i in specials:
            tokens.append(specials[i])
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(bytes_to_token(tok.token_bytes(i)))
            types.append(gguf.TokenType.NORMAL)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(
        [f"{bytes_to_token(tok.token_bytes(a))} {bytes_to_token(tok.token_bytes(b))}" for a, b in tok.merges]
    )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def saved_files(folder: Path) -> dict[str, Path]:
    """Write the small tokenizer in every format under ``folder``; name -> the file to load.

    Each format gets its own subfolder (GPT-2's pair and minbpe's ``.model``/``.vocab`` are two
    files that belong together)."""
    tok = small_tokenizer()
    out: dict[str, Path] = {}
    for name in SAVED_NAMES:
        sub = folder / name.replace(".", "_")
        sub.mkdir(parents=True, exist_ok=True)
        out[name] = save(tok, sub / name)
    (folder / "gguf").mkdir(exist_ok=True)
    out["small.gguf"] = write_gguf(tok, folder / "gguf" / "small.gguf")
    return out


def shared_files() -> dict[str, Path]:
    """The real GPT-2 files of shared/ (empty without the shared test data, see tests/paths.py)."""
    v = SHARED / "vocabs"
    files = {
        "gpt2.tiktoken": v / "gpt2.tiktoken",
        "gpt2.gguf": v / "gpt2.gguf",
        "tokenizer.json": v / "gpt2" / "tokenizer.json",
        "encoder.json": v / "gpt2" / "encoder.json",
        "vocab.bpe": v / "gpt2" / "vocab.bpe",
    }
    return {k: p for k, p in files.items() if p.is_file()}
