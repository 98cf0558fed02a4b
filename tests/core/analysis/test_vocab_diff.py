"""Vocabularies compared by token bytes (bpeinspect.core.analysis.vocab_diff), checked against
counts computed from tiktoken's own tables, and the one script classifier they use."""

from __future__ import annotations

from collections import defaultdict

import pytest
import regex

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer
from bpeinspect.core.analysis.token_categories import (
    CODE_PUNCTUATION,
    DIGITS,
    MIXED,
    NO_SCRIPT_LABEL,
    PARTIAL,
    WHITESPACE,
    token_category,
)
from bpeinspect.core.analysis.vocab_diff import compare_vocabularies, merges_in_common
from tests.paths import SHARED
from tests.reference import tiktoken_encoding

PAIRS = [("cl100k_base", "o200k_base"), ("r50k_base", "cl100k_base")]


def _oracle(name_a: str, name_b: str) -> dict:
    """The counts, straight from tiktoken's tables (its public accessors only)."""
    ea, eb = tiktoken_encoding(name_a), tiktoken_encoding(name_b)
    ta, tb = set(ea.token_byte_values()), set(eb.token_byte_values())
    shared = ta & tb
    specials = {e.encode_single_token(s) for e in (ea, eb) for s in e.special_tokens_set}
    prefix = 0
    while prefix not in specials:
        try:
            same = ea.decode_single_token_bytes(prefix) == eb.decode_single_token_bytes(prefix)
        except KeyError:
            break
        if not same:
            break
        prefix += 1
    return {
        "a": ta,
        "b": tb,
        "shared": len(shared),
        "only_a": len(ta - tb),
        "only_b": len(tb - ta),
        "same_id": sum(1 for t in shared if ea.encode_single_token(t) == eb.encode_single_token(t)),
        "id_prefix": prefix,
        "shared_specials": sorted(ea.special_tokens_set & eb.special_tokens_set),
    }


@pytest.fixture(scope="module", params=PAIRS, ids="-".join)
def pair(request):
    a, b = request.param
    diff = compare_vocabularies([(a, load_tokenizer(a)), (b, load_tokenizer(b))])
    return diff, _oracle(a, b)


def test_counts_agree_with_tiktoken_tables(pair) -> None:
    diff, want = pair
    got = diff.as_dict()
    for key in ("shared", "only_a", "only_b", "same_id", "id_prefix", "shared_specials"):
        assert got[key] == want[key], key
    assert got["a"]["tokens"] == len(want["a"]) and got["b"]["tokens"] == len(want["b"])


def test_token_lists_are_tiktokens_sets(pair) -> None:
    diff, want = pair
    assert set(diff.only_tokens(0)) == want["a"] - want["b"]
    assert set(diff.only_tokens(1)) == want["b"] - want["a"]
    assert set(diff.shared_tokens(0, 1)) == want["a"] & want["b"]


def test_composition_counts_every_token_once_and_lengths_match(pair) -> None:
    diff, want = pair
    for side, tokens in zip(diff.sides, (want["a"], want["b"])):
        assert sum(side.composition.values()) == side.tokens == len(tokens)
        by_len: dict[int, int] = defaultdict(int)
        for t in tokens:
            by_len[len(t)] += 1
        assert side.lengths == dict(by_len)


def test_script_categories_hold_only_that_script_by_the_regex_property() -> None:
    """Every token filed under a script has a letter of it and no letter of any other script."""
    enc = tiktoken_encoding("o200k_base")
    fixed = {PARTIAL, WHITESPACE, DIGITS, CODE_PUNCTUATION, MIXED, NO_SCRIPT_LABEL}
    by_script: dict[str, list[str]] = defaultdict(list)
    for t in enc.token_byte_values():
        c = token_category(t)
        if c not in fixed:
            by_script[c].append(t.decode("utf-8"))
    assert {"Latin", "Cyrillic", "Han", "Arabic", "Devanagari", "Hangul"} <= set(by_script)
    for name, texts in by_script.items():
        own = regex.compile(rf"\p{{Script={name}}}")
        others = regex.compile(rf"[^\p{{Script={name}}}\p{{Script=Common}}\p{{Script=Inherited}}\p{{Script=Unknown}}]")
        for text in texts:
            assert own.search(text) and not others.search(text), (name, text)


