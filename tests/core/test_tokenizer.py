"""A tokenizer is composed of parts: normalizer, pre-tokenizer, model, decoder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.decoder import Decoder
from bpeinspect.core.models import MergeListBPE, Model, RankBPE, ScoreBPE
from bpeinspect.core.normalize import NFC, Prepend
from bpeinspect.core.pretokenizer import PreTokenizer
from bpeinspect.core.sentencepiece import SentencePieceBPE
from bpeinspect.core.split.rules import resolve_rule
from bpeinspect.core.tokenizer import Tokenizer

PACKAGE = Path(__file__).resolve().parents[2] / "bpeinspect"
BYTES = {bytes([b]): b for b in range(256)}
TEXTS = ["hello world", "héllo wörld  ", "  leading and trailing  ", "x" * 300, "日本語のテキスト", ""]


def _sources() -> list[tuple[str, ast.AST]]:
    return [(p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_class_in_the_package_derives_from_tokenizer() -> None:
    found = [f"{rel}: {node.name}" for rel, tree in _sources() for node in ast.walk(tree)
             if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Tokenizer") for b in node.bases)]
    assert found == []


def test_no_code_branches_on_the_tokenizers_exact_type() -> None:
    found = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                text = ast.unparse(node)
                if text.startswith("type(") and "Tokenizer" in text:
                    found.append(f"{rel}: {text}")
    assert found == []


def test_every_model_keeps_the_one_contract() -> None:
    members = [n for n in dir(Model) if not n.startswith("_")] + list(Model.__annotations__)
    models = [RankBPE(BYTES), MergeListBPE(BYTES | {b"ab": 256}, [(97, 98)]),
              ScoreBPE(["<unk>", "a", "b", "ab"], [2, 1, 1, 1], scores=[0, -3, -3, -1], unk_id=0)]
    for model in models:
        assert [m for m in members if not hasattr(model, m)] == [], type(model).__name__


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_composing_the_parts_by_hand_encodes_as_the_constructor(name: str) -> None:
    built = load_tokenizer(name)
    model = RankBPE(built.mergeable_ranks)
    pre = PreTokenizer(built.split_rule, special_tokens=built.special_tokens)
    composed = Tokenizer.compose(model, pre)
    for text in TEXTS + ["<|endoftext|> after"]:
        assert composed.encode(text, allowed_special="all") == built.encode(text, allowed_special="all")
        assert composed.encode_with_offsets(text).ids == built.encode_with_offsets(text).ids
    assert composed.n_vocab == built.n_vocab and composed.merge_graph.parents(built.encode(" hello")[0]) is not None


def test_a_merge_list_model_merges_only_its_listed_pairs() -> None:
    # "abc": a+b is listed, b+c is listed earlier; only the listed merges, first listed first
    model = MergeListBPE(BYTES | {b"ab": 256, b"bc": 257, b"abc": 258}, [(98, 99), (97, 98), (97, 257)])
    tok = Tokenizer.compose(model, PreTokenizer(resolve_rule(None)))
    assert tok.encode("abc") == [258] and tok.encode("ab") == [256]
    assert tok.merge_rank(98, 99) == 0 and tok.merge_result(97, 257) == 258 and tok.merge_result(256, 99) is None
    assert tok.merges == [(98, 99), (97, 98), (97, 257)] and not tok.uses_rank_rule


def test_sentencepiece_bpe_is_a_tokenizer_of_sentencepiece_parts() -> None:
    pieces = ["<unk>", "▁", "h", "i", "▁h", "▁hi", "<s>"]
    tok = SentencePieceBPE(pieces, [2, 1, 1, 1, 1, 1, 3], scores=[0, -5, -6, -7, -1, -2, 0], unk_id=0,
                           special_tokens={"<s>": 6}, byte_fallback=False, strip_leading_space=True)
    assert type(tok) is Tokenizer and isinstance(tok.model, ScoreBPE) and not tok.byte_level
    assert tok.encode_ordinary("▁hi▁x") == [5, 1, 0]
    assert tok.decode([5, 4]) == "hi h"  # the decoder drops the dummy prefix's space
    assert tok.encode("<s>▁hi", allowed_special="all") == [6, 5]
    assert tok.leaf_label(2) == "character" and tok.leaf_label(6) == "special" and tok.kind(6) == "control"


def test_the_first_segment_may_have_its_own_normalizer() -> None:
    # a normalizer for the first segment only (Metaspace's "first" scheme): x is prefixed once
    model = RankBPE(BYTES | {b"xa": 256})
    pre = PreTokenizer(resolve_rule(None), special_tokens={"<s>": 257})
    tok = Tokenizer.compose(model, pre, normalizer=None, first_normalizer=Prepend("x"))
    assert tok.encode("a<s>a", allowed_special="all") == [256, 257, 97]
    assert tok.encode_with_offsets("a<s>a").ids == [256, 257, 97]


def test_a_decoder_finishes_the_joined_bytes() -> None:
    tok = Tokenizer.compose(RankBPE(BYTES), PreTokenizer(resolve_rule("gpt2")),
                            decoder=Decoder(strip_leading_space=True))
    assert tok.decode(tok.encode(" hi")) == "hi" and tok.decode_bytes([32, 32]) == b" "


def test_a_normalizer_applies_before_the_pre_tokenizer_with_offsets_into_the_users_text() -> None:
    model = RankBPE(BYTES | {"é".encode(): 256})
    tok = Tokenizer.compose(model, PreTokenizer(resolve_rule("gpt2")), normalizer=NFC())
    enc = tok.encode_with_offsets("e\u0301")
    assert enc.ids == [256] and (enc.char_starts[0], enc.char_ends[0]) == (0, 2)


def test_with_special_tokens_shares_the_model_and_its_cache() -> None:
    base = load_tokenizer("cl100k_base")
    chat = base.with_special_tokens({"<|im_start|>": 100264})
    assert chat.model is base.model and chat._cache is base._cache
    assert chat.encode("<|im_start|>hi", allowed_special="all") == [100264, 6151]
    assert "<|im_start|>" not in base.special_tokens and base.token_id("<|im_start|>") is None


def test_a_sentencepiece_tokenizer_takes_more_special_tokens() -> None:
    tok = SentencePieceBPE(["<unk>", "▁", "h", "i", "▁h", "▁hi"], [2, 1, 1, 1, 1, 1],
                           scores=[0, -5, -6, -7, -1, -2], byte_fallback=False, unk_id=0)
    chat = tok.with_special_tokens({"<turn>": 6})
    assert chat.model is tok.model and chat.encode("▁hi<turn>▁h", allowed_special="all") == [5, 6, 4]
