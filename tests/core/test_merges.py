"""Merge structure: recovered parents, trees, children and traces."""

from __future__ import annotations

import pytest

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer, trace
from bpeinspect.core.merges import MergeGraph, iter_tree
from tests.core.corpus import PROSE, SHARED, code_samples


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes (written out from its published definition)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping, extra = {}, 0
    for b in range(256):
        if b in keep:
            mapping[chr(b)] = b
        else:
            mapping[chr(256 + extra)] = b
            extra += 1
    return mapping


def test_gpt2_parents_equal_vocab_bpe() -> None:
    """Parents recovered from r50k's ranks are exactly GPT-2's published merges, in order."""
    tok = load_tokenizer("gpt2")
    dec = gpt2_byte_decoder()
    lines = (SHARED / "vocabs" / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").splitlines()[1:]
    published = []
    for line in lines:
        if not line:
            continue
        a, b = line.split(" ")
        published.append((bytes(dec[c] for c in a), bytes(dec[c] for c in b)))
    ours = [(tok.token_bytes(a), tok.token_bytes(b)) for a, b in tok.merges]
    assert ours == published
    assert tok.merge_graph.unbuildable() == []


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_recovered_parents_are_consistent(name: str) -> None:
    tok = load_tokenizer(name)
    g = tok.merge_graph
    ids = [i for i in tok.ids() if not tok.is_special(i)]
    for i in ids[256::37]:
        p = g.parents(i)
        assert p is not None
        if g.is_buildable(i):
            assert tok.token_bytes(p[0]) + tok.token_bytes(p[1]) == tok.token_bytes(i)
            assert p[0] < i and p[1] < i, "parents are merged before their child"
            # replaying BPE on the token's own bytes ends in the token
            assert tok.encode_piece(tok.token_bytes(i)) == [i]
    assert g.parents(ids[0]) is None  # a single byte has no parents


def test_unbuildable_tokens_are_flagged_not_hidden() -> None:
    # "abc" exists, but with "bc" made before "ab" the merges reach "a" + "bc" only at
    # rank 260, after "abc"'s own rank 259: nothing builds "abc" in rank order.
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"xy": 258, b"abc": 259})
    # parents of abc under the rank rule: BPE on "abc" with ranks < 259 gives [a, bc] -> abc
    tok = Tokenizer(ranks, pattern=None)
    g = tok.merge_graph
    assert g.parents(259) == (ord("a"), 256)
    assert g.is_buildable(259)
    ranks2 = {bytes([i]): i for i in range(256)}
    ranks2.update({b"abcd": 256, b"ab": 257, b"cd": 258})
    tok2 = Tokenizer(ranks2, pattern=None)
    g2 = tok2.merge_graph
    assert not g2.is_buildable(256)
    assert g2.unbuildable() == [256]
    assert g2.parents(256) == (257, 258)  # its best split is still shown
    assert tok2.encode_ordinary("abcd") == [256]  # the whole-piece lookup still emits it
    assert len(tok2.merges) == 3


def test_tree_goes_down_to_bytes() -> None:
    tok = load_tokenizer("cl100k_base")
    g = tok.merge_graph
    for word in [" tokenization", "Hello", " 🎉", "    ", "ение"]:
        for t in tok.encode(word):
            node = g.tree(t)
            assert b"".join(tok.token_bytes(leaf) for leaf in node.leaves()) == tok.token_bytes(t)
            for _depth, n in iter_tree(node):
                if n.left is not None and n.right is not None:
                    assert n.left.token + n.right.token == n.token
                    assert n.rank == n.id
                else:
                    assert len(n.token) == 1


def test_children_invert_parents() -> None:
    tok = load_tokenizer("gpt2")
    g = tok.merge_graph
    the = tok.token_id(b" the")
    kids = g.children(the)
    assert kids, "' the' is part of longer tokens"
    for k in kids:
        assert the in g.parents(k)
    assert tok.token_id(b" them") in kids or tok.token_id(b" there") in kids


def test_the_children_index_checks_as_it_goes_and_can_be_cancelled() -> None:
    """A GUI's worker builds the index: it must reach its ``should_stop`` every few thousand
    tokens (the worker gives way to the window there), not once before a 100 ms loop."""
    tok = load_tokenizer("gpt2")
    g = MergeGraph(tok)
    g.compute_all()
    calls: list[int] = []

    def stop_after(n: int):
        def should_stop() -> bool:
            calls.append(1)
            return len(calls) > n

        return should_stop

    with pytest.raises(Cancelled):
        g.index_children(should_stop=stop_after(3))
    assert len(calls) == 4
    calls.clear()
    g.index_children(should_stop=stop_after(10**9))  # a cancelled index is built again from the start
    assert len(calls) >= 20  # 50k tokens, with their lists sorted
    expected: dict[int, set[int]] = {}
    for t in tok.ids():
        p = g.parents(t)
        if p is not None and g.is_buildable(t):
            for q in p:
                expected.setdefault(q, set()).add(t)
    assert len(expected) > 1000
    for q, kids in expected.items():
        assert g.children(q) == sorted(kids)


def test_trace_replays_the_encoder() -> None:
    for name in ["r50k_base", "cl100k_base", "o200k_base"]:
        tok = load_tokenizer(name)
        pieces = [p for text in PROSE + code_samples(5_000) for p in tok.split_rule.pieces(text)][:400]
        for piece in pieces:
            tr = trace(tok, piece)
            parts = list(tr.initial)
            assert b"".join(tok.token_bytes(i) for i in parts) == piece.encode()
            for step in tr.steps:
                assert (parts[step.position], parts[step.position + 1]) == (step.left, step.right)
                assert step.rank == tok.merge_rank(step.left, step.right)
                parts[step.position : step.position + 2] = [step.result]
                assert tuple(parts) == step.parts
            if not tr.shortcut:
                assert tuple(parts) == tr.result
            assert list(tr.result) == tok.encode_piece(piece)


def test_trace_hand_checked() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258})
    tok = Tokenizer(ranks, pattern=None)
    tr = trace(tok, "abc")
    assert [(s.left, s.right, s.result, s.rank) for s in tr.steps] == [(97, 98, 256, 256), (256, 99, 258, 258)]
    assert tr.result == (258,)
    # the pair rule with explicit merges: bc first
    tok2 = Tokenizer.from_merges([(98, 99), (97, 256)], pattern=None)
    tr2 = trace(tok2, "abc")
    assert [(s.left, s.right, s.rank) for s in tr2.steps] == [(98, 99, 0), (97, 256, 1)]
    assert tok2.merges == [(98, 99), (97, 256)]
    assert tok2.merge_graph.tree(257).leaves() == [97, 98, 99]