def test_token_category_fixed_kinds() -> None:
    assert token_category(b"\xe4\xb8") == PARTIAL
    assert token_category(b" \n\t ") == WHITESPACE
    assert token_category(b" 1999") == DIGITS
    assert token_category(b"});\n") == CODE_PUNCTUATION
    assert token_category(" Привет".encode()) == "Cyrillic"
    assert token_category("e\u0301".encode()) == "Latin"  # a combining mark takes its letter's script
    assert token_category("ᜀᜁ".encode()) == "Tagalog"
    assert token_category("aж".encode()) == MIXED
    assert token_category("🙂".encode()) == NO_SCRIPT_LABEL


def test_four_sides_combinations_partition_the_union() -> None:
    names = ["r50k_base", "cl100k_base", "o200k_base"]
    toks = [(n, load_tokenizer(n)) for n in names]
    toks.append(("gpt2.json", load_tokenizer(str(SHARED / "vocabs" / "gpt2" / "tokenizer.json"))))
    diff = compare_vocabularies(toks)
    sets = [set(tiktoken_encoding(n).token_byte_values()) for n in names]
    sets.append(sets[0])  # GPT-2's tokenizer.json holds r50k's tokens
    union = set().union(*sets)
    assert sum(diff.exclusive_counts().values()) == len(union)
    for mask in range(1, 16):
        want = {t for t in union if all((t in sets[k]) == bool(mask >> k & 1) for k in range(4))}
        assert diff.exclusive_counts()[mask] == len(want), mask
    # GPT-2's tokenizer.json is r50k id for id
    assert diff.id_prefix(0, 3) == diff.same_id(0, 3) == 50256
    assert diff.combinations()[:4] == [1, 2, 4, 8] and diff.combinations()[-1] == 15


def test_special_and_added_tokens_are_apart() -> None:
    base = Tokenizer.from_merges([(104, 105)], pattern=None, special_tokens={"<s>": 300})
    other = Tokenizer.from_merges([(104, 105)], pattern=None, special_tokens={"<s>": 257, "</s>": 258})
    diff = compare_vocabularies([("a", base), ("b", other)])
    assert diff.sides[0].tokens == diff.sides[1].tokens == 257
    assert diff.shared_count(0, 1) == 257 and diff.only_count(0) == diff.only_count(1) == 0
    assert diff.shared_specials(0, 1) == ["<s>"]


def test_id_prefix_stops_at_the_first_difference() -> None:
    a = Tokenizer.from_merges([(104, 105), (111, 107), (97, 98)], pattern=None)
    b = Tokenizer.from_merges([(104, 105), (97, 98), (111, 107)], pattern=None)
    diff = compare_vocabularies([("a", a), ("b", b)])
    assert diff.id_prefix(0, 1) == 257  # bytes and "hi"; 257 is "ok" in one, "ab" in the other
    assert diff.same_id(0, 1) == 257 and diff.shared_count(0, 1) == 259


def test_cancel_raises() -> None:
    tok = load_tokenizer("cl100k_base")
    with pytest.raises(Cancelled):
        compare_vocabularies([("a", tok), ("b", tok)], should_stop=lambda: True)


def test_listing_a_combination_asks_should_stop_as_it_goes() -> None:
    """A worker listing a combination's tokens gives way to the window at each check, and stops there."""
    from bpeinspect.core.analysis.vocab_diff import list_tokens

    diff = compare_vocabularies([("a", load_tokenizer("cl100k_base")), ("b", load_tokenizer("r50k_base"))])
    asked = []
    listed = diff.members(1, should_stop=lambda: asked.append(1) is not None)
    assert sorted(listed) == sorted(diff.tokens(1)) and len(asked) >= diff.inclusive_count(1) // 4096
    for sort in ("token", "length"):
        with pytest.raises(Cancelled):
            list_tokens(diff, 3, exact=False, sort=sort, should_stop=lambda: True)


def test_wrong_number_of_sides_is_refused() -> None:
    tok = load_tokenizer("r50k_base")
    with pytest.raises(ValueError, match="2 to 4"):
        compare_vocabularies([("a", tok)])


def test_merges_recovered_from_r50k_ranks_are_gpt2s_merge_list() -> None:
    ranks = load_tokenizer("r50k_base")
    listed = load_tokenizer(str(SHARED / "vocabs" / "gpt2" / "tokenizer.json"))
    got = merges_in_common([("ranks", ranks), ("merges", listed)])
    assert got.totals == (50000, 50000)
    assert got.exclusive == {1: 0, 2: 0, 3: 50000} and got.same_rank[0, 1] == 50000


