"""The training plan's sizes: labelled as they are typed, and refused with a reason when no merge fits."""

from __future__ import annotations

import pytest

from bpeinspect.core.train.plan import check_sizes, size_label, trained_name


@pytest.mark.parametrize(("size", "label"), [(4000, "4k"), (4096, "4096"), (16000, "16k"), (1000, "1k"), (0, "0")])
def test_round_thousands_are_labelled_in_k(size, label):
    assert size_label(size) == label


def test_a_trained_tokenizer_is_named_by_its_corpus_and_size_in_words_not_a_suffix():
    assert trained_name("json and 2 more", 300) == "json and 2 more · 300"
    assert trained_name("taylorswift", 16000) == "taylorswift · 16k"


def test_sizes_with_room_for_a_merge_pass():
    check_sizes([257, 4096])
    check_sizes([259], ["<|a|>", "<|b|>"])


@pytest.mark.parametrize(
    ("sizes", "specials", "need"),
    [([256, 1000], [], 257), ([1000, 258], ["<|a|>", "<|b|>"], 259), ([3], ["x"], 258)],
)
def test_the_first_size_too_small_is_named_with_what_is_needed(sizes, specials, need):
    small = min(s for s in sizes if s < need)
    with pytest.raises(ValueError, match=f"Vocabulary size {small:,} is too small") as info:
        check_sizes(sizes, specials)
    assert f"need at least {need}" in str(info.value)
