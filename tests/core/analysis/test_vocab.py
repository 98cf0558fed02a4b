"""Token metadata, vocabulary search and unreachable/unused tokens (bpeinspect.core.analysis.vocab)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer
from bpeinspect.core.analysis.vocab import (
    BYTES,
    COMMON,
    QueryError,
    TokenQuery,
    Unreachable,
    VocabIndex,
    parse_hex,
    parse_ids,
    positions,
    token_counts,
    token_kind,
    token_scripts,
    unreachable_tokens,
    unused_tokens,
)
from tests.paths import SHARED
from tests.reference import tiktoken_encoding

BUILTINS = ["r50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    """minbpe's GPT-4-pattern tokenizer trained on taylorswift.txt (vocab 1024)."""
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text())
    entry = ref["taylorswift_regex_gpt4_1024"]
    return Tokenizer.from_merges([(a, b) for a, b, _ in entry["merges"]], pattern="gpt4")


@pytest.fixture(scope="module")
def corpus() -> str:
    return (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")


def test_scripts_and_kinds() -> None:
    assert token_scripts(" Привет".encode()) == ("Cyrillic",)
    assert token_scripts("カタカナ漢字".encode()) == ("Katakana", "Han")
    assert token_scripts(b" ...") == (COMMON,)
    assert token_scripts(b"\xf0\x9f") == (BYTES,)
    assert token_scripts("é".encode()) == ("Latin",)
    assert token_kind(b" the") == "word"
    assert token_kind(b"x", special=False) == "byte"
    assert token_kind(b"<|endoftext|>", special=True) == "special"
    assert token_kind(b"\xe4\xb8") == "partial"
    assert token_kind(b"!!") == "punctuation"
    assert token_kind(b"++") == "symbol"
    assert token_kind(b" 123") == "number"
    assert token_kind(b"   ") == "whitespace"
    assert token_kind(b"x2") == "mixed"


# -- search ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cl100k_index() -> VocabIndex:
    return VocabIndex(load_tokenizer("cl100k_base"))


@pytest.mark.parametrize("needle", ["ing", " the", "中", "\n", "é"])
def test_text_and_hex_search_match_a_scan(cl100k_index: VocabIndex, needle: str) -> None:
    tok = cl100k_index.tok
    want = [i for i in tok.ids() if needle.encode() in tok.token_bytes(i)]
    assert want
    assert cl100k_index.search(TokenQuery(text=needle)) == want
    assert cl100k_index.search(TokenQuery(text=needle.encode().hex(" "), mode="hex")) == want
    typed = needle.replace(" ", "␣").replace("\n", "↵")
    assert cl100k_index.search(TokenQuery(text=typed)) == want


def test_ignore_case_and_regex(cl100k_index: VocabIndex) -> None:
    tok = cl100k_index.tok
    texts = {i: tok.token_bytes(i).decode("utf-8", "replace") for i in tok.ids()}
    folded = cl100k_index.search(TokenQuery(text="HeLLo", ignore_case=True))
    assert folded == [i for i, t in texts.items() if "hello" in t.casefold()]
    assert tok.token_id(" Hello") in folded and tok.token_id("hello") in folded
    pattern = r"^ [A-Z][a-z]+ing$"
    assert cl100k_index.search(TokenQuery(text=pattern, mode="regex")) == sorted(
        i for i, t in texts.items() if re.search(pattern, t)
    )
    han = cl100k_index.search(TokenQuery(text=r"\p{Han}{2}", mode="regex"))
    assert han and all(sum("\u4e00" <= c <= "\u9fff" for c in texts[i]) >= 2 for i in han)


def test_id_search(cl100k_index: VocabIndex) -> None:
    assert cl100k_index.search(TokenQuery(text="5, 100-103 ,7", mode="id")) == [5, 7, 100, 101, 102, 103]
    # ids that do not exist are skipped (cl100k has no token 100256)
    assert cl100k_index.search(TokenQuery(text="100255-100262", mode="id")) == [100255, 100257, 100258, 100259, 100260]
    assert parse_ids("9-3") == [(3, 9)]


def test_filters(cl100k_index: VocabIndex) -> None:
    tok = cl100k_index.tok
    ids = cl100k_index.search(TokenQuery(min_len=10, max_len=12))
    assert ids == [i for i in tok.ids() if 10 <= len(tok.token_bytes(i)) <= 12]
    specials = cl100k_index.search(TokenQuery(special=True))
    assert specials == sorted(tok.special_tokens.values())
    assert not set(cl100k_index.search(TokenQuery(special=False))) & set(specials)
    cyr = cl100k_index.search(TokenQuery(script="Cyrillic"))
    assert len(cyr) > 500
    assert cyr == [i for i in tok.ids() if "Cyrillic" in token_scripts(tok.token_bytes(i)) and not tok.is_special(i)]
    words = cl100k_index.search(TokenQuery(text="tion", kind="word", max_len=6))
    assert words and all(token_kind(tok.token_bytes(i)) == "word" and b"tion" in tok.token_bytes(i) for i in words)


def test_sorting(cl100k_index: VocabIndex) -> None:
    tok = cl100k_index.tok
    by_len = cl100k_index.search(TokenQuery(text="the"), sort="length", descending=True)
    lens = [len(tok.token_bytes(i)) for i in by_len]
    assert lens == sorted(lens, reverse=True)
    by_token = cl100k_index.search(TokenQuery(text="the"), sort="token")
    assert [tok.token_bytes(i) for i in by_token] == sorted(tok.token_bytes(i) for i in by_token)
    assert set(by_len) == set(by_token) == set(cl100k_index.search(TokenQuery(text="the")))


@pytest.mark.parametrize(
    "query",
    [TokenQuery(text="(", mode="regex"), TokenQuery(text="zz", mode="hex"), TokenQuery(text="1-x", mode="id")],
)
def test_bad_queries_raise_query_error(cl100k_index: VocabIndex, query: TokenQuery) -> None:
    with pytest.raises(QueryError):
        cl100k_index.search(query)
    assert issubclass(QueryError, ValueError)


def test_filter_needs_computed_sets(cl100k_index: VocabIndex) -> None:
    fresh = VocabIndex(cl100k_index.tok)
    with pytest.raises(QueryError, match="unreachable"):
        fresh.search(TokenQuery(unreachable=True))
    with pytest.raises(QueryError, match="corpus"):
        fresh.search(TokenQuery(unused=True))


def test_search_can_be_cancelled(cl100k_index: VocabIndex) -> None:
    with pytest.raises(Cancelled):
        cl100k_index.search(TokenQuery(text="a"), should_stop=lambda: True)


def test_parse_hex() -> None:
    assert parse_hex("E4 b8 ad") == parse_hex("0xe4b8ad") == parse_hex("\\xe4\\xb8\\xad") == "中".encode()


# -- unreachable tokens -----------------------------------------------------------------------------


def test_unreachable_pair_rule_hand_made() -> None:
    # a+b merges before b+c, so "abc" (made from a+bc) can never be produced
    tok = Tokenizer.from_merges([(97, 98), (98, 99), (97, 257)], pattern=None)
    assert unreachable_tokens(tok) == [Unreachable(258, "merges", (256, 99))]


def test_unreachable_rank_rule_hand_made() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"a!": 257, b"bc": 258})
    tok = Tokenizer(ranks, pattern="cl100k")
    # "a!" is one piece for the merges, but the split rule cuts "a" from "!"
    found = unreachable_tokens(tok)
    assert found == [Unreachable(257, "split", (97, 33))]
    assert tok.encode_piece(b"a!") == [257]