def test_merges_in_common_of_small_vocabularies() -> None:
    a = Tokenizer.from_merges([(104, 105), (256, 33), (111, 107)], pattern=None)  # hi, hi!, ok
    b = Tokenizer.from_merges([(111, 107), (104, 105)], pattern=None)  # ok, hi
    got = merges_in_common([("a", a), ("b", b)])
    assert got.exclusive == {1: 1, 2: 0, 3: 2}
    assert got.as_dict() == {"merges_a": 3, "merges_b": 2, "shared": 2, "same_rank": 0}


def _letter_pairs(order: int) -> Tokenizer:
    """A small vocabulary: every pair of two lowercase letters, merged in an order of its own."""
    pairs = [(a, b) for a in range(97, 123) for b in range(97, 123)]
    return Tokenizer.from_merges(pairs[order:] + pairs[:order], pattern=None)


def test_the_comparison_works_on_a_slice_of_the_tokens_per_call(monkeypatch):
    """The Vocabularies view's worker compares 200k-token vocabularies next to the window: no
    set operation, array conversion or list made from an array covers more than a slice of the
    tokens (one such C call holds the interpreter, and the GUI thread with it, for tens of ms),
    and the figures are those of whole-set arithmetic."""
    import numpy as np

    from bpeinspect.core.analysis import vocab_diff
    from bpeinspect.core.analysis.vocab_diff import list_tokens
    from tests.c_calls import receiver_sizes

    step = 64
    monkeypatch.setattr(vocab_diff, "_CHECK_EVERY", step)
    made: list[int] = []
    for name in ("array", "asarray", "fromiter"):
        real = getattr(np, name)

        def spy(values, *args, _real=real, **kwargs):
            made.append(len(values) if hasattr(values, "__len__") else kwargs.get("count", -1))
            return _real(values, *args, **kwargs)

        monkeypatch.setattr(np, name, spy)
    toks = [("a", _letter_pairs(0)), ("b", _letter_pairs(300)), ("c", Tokenizer.from_merges([(97, 98)], pattern=None))]
    got: dict = {}

    def work() -> None:
        got["diff"] = compare_vocabularies(toks)
        got["merges"] = merges_in_common(toks)
        got["by id"] = list_tokens(got["diff"], 3, sort="id:1")
        got["all three"] = list_tokens(got["diff"], 7, sort="token")

    calls = receiver_sizes(work, "vocab_diff.py", "token_categories.py")
    heavy = ("intersection", "difference", "union", "update", "tolist", "copy")
    assert not [(n, size) for n, size in calls if n in heavy and size > 2 * step]
    assert not [n for n in made if n > 2 * step]
    sets = [{tok.token_bytes(i) for i in range(tok.n_vocab)} for _, tok in toks]
    diff = got["diff"]
    for mask in range(1, 8):
        inside = set.intersection(*(sets[k] for k in range(3) if mask >> k & 1))
        exact = inside - set().union(*(sets[k] for k in range(3) if not mask >> k & 1))
        assert diff.exclusive_counts()[mask] == len(exact)
        assert sorted(diff.members(mask)) == sorted(exact)
    assert got["all three"] == sorted(sets[0] & sets[1] & sets[2])
    b_ids = {toks[1][1].token_bytes(i): i for i in range(toks[1][1].n_vocab)}
    assert got["by id"] == sorted((sets[0] & sets[1]) - sets[2], key=b_ids.__getitem__)
    pairs = [{(t.token_bytes(a), t.token_bytes(b)) for a, b in t.merges} for _, t in toks]
    assert got["merges"].inclusive_count(3) == len(pairs[0] & pairs[1])


def test_the_comparison_keeps_the_collector_waiting_while_it_builds(monkeypatch):
    """The sets and dicts of a comparison's 200k tokens set off collections that walk them all
    with every other thread locked out (20-30 ms each, next to the window): none runs while
    the vocabularies and their merges are compared (a young one may, as each call returns),
    and the collector is on again after."""
    import gc

    toks = [("a", _letter_pairs(0)), ("b", _letter_pairs(300))]
    ran: list[int] = []

    def note(phase: str, info: dict) -> None:
        if phase == "start":
            ran.append(info["generation"])

    threshold = gc.get_threshold()
    gc.collect()  # no count left over from earlier work to set off an old generation's collection
    gc.set_threshold(5)  # a collection every few new objects, if the collector may run
    gc.callbacks.append(note)
    try:
        compare_vocabularies(toks)
        merges_in_common(toks)
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)
    # about 250 run with the collector free; a few young ones may come as the calls return, or
    # from other threads of the process between them
    assert len(ran) <= 10 and gc.isenabled(), ran


