"""Badges for what a vocabulary file did not say: a default split rule or special tokens, and missing bytes."""

from __future__ import annotations

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.io.provenance import badges

ALL_BYTES = {bytes([b]): b for b in range(256)}


def test_a_complete_builtin_vocabulary_has_no_badge():
    assert badges(load_tokenizer("cl100k_base")) == []


def test_a_default_split_rule_says_encodings_may_differ_and_names_the_default_specials():
    tok = Tokenizer(ALL_BYTES, assumed={"pattern": "gpt2's, a default", "special_tokens": "none found"})
    [(label, tip)] = badges(tok)
    assert label == "default split"
    assert "gpt2's, a default" in tip and "none found" in tip and "may differ" in tip


def test_what_the_user_chose_is_not_a_default():
    assert badges(Tokenizer(ALL_BYTES, assumed={"pattern": "chosen by the user"})) == []


def test_other_assumptions_are_listed_by_name():
    [(label, tip)] = badges(Tokenizer(ALL_BYTES, assumed={"special_tokens": "none in the file"}))
    assert label == "assumed"
    assert tip == "special tokens: none in the file"


def test_missing_bytes_are_counted_and_listed_in_hex():
    one = Tokenizer({k: v for k, v in ALL_BYTES.items() if k != b"\x03"})
    assert [label for label, _ in badges(one)] == ["1 byte missing"]
    two = Tokenizer({bytes([b]): i for i, b in enumerate(b for b in range(256) if b not in (0x0A, 0xFF))})
    [(label, tip)] = badges(two)
    assert label == "2 bytes missing"
    assert "0a ff" in tip
