"""Tokenizers sent to child processes as data, and the count a child makes of a text."""

from __future__ import annotations

import pickle

import pytest

from bpeinspect.core import load_tokenizer, train_tokenizer
from bpeinspect.core.analysis.shipping import Shipped, can_ship, count_text, counts_pre_tokens
from bpeinspect.core.errors import Cancelled
from tests.core.corpus import ADVERSARIAL, PROSE

TEXTS = [*PROSE, *ADVERSARIAL, "<|endoftext|> and <|fim_prefix|> as text", ""]


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_a_shipped_builtin_encodes_as_the_original(name):
    tok = load_tokenizer(name)
    back = pickle.loads(pickle.dumps(Shipped(tok)))
    assert back is not tok
    for text in TEXTS:
        assert back.encode_ordinary(text) == tok.encode_ordinary(text)
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_a_trained_merge_list_travels_with_its_merges():
    tok = train_tokenizer(PROSE * 3, 300, pattern="gpt4")
    assert can_ship(tok)
    back = pickle.loads(pickle.dumps(Shipped(tok)))
    assert back.merges == tok.merges
    assert [back.encode_ordinary(t) for t in TEXTS] == [tok.encode_ordinary(t) for t in TEXTS]


def test_shipping_stops_when_asked():
    with pytest.raises(Cancelled):
        Shipped(load_tokenizer("cl100k_base"), should_stop=lambda: True)


def test_the_count_of_a_text_is_its_ordinary_encodings_length():
    tok = load_tokenizer("cl100k_base")
    assert counts_pre_tokens(tok)
    for text in TEXTS:
        assert count_text(tok, text) == len(tok.encode_ordinary(text))