def test_a_comparison_made_again_sorts_only_the_new_tokenizers_tokens(monkeypatch):
    """Adding a tokenizer to a comparison (or changing the reference) compares again: the
    tokenizers already seen are not sorted into categories again, and the figures are those of
    a comparison made from nothing."""
    from bpeinspect.core.analysis import token_categories

    a, b = _letter_pairs(0), _letter_pairs(300)
    c = Tokenizer.from_merges([(97, 98), (99, 100)], pattern=None)
    sorted_tokens: list[bytes] = []
    real = token_categories.token_category

    def counting(token: bytes) -> str:
        sorted_tokens.append(token)
        return real(token)

    monkeypatch.setattr(token_categories, "token_category", counting)
    compare_vocabularies([("a", a), ("b", b)])
    sorted_tokens.clear()
    again = compare_vocabularies([("c", c), ("b", b), ("a", a)])
    assert len(sorted_tokens) == c.n_vocab
    fresh = [Tokenizer.from_merges(list(t.merges), pattern=None) for t in (c, b, a)]
    sorted_tokens.clear()
    first = compare_vocabularies(list(zip("cba", fresh)))
    assert len(sorted_tokens) == sum(t.n_vocab for t in fresh)
    assert again.sides == first.sides
    assert again.exclusive_counts() == first.exclusive_counts()
    assert [again.category(t) for t in again.tokens(7, exact=False)] == [
        first.category(t) for t in first.tokens(7, exact=False)
    ]
    assert again.same_id(0, 1) == first.same_id(0, 1) and again.id_prefix(1, 2) == first.id_prefix(1, 2)


def test_merges_compared_again_are_recovered_only_for_the_new_tokenizer(monkeypatch):
    """Merges in common worked out again (a tokenizer added) take the merges of only the
    tokenizer not seen before, and the figures are those of a comparison made from nothing."""
    from bpeinspect.core.analysis import vocab_diff

    a, b = _letter_pairs(0), _letter_pairs(300)
    c = Tokenizer.from_merges([(97, 98), (99, 100)], pattern=None)
    taken: list[Tokenizer] = []
    real = vocab_diff.merge_pairs

    def counting(tok, **kwargs):
        taken.append(tok)
        return real(tok, **kwargs)

    monkeypatch.setattr(vocab_diff, "merge_pairs", counting)
    merges_in_common([("a", a), ("b", b)])
    taken.clear()
    again = merges_in_common([("c", c), ("b", b), ("a", a)])
    assert taken == [c]
    fresh = [Tokenizer.from_merges(list(t.merges), pattern=None) for t in (c, b, a)]
    first = merges_in_common(list(zip("cba", fresh)))
    assert again == first


def test_a_pool_sorts_the_tokens_into_categories_in_its_child(monkeypatch):
    """Given a pool, the comparison leaves the Python of sorting tokens into categories to a
    child process (in a window, a worker thread running it kept the GUI thread waiting for
    the interpreter): the figures are those of sorting them here."""
    from bpeinspect.core.analysis import token_categories, vocab_diff
    from bpeinspect.core.pool import ProcessPool, can_spawn

    if not can_spawn():
        pytest.skip("no child process can start here")
    a, b = load_tokenizer("r50k_base"), load_tokenizer("cl100k_base")
    here = compare_vocabularies([("a", a), ("b", b)])
    vocab_diff._FACTS.clear()

    def not_here(token: bytes) -> str:
        raise AssertionError("sorted in this process")

    monkeypatch.setattr(token_categories, "token_category", not_here)
    asked: list[int] = []

    def should_stop() -> bool:
        asked.append(1)
        return False

    with ProcessPool(2) as pool:
        far = compare_vocabularies([("a", a), ("b", b)], pool=pool, should_stop=should_stop)
    assert far.sides == here.sides
    assert far.category_order() == here.category_order()
    assert dict(far._categories) == dict(here._categories)
    assert far.exclusive_counts() == here.exclusive_counts()
    assert far.same_id(0, 1) == here.same_id(0, 1) and far.id_prefix(0, 1) == here.id_prefix(0, 1)
    assert len(asked) >= (a.n_vocab + b.n_vocab) // vocab_diff._CHECK_EVERY  # between slices