def _naive_pair_encode(ranks: dict[tuple[int, int], int], bts: bytes) -> list[int]:
    """minbpe's encode loop, written independently of the core, as the oracle."""
    ids = list(bts)
    while len(ids) >= 2:
        pairs = set(zip(ids, ids[1:]))
        pair = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        new = 256 + ranks[pair]
        out, i = [], 0
        while i < len(ids):
            if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
                out.append(new)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


@pytest.mark.parametrize("extra", [0, 40])
def test_unreachable_trained_matches_a_naive_encoder(trained: Tokenizer, extra: int) -> None:
    if extra:
        # late merges of a byte with learnt tokens: most of them are shadowed by earlier merges
        merges = list(trained.merges)
        have = {trained.token_bytes(i) for i in trained.ids()}
        for t in range(300, 300 + 4 * extra, 4):
            if b"q" + trained.token_bytes(t) not in have:
                merges.append((ord("q"), t))
                have.add(b"q" + trained.token_bytes(t))
        # and joins across "e|r", which merge 0 ("er") takes first
        ends_e = [i for i in trained.ids() if trained.token_bytes(i).isalpha() and trained.token_bytes(i).endswith(b"e")]
        starts_r = [i for i in trained.ids() if trained.token_bytes(i).isalpha() and trained.token_bytes(i).startswith(b"r")]
        for a, b in list(zip(ends_e[1:], starts_r[1:]))[:extra]:
            if trained.token_bytes(a) + trained.token_bytes(b) not in have:
                merges.append((a, b))
                have.add(trained.token_bytes(a) + trained.token_bytes(b))
        trained = Tokenizer.from_merges(merges, pattern="gpt4")
    found = {u.id: u for u in unreachable_tokens(trained)}
    if extra:
        assert {u.reason for u in found.values()} == {"split", "merges"}
    ranks = {pair: r for r, pair in enumerate(trained.merges)}
    for i in trained.ids():
        bts = trained.token_bytes(i)
        piece_ok = _naive_pair_encode(ranks, bts) == [i]
        try:
            text_ok = trained.encode_ordinary(bts.decode("utf-8")) == [i]
        except UnicodeDecodeError:
            text_ok = True
        assert (i not in found) == (piece_ok and text_ok), i


