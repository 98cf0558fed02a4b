"""Every GGUF vocabulary encodes as llama.cpp itself does, on a broad corpus.

The ids in ``vectors/llama_cpp.json.xz`` were produced by llama.cpp (the copy vendored in the
pinned ``llama-cpp-python`` sdist) with ``make_llama_cpp_vectors.py``, which says how to re-run
it; checking against them needs no llama.cpp build. With special-token parsing off, llama.cpp is
compared with bpeinspect's ordinary encoding; with it on, with ``allowed_special="all"``.
"""

from __future__ import annotations

import functools
import json
import lzma
from pathlib import Path

import pytest

from tests.conformance.sources import VOCABS, Vocab
from tests.conformance.test_conformance import _describe, _load

pytestmark = pytest.mark.slow

VECTORS = Path(__file__).parent / "vectors" / "llama_cpp.json.xz"
GGUF = [v for v in VOCABS if v.member.endswith(".gguf") and v.status != "refused"]


@functools.cache
def vectors() -> dict:
    return json.loads(lzma.decompress(VECTORS.read_bytes()).decode("utf-8"))


def test_every_gguf_vocabulary_of_the_suite_has_vectors() -> None:
    assert sorted(vectors()["vocabs"]) == sorted(v.id for v in GGUF)
    assert len(vectors()["texts"]) > 700


@pytest.mark.parametrize("vocab", GGUF, ids=lambda v: v.id)
@pytest.mark.parametrize("specials", ["none", "all"])
def test_ids_match_llama_cpp(vocab: Vocab, specials: str) -> None:
    tok = _load(vocab)
    data = vectors()
    texts, want = data["texts"], data["vocabs"][vocab.id]
    failures = []
    for i, text in enumerate(texts):
        if specials == "all":
            expected = want["special"].get(str(i), want["plain"][i])
            got = tok.encode(text, allowed_special="all")
        else:
            expected = want["plain"][i]
            got = tok.encode(text, disallowed_special=())
        if got != expected:
            failures.append(_describe(tok, text, got, expected))
    assert not failures, f"{len(failures)} of {len(texts)} texts differ from llama.cpp; the first ones:\n" + "\n".join(
        failures[:3]
    )