def test_a_pool_that_cannot_start_children_sorts_them_here(monkeypatch):
    from bpeinspect.core import pool as pool_module
    from bpeinspect.core.analysis import token_categories, vocab_diff
    from bpeinspect.core.pool import ProcessPool

    a, b = _letter_pairs(0), _letter_pairs(300)
    here = compare_vocabularies([("a", a), ("b", b)])
    vocab_diff._FACTS.clear()
    monkeypatch.setattr(pool_module, "can_spawn", lambda: False)  # a frozen app
    monkeypatch.setattr(token_categories, "FAR_CHUNK", 100)
    with ProcessPool(2) as pool:
        far = compare_vocabularies([("a", a), ("b", b)], pool=pool)
        assert not pool.children
    assert far.sides == here.sides and dict(far._categories) == dict(here._categories)


def test_a_comparison_leaves_no_young_objects_for_the_collector_to_walk_where_freezing_is_on():
    """In the app something is frozen already (a big encoding), so what a comparison builds
    could not be moved out of the youngest generation: the first collection after it walked
    the lot, 180 ms with every thread locked out. Where the program allows freezing, the
    comparison freezes what it built, as a big encoding does."""
    import gc

    from bpeinspect.core.memory import _freeze_allowed, allow_gc_freeze, quiet_gc

    before, threshold = _freeze_allowed[0], gc.get_threshold()
    allow_gc_freeze()
    gc.collect()
    gc.set_threshold(10**9)  # no young collection on its own: the youngest generation is looked at as left
    try:
        with quiet_gc():
            kept = [[i] for i in range(1000)]  # frozen earlier, as the window's encodings are
        toks = [("a", _letter_pairs(0)), ("b", _letter_pairs(300))]
        young = []
        for compare in (lambda: compare_vocabularies(toks), lambda: merges_in_common(toks)):
            got = compare()
            young.append(len(gc.get_objects(generation=0)))
            del got
        assert all(n < 300 for n in young), young  # the 1,352 merge pairs and the rest are not among them
    finally:
        gc.set_threshold(*threshold)
        allow_gc_freeze(before)
        gc.unfreeze()
        del kept


def test_merges_in_common_asks_should_stop_while_it_lists_and_matches_the_merges() -> None:
    """The merges of 50k-merge vocabularies were listed, put in a set and matched rank by rank
    without a check: the view's worker then ran on while the window waited for the interpreter.
    Each stretch now asks ``should_stop`` every slice, and stops there."""
    from bpeinspect.core.analysis import vocab_diff

    a, b = _letter_pairs(0), _letter_pairs(5)
    big = Tokenizer.from_merges(list(a.merges) + [(256 + k, 256 + k + 1) for k in range(9000)], pattern=None)
    asked: list[int] = []
    listed = vocab_diff.merge_pairs(big, should_stop=lambda: asked.append(1) is not None)
    tb = big.token_bytes
    assert listed == [(tb(x), tb(y)) for x, y in big.merges]
    assert len(asked) >= len(big.merges) // vocab_diff._CHECK_EVERY
    asked.clear()
    assert vocab_diff._same_pairs(listed, listed[:5000] + [None] * 5000, lambda: asked.append(1) is not None) == 5000
    assert len(asked) >= 4
    asked.clear()
    assert vocab_diff._set_of(listed, should_stop=lambda: asked.append(1) is not None) == set(listed)
    assert len(asked) >= 4
    for fn in (
        lambda stop: vocab_diff.merge_pairs(big, should_stop=stop),
        lambda stop: vocab_diff._same_pairs(listed, listed, stop),
        lambda stop: vocab_diff._set_of(listed, should_stop=stop),
        lambda stop: merges_in_common([("a", a), ("big", big)], should_stop=stop),
    ):
        with pytest.raises(Cancelled):
            fn(lambda: True)
    got = merges_in_common([("a", a), ("b", b)])
    assert got.same_rank[0, 1] == sum(x == y for x, y in zip(a.merges, b.merges))
