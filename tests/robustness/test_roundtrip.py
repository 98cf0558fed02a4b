"""Property tests: any Unicode text survives encode -> decode, for the built-ins and trained tokenizers.

Lone surrogates cannot be UTF-8 encoded; like tiktoken, the encoders first pair what pairs and
turn the rest into U+FFFD, so the round trip is checked against that repaired text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, load_tokenizer, train_tokenizer
from bpeinspect.core.io.formats import load_path, save

from .seeds import SAMPLE, SHARED, small_tokenizer

pytestmark = pytest.mark.timeout(300)
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

COMMON = list(" \t\n\r  abcdeèéstTHEhe'sll.,;:!?-_()[]{}<>/\\\"0123456789äöüßçñ日本語中文한국어русскийΕλληνικά👩‍💻🙂\u200d\u0301\ufeff")

any_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=200)  # surrogates included
common_text = st.text(alphabet=st.sampled_from(COMMON), max_size=400)  # many merges fire
corpus_text = st.integers(0, len(SAMPLE)).flatmap(lambda a: st.integers(a, len(SAMPLE)).map(lambda b: SAMPLE[a:b]))
texts = st.one_of(any_text, common_text, corpus_text)


def repaired(text: str) -> str:
    """What an encoder actually sees: surrogate pairs joined, lone surrogates as U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def check_round_trip(tok: Tokenizer, text: str) -> None:
    want = repaired(text)
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == want
    assert b"".join(tok.token_bytes(i) for i in ids) == want.encode("utf-8")
    assert all(0 <= i < tok.n_vocab for i in ids)
    enc = tok.encode_with_offsets(text, allowed_special=set())
    assert list(enc.ids) == ids
    # with every special token allowed, the specials in the text come back as themselves
    ids_all = tok.encode(text, allowed_special="all")
    assert tok.decode(ids_all) == want


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base", "o200k_base"])
def builtin(request) -> Tokenizer:
    return load_tokenizer(request.param)


@PROPS
@given(text=texts)
@example(text="")
@example(text="\ud83d\ude00 lone \ud800 and \udfff")
@example(text="<|endoftext|> said <|endoftext|><|endoftext|>")
@example(text=" " * 300 + "x" + "\n" * 50 + "\r\n" * 20)
@example(text="1234567890" * 20 + "'s'S'LL'll")
def test_builtins_round_trip(builtin, text):
    check_round_trip(builtin, text)


@PROPS
@given(parts=st.lists(st.one_of(texts, st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"])), max_size=6))
def test_builtins_with_special_tokens(builtin, parts):
    text = "".join(parts)
    ids = builtin.encode(text, allowed_special="all")
    assert builtin.decode(ids) == repaired(text)
    for s, i in builtin.special_tokens.items():
        if s in text:
            assert i in ids


def minbpe_references() -> dict[str, Tokenizer]:
    ref_file = SHARED / "reference" / "minbpe-taylorswift-merges.json"
    if not ref_file.is_file():
        return {}
    out = {}
    for name, entry in json.loads(ref_file.read_text()).items():
        merges = [(a, b) for a, b, _ in entry["merges"]]
        out[name] = Tokenizer.from_merges(merges, pattern=entry["pattern"] or None, name=name)
    return out


TRAINED_NAMES = ["small", "hf-tie-break", *minbpe_references()]


@pytest.fixture(scope="module", params=TRAINED_NAMES)
def trained(request) -> Tokenizer:
    if request.param == "small":
        return small_tokenizer()
    if request.param == "hf-tie-break":
        return train_tokenizer(SAMPLE, 300, pattern="gpt2", tie_break="hf")
    return minbpe_references()[request.param]


@PROPS
@given(text=texts)
@example(text="lowest lower low")
@example(text="\ud83d\ude00\ud800")
def test_trained_round_trip(trained, text):
    check_round_trip(trained, text)


@pytest.fixture(scope="module")
def reloaded(tmp_path_factory) -> dict[str, Tokenizer]:
    """The small trained tokenizer saved in each format that keeps its split rule, and read back."""
    tok = small_tokenizer()
    folder = tmp_path_factory.mktemp("reload")
    out = {}
    for name in ("tokenizer.json", "small.model", "small.json"):
        sub = folder / name.replace(".", "_")
        sub.mkdir()
        out[name] = load_path(save(tok, sub / name))
    tik = folder / "small.tiktoken"
    save(tok, tik)
    out["small.tiktoken"] = load_path(tik, pattern=tok.split_rule, special_tokens=tok.special_tokens)
    return out


@PROPS
@given(text=texts)
def test_saved_and_reloaded_encode_the_same(reloaded, text):
    tok = small_tokenizer()
    want = tok.encode(text, allowed_special="all")
    for name, other in reloaded.items():
        assert other.encode(text, allowed_special="all") == want, name
        assert other.decode(want) == repaired(text), name


def test_reference_merges_are_loaded():
    """The minbpe cases above run only with the shared test data (tests/paths.py); say so if not."""
    if not (SHARED / "reference").is_dir():
        pytest.skip("no shared test data (BPEINSPECT_SHARED)")
    refs = minbpe_references()
    assert len(refs) == 3 and all(len(t) > 256 for t in refs.values())
    assert Path(SHARED / "corpora" / "taylorswift.txt").is_file()