@pytest.mark.parametrize("name", BUILTINS)
def test_unreachable_builtins_match_tiktoken(name: str) -> None:
    tok = load_tokenizer(name)
    enc = tiktoken_encoding(name)  # tiktoken's own pattern and ranks, not ours
    found = {u.id: u for u in unreachable_tokens(tok)}
    for i in tok.ids():
        if tok.is_special(i):
            assert i not in found
            continue
        bts = tok.token_bytes(i)
        piece = enc._encode_single_piece(bts)
        try:
            text = enc.encode_ordinary(bts.decode("utf-8"))
        except UnicodeDecodeError:
            text = [i]
        reachable = piece == [i] and text == [i]
        assert (i not in found) == reachable, (i, bts)
        if i in found:
            assert list(found[i].produced) == (piece if piece != [i] else text)
    if name == "o200k_base":  # tokens spanning a split, e.g. "\n//" and " I'"
        assert tok.token_id(b"\n//") in found and tok.token_id(b" I'") in found


def test_unreachable_cancel() -> None:
    with pytest.raises(Cancelled):
        unreachable_tokens(load_tokenizer("gpt2"), should_stop=lambda: True)


# -- unused tokens ----------------------------------------------------------------------------------


def test_token_counts_match_whole_encoding(trained: Tokenizer, corpus: str) -> None:
    seen: list[tuple[int, int]] = []
    counts = token_counts(trained, corpus, progress=lambda d, t: seen.append((d, t)))
    assert counts == Counter(trained.encode_ordinary(corpus))
    assert seen and seen[-1][0] == seen[-1][1] > 0


