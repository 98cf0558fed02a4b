"""The boundaries of a text encoded in segments, read from the segments, are those of one full encode."""

from __future__ import annotations

import random

import pytest

from bpeinspect.core import Cancelled, load_tokenizer
from bpeinspect.core.analysis import interior_boundaries
from bpeinspect.core.live_text import LiveEncoding, LiveText, encode_segment, part_boundaries
from tests.core.live_text.test_edits import ALPHABET, SAMPLE


def parts_of(tok, text: str, target: int) -> list:
    live = LiveEncoding(tok, LiveText(text, target=target))
    for seg, head in live.pending():
        assert live.put(seg, encode_segment(tok, seg.text, head), head)
    return list(live.parts())


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("target", [7, 64, 1000])
def test_boundaries_of_the_parts_are_those_of_one_full_encode(name, target):
    tok = load_tokenizer(name)
    rng = random.Random(target)
    texts = [SAMPLE * 4] + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 400))) for _ in range(20)]
    for text in texts:
        parts = parts_of(tok, text, target)
        want = interior_boundaries(tok.encode_with_offsets(text, allowed_special="all"))
        got = part_boundaries(parts)
        assert got.dtype == want.dtype
        assert got.tolist() == want.tolist(), text


def test_no_parts_have_no_boundaries():
    assert part_boundaries([]).tolist() == []


def test_a_stop_asked_for_ends_it_between_parts():
    tok = load_tokenizer("r50k_base")
    parts = parts_of(tok, SAMPLE * 20, 16)
    assert len(parts) > 8
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) == 2

    with pytest.raises(Cancelled):
        part_boundaries(parts, stop, step=4)
    assert len(asked) == 2
