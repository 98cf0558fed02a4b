"""Several encodings of one text against the first: boundaries, the ones that differ and the
agreement equal what the token byte lengths and :func:`boundary_agreement` give."""

from __future__ import annotations

import pytest

from bpeinspect.core import Cancelled, load_tokenizer
from bpeinspect.core.analysis.compare import (
    boundary_agreement,
    compare_boundaries,
    interior_boundaries,
    token_boundaries,
)
from bpeinspect.core.analysis.corpus import fable_corpus

NAMES = ("r50k_base", "cl100k_base", "o200k_base")


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in NAMES]


@pytest.mark.parametrize("code", ["en", "de", "ko", "hi", "ar", "zh"])
def test_each_encoding_differs_from_the_reference_where_its_boundaries_do(toks, code):
    text = fable_corpus().text(code)
    found = compare_boundaries([t.encode_with_offsets(text) for t in toks])
    bounds = [token_boundaries(t, text) for t in toks]
    assert [set(c.boundaries.tolist()) for c in found] == bounds
    assert found[0].differing == bounds[0] - (bounds[1] | bounds[2])
    for i in (1, 2):
        assert found[i].differing == bounds[i] - bounds[0]
        assert found[i].agreement == boundary_agreement(toks[0], toks[i], text)


def test_interior_boundaries_are_ascending_and_skip_empty_tokens(toks):
    enc = toks[0].encode_with_offsets("a b c")
    enc.byte_ends.insert(1, enc.byte_ends[0])  # a token of no bytes repeats its neighbour's end
    assert interior_boundaries(enc).tolist() == [1, 3]


def test_alone_every_boundary_is_one_no_other_has_and_none_gives_nothing(toks):
    (only,) = compare_boundaries([toks[1].encode_with_offsets("hello world, again")])
    assert only.differing == set(only.boundaries.tolist()) == {5, 11, 12} and only.agreement.f1 == 1.0
    assert compare_boundaries([]) == []


def test_a_stop_asked_while_the_sets_are_built_cancels(toks):
    encs = [t.encode_with_offsets("naïve tokenization") for t in (toks[0], toks[2])]
    with pytest.raises(Cancelled):
        compare_boundaries(encs, should_stop=lambda: True)


def test_the_differing_boundaries_are_read_from_their_array_as_a_set():
    """Kept as the ascending array they come in (a Python set of a big text's hundreds of
    thousands rehashed with the interpreter lock held as it grew), they answer as that set does."""
    import numpy as np

    from bpeinspect.core.analysis.compare import compare_boundary_arrays

    rng = np.random.default_rng(3)
    bounds = [np.unique(rng.integers(0, 50_000, n)) for n in (20_000, 15_000, 25_000)]
    found = compare_boundary_arrays(bounds)
    sets = [set(b.tolist()) for b in bounds]
    want = [sets[0] - (sets[1] | sets[2]), sets[1] - sets[0], sets[2] - sets[0]]
    for c, w in zip(found, want, strict=True):
        assert isinstance(c.differing.offsets, np.ndarray)  # the array itself, no set made of it
        assert not isinstance(c.differing, set) and len(c.differing) == len(w) and c.differing == w
        assert sorted(c.differing) == sorted(w)
        probes = rng.integers(-5, 50_005, 3000).tolist()
        assert [p in c.differing for p in probes] == [p in w for p in probes]
    assert "5" not in found[0].differing and 2.5 not in found[0].differing
