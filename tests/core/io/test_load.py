"""The one way in: built-in names, aliases and paths, and a clear error for what is not there."""

from __future__ import annotations

import os

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.errors import Cancelled, VocabularyError
from bpeinspect.core.io.formats import load_with, save


def test_an_alias_is_its_builtin():
    assert load_tokenizer("gpt2").encode_ordinary("hello world") == load_tokenizer("r50k_base").encode_ordinary(
        "hello world"
    )


def test_a_path_loads_the_file_as_a_str_or_a_path(tmp_path):
    tok = load_tokenizer("r50k_base")
    path = save(tok, tmp_path / "r50k.tiktoken")
    text = "Paths and names, 日本語"
    assert load_tokenizer(path).encode_ordinary(text) == tok.encode_ordinary(text)
    assert load_tokenizer(str(path)).encode_ordinary(text) == tok.encode_ordinary(text)


def test_an_unknown_name_lists_the_builtins_and_the_hub_form():
    with pytest.raises(VocabularyError) as info:
        load_tokenizer("cl100k-base-typo")
    message = str(info.value)
    assert "'cl100k-base-typo'" in message and "cl100k_base" in message and "hf:OWNER/NAME" in message
    assert "\n" not in message


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need rights on Windows")
def test_a_dangling_link_says_where_it_points(tmp_path):
    link = tmp_path / "vocab.json"
    link.symlink_to(tmp_path / "gone.json")
    with pytest.raises(VocabularyError, match="symbolic link to .*gone.json, which does not exist"):
        load_tokenizer(link)


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need rights on Windows")
def test_a_link_loop_is_named_as_one(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(VocabularyError, match="symbolic link loop"):
        load_tokenizer(a)


@pytest.mark.parametrize("target", ["r50k.tiktoken", "tokenizer.json", "pair", "r50k.bpeinspect.json"])
def test_a_should_stop_given_to_a_file_load_is_asked_and_a_stop_cancels_it(tmp_path, target):
    tok = load_tokenizer("r50k_base")
    if target == "pair":
        (tmp_path / target).mkdir()
    path = save(tok, tmp_path / target)
    asked: list[bool] = []
    loaded = load_tokenizer(path, should_stop=lambda: asked.append(True) or False)
    assert loaded.encode_ordinary("stop, then go") == tok.encode_ordinary("stop, then go")
    assert len(asked) >= 50256 // (1 << 14)  # the tables are built a slice at a time, asked between
    with pytest.raises(Cancelled):
        load_tokenizer(path, should_stop=lambda: True)


def test_a_should_stop_given_with_the_users_settings_is_asked_too(tmp_path):
    path = save(load_tokenizer("r50k_base"), tmp_path / "r50k.tiktoken")
    asked: list[bool] = []
    tok = load_with(path, pattern="gpt2", special_tokens=["<|x|>"], should_stop=lambda: asked.append(True) or False)
    assert tok.special_tokens["<|x|>"] == 50256 and len(asked) >= 2 * (50256 // (1 << 14))
    with pytest.raises(Cancelled):
        load_with(path, special_tokens=["<|x|>"], should_stop=lambda: True)


def test_the_first_free_id_follows_the_last_token_that_is_not_special():
    from bpeinspect.core.io.formats import first_free_id, with_settings

    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        tok = load_tokenizer(name)
        assert first_free_id(tok) == max(i for i in tok.ids() if not tok.is_special(i)) + 1
    tok = load_tokenizer("cl100k_base")
    assert first_free_id(tok) == 100256
    assert first_free_id(with_settings(tok, special_tokens={})) == 100256  # no special tokens at all
    specials = {**tok.special_tokens, "<in a gap>": 100256, "<another>": 100270}
    assert first_free_id(with_settings(tok, special_tokens=specials)) == 100256