def test_unused_tokens_of_trained_tokenizer(trained: Tokenizer, corpus: str) -> None:
    used = set(trained.encode_ordinary(corpus))
    unused = unused_tokens(trained, corpus)
    assert unused == [i for i in trained.ids() if i not in used]
    # every merge was learnt from this corpus, so each unused merged token is one that later merges
    # always absorbed (" Retrie" -> " Retriev..."): it must be a part of some other token
    merged = [i for i in unused if i >= 256]
    assert trained.token_id(" Retrie") in merged
    g = trained.merge_graph
    assert all(g.children(i) for i in merged)


def test_unused_tokens_documents_are_encoded_separately() -> None:
    tok = Tokenizer.from_merges([(97, 98), (256, 99)], pattern=None)
    assert 256 in unused_tokens(tok, "abc")
    assert 257 in unused_tokens(tok, ["ab", "c"]) and 256 not in unused_tokens(tok, ["ab", "c"])


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table (the alphabet of byte-level tokenizer.json files)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, n = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


def test_sorted_orders_equal_python_key_sorts() -> None:
    """The numpy orders (built once per column) give exactly what a keyed sorted() gives,
    ties by id, descending the reverse; on a subset too; bytes ending in NUL sort after their prefix."""
    tok = Tokenizer.from_merges([(97, 0), (256, 0), (97, 98)], pattern=None, special_tokens={"<|s|>": 300})
    for t, ix in ((tok, VocabIndex(tok)), (load_tokenizer("gpt2"), VocabIndex(load_tokenizer("gpt2")))):
        keys = {
            "rank": lambda i, ix=ix: (r if (r := ix.rank(i)) is not None else -1, i),
            "token": lambda i, t=t: (t.token_bytes(i), i),
            "length": lambda i, t=t: (len(t.token_bytes(i)), i),
            "script": lambda i, ix=ix: ("+".join(ix.scripts(i)), i),
            "kind": lambda i, ix=ix: (ix.kind(i), i),
        }
        ids = ix.ids()
        for sort, key in keys.items():
            for desc in (False, True):
                assert ix.sorted(ids, sort, desc) == sorted(ids, key=key, reverse=desc), (sort, desc)
                assert ix.sorted(ids[::3], sort, desc) == sorted(ids[::3], key=key, reverse=desc), (sort, desc)
    assert positions([5, 2, 7]).tolist() == [-1, -1, 1, -1, -1, 0, -1, 2] and len(positions([])) == 0


def test_unreachable_loaded_pair_rule_file_matches_hf_tokenizers() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    path = SHARED / "vocabs" / "gpt2" / "tokenizer.json"
    tok = load_tokenizer(path)
    assert not tok.uses_rank_rule
    hf = tokenizers.Tokenizer.from_file(str(path))
    table = _bytes_to_unicode()
    found = {u.id for u in unreachable_tokens(tok)}
    for i in tok.ids():
        if tok.is_special(i):
            continue
        bts = tok.token_bytes(i)
        piece = [t.id for t in hf.model.tokenize("".join(table[b] for b in bts))]
        try:
            text = hf.encode(bts.decode("utf-8"), add_special_tokens=False).ids
        except UnicodeDecodeError:
            text = [i]
        assert (i not in found) == (piece == [i] and text == [i]), (i, bts)


def test_sorting_a_whole_vocabulary_by_script_keeps_the_collector_waiting():
    """The first sort by script makes a tuple of scripts per token: a
    collection meanwhile walks the whole heap with every other thread locked out (half a
    second beside a window's tokenizers and text). None runs while the index sorts or
    searches, and the collector is on again after."""
    import gc

    index = VocabIndex(load_tokenizer("cl100k_base"))
    ran: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            ran.append(info["generation"])

    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(50)  # a collection every few new objects, if the collector may run
    gc.callbacks.append(note)
    try:
        rows = index.search(TokenQuery(), sort="script")
        found = index.search(TokenQuery(text="ing"), sort="script")
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)
    assert len(rows) == len(load_tokenizer("cl100k_base").ids()) and found
    assert len(ran) <= 5 and gc.isenabled(), len(ran)  # a young one may come as a call returns
