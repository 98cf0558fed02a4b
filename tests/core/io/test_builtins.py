"""The shipped rank files are parsed a slice at a time (no long hold of the interpreter), as one."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpeinspect.core import Cancelled
from bpeinspect.core.encoding import token_lengths
from bpeinspect.core.io import builtins


@given(st.binary(max_size=300).map(lambda b: bytes(b"ab\r\n "[x % 5] for x in b)), st.integers(1, 40))
def test_lines_cut_in_slices_are_splitlines(data: bytes, size: int) -> None:
    real = builtins._SLICE
    builtins._SLICE = size
    try:
        assert list(builtins._lines(data)) == data.splitlines()
    finally:
        builtins._SLICE = real


def test_a_rank_file_parsed_in_small_slices_is_the_same(monkeypatch) -> None:
    path = builtins.resources_dir() / "vocabs" / builtins.BUILTINS["r50k_base"].filename
    data = gzip.decompress(path.read_bytes())
    whole = builtins.parse_tiktoken_ranks(data)
    monkeypatch.setattr(builtins, "_SLICE", 997)  # cuts fall inside lines, never across one
    assert builtins.parse_tiktoken_ranks(data) == whole
    assert builtins.parse_tiktoken_ranks(data.replace(b"\n", b"\r\n")) == whole
    assert len(whole) == 50256


def test_parsing_a_rank_file_asks_the_callers_should_stop_every_thousand_lines() -> None:
    # A GUI's loading worker gives way to the window there: without it the window waited for the
    # interpreter lock through most of o200k_base's parse (stalls of 0.2-0.5 s next to its work)
    path = builtins.resources_dir() / "vocabs" / builtins.BUILTINS["r50k_base"].filename
    data = gzip.decompress(path.read_bytes())
    asked: list[int] = []
    ranks = builtins.parse_tiktoken_ranks(data, should_stop=lambda: asked.append(len(asked)) or False)
    assert len(ranks) == 50256 and len(asked) == 50256 // 1024
    assert builtins.parse_tiktoken_ranks(data) == ranks and len(asked) == 50256 // 1024  # only the caller's
    with pytest.raises(Cancelled):
        builtins.parse_tiktoken_ranks(data, should_stop=lambda: True)


def test_token_lengths_over_many_slices_with_holes() -> None:
    decoder = {i * 3: b"x" * (i % 7) for i in range(40_000)}  # more ids than one slice, with gaps
    lens = token_lengths(decoder, 120_001)
    want = np.zeros(120_001, dtype=np.int64)
    for i, b in decoder.items():
        want[i] = len(b)
    assert (lens == want).all()


def test_loading_a_builtin_asks_should_stop_before_and_after_the_parse(monkeypatch) -> None:
    """Reading and checking the file, building the tokenizer and its first encode's tables ask
    ``should_stop`` too, and a stop asked in any of them ends the load: ~40 ms before the parse and
    ~80 ms after it ran without a check for o200k_base, and the window waited for the interpreter."""
    from bpeinspect.core.tokenizer import Tokenizer

    phase = ["read"]
    parse, init = builtins.parse_tiktoken_ranks, Tokenizer.__init__

    def parsing(*args, **kwargs):
        phase[0] = "parse"
        out = parse(*args, **kwargs)
        phase[0] = "build"
        return out

    def building(self, *args, **kwargs):
        init(self, *args, **kwargs)
        phase[0] = "encode"

    monkeypatch.setattr(builtins, "parse_tiktoken_ranks", parsing)
    monkeypatch.setattr(Tokenizer, "__init__", building)

    def load(stop_in: str | None) -> dict[str, int]:
        asked = dict.fromkeys(("read", "parse", "build", "encode"), 0)

        def should_stop() -> bool:
            asked[phase[0]] += 1
            return phase[0] == stop_in

        phase[0] = "read"
        builtins.forget_builtins()
        tok = builtins.load_builtin("r50k_base", should_stop=should_stop)
        tok.encode_with_offsets("Hello", should_stop=should_stop)
        return asked

    try:
        asked = load(None)
        assert min(asked.values()) >= 2, asked  # 50k tokens: a few slices in every phase
        for stop_in in ("read", "build", "encode"):
            with pytest.raises(Cancelled):
                load(stop_in)
    finally:
        builtins.forget_builtins()


def test_tiktokens_encodings_are_all_built_in_and_variants_share_their_bases_ranks() -> None:
    VARIANTS = builtins.VARIANTS

    load_builtin = builtins.load_builtin
    for name, variant in VARIANTS.items():
        tok, base = load_builtin(name), load_builtin(variant.base)
        assert tok.name == name and base.name == variant.base
        assert tok.ranks == base.ranks and set(variant.special_tokens) <= set(tok.special_tokens)
    assert load_builtin("p50k_base").n_vocab == 50281 and load_builtin("p50k_edit").n_vocab == 50284


def test_a_second_name_of_a_special_token_covers_its_own_text_in_offsets() -> None:
    tok = builtins.load_builtin("o200k_harmony")
    text = "a<|reserved_200018|>b <|endofprompt|>"
    spans = [(t.id, t.char_span) for t in tok.encode_with_offsets(text)]
    assert spans == [(64, (0, 1)), (200018, (1, 20)), (65, (20, 21)), (220, (21, 22)), (200018, (22, 37))]
    assert tok.decode([200018]) == "<|endofprompt|>"


def test_a_builtin_loaded_again_is_the_same_object_and_a_cancelled_load_is_not_kept() -> None:
    builtins.forget_builtins()
    try:
        with pytest.raises(Cancelled):
            builtins.load_builtin("r50k_base", should_stop=lambda: True)
        asked: list[bool] = []
        tok = builtins.load_builtin("r50k_base", should_stop=lambda: asked.append(True) or False)
        assert asked and tok.n_vocab == 50257  # loaded, not a half-built one kept from the cancel
        asked.clear()
        assert builtins.load_builtin("r50k_base", should_stop=lambda: asked.append(True) or False) is tok
        assert not asked  # kept: nothing was read again
    finally:
        builtins.forget_builtins()
