"""The reference implementations, built offline from the vocabularies we ship.

tiktoken's ``get_encoding`` downloads its files. Here tiktoken's own definitions (pattern and
special tokens, from ``tiktoken_ext.openai_public``) are combined with the rank files in
``resources/vocabs``, read by tiktoken's own loader with the published hash, so the comparison
is against tiktoken's code and definitions.
"""

from __future__ import annotations

import functools
import gzip
import tempfile
from pathlib import Path

import pytest

from bpeinspect.core.io.builtins import BUILTINS, VARIANTS, resources_dir

tiktoken = pytest.importorskip("tiktoken")
from tiktoken.load import load_tiktoken_bpe  # noqa: E402
from tiktoken_ext import openai_public  # noqa: E402

BUILTIN_NAMES = ["r50k_base", "cl100k_base", "o200k_base"]
# tiktoken's every encoding: the built-ins above, p50k_base, and the variants sharing their ranks
ALL_NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


def _definition(name: str) -> dict:
    """tiktoken's definition of ``name`` with its downloading loader stubbed out."""
    loaders = ("load_tiktoken_bpe", "data_gym_to_mergeable_bpe_ranks")  # gpt2 reads GPT-2's own files
    originals = {n: getattr(openai_public, n) for n in loaders}
    for n in loaders:
        setattr(openai_public, n, lambda *a, **k: {})
    try:
        return getattr(openai_public, name)()
    finally:
        for n, f in originals.items():
            setattr(openai_public, n, f)


@functools.cache
def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    spec = BUILTINS[VARIANTS[name].base if name in VARIANTS else name]
    definition = _definition(name)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / spec.filename.removesuffix(".gz")
        plain.write_bytes(gzip.decompress((resources_dir() / "vocabs" / spec.filename).read_bytes()))
        ranks = load_tiktoken_bpe(str(plain), expected_hash=spec.sha256)
    return tiktoken.Encoding(
        name,
        pat_str=definition["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=definition["special_tokens"],
    )
