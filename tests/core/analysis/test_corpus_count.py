"""The counting pool the languages view uses: the same counts as counting here (which
tests/core/analysis/test_fairness.py checks against tiktoken on the whole UDHR), cancellable,
robust to a lost child."""

from __future__ import annotations

import pickle

import pytest

from bpeinspect.core import Cancelled, load_tokenizer
from bpeinspect.core import pool as process_pool
from bpeinspect.core.analysis import corpus_count
from bpeinspect.core.analysis.corpus import udhr_texts
from bpeinspect.core.analysis.corpus_count import CountingPool
from bpeinspect.core.analysis.shipping import Shipped, count_text
from bpeinspect.core.tokenizer import Tokenizer


def shipped(tok: Tokenizer) -> Tokenizer:
    """``tok`` as a counting child gets it."""
    return pickle.loads(pickle.dumps(Shipped(tok)))


def _texts() -> list[str]:
    """A few hundred KB of the UDHR in many scripts (several batches, more than STEAL_CHARS)."""
    texts = udhr_texts()
    return [texts[c] for c in sorted(texts)[::4]]


def test_pool_agrees_with_counting_here_and_steals_work(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(corpus_count, "BATCH_CHARS", 1 << 14)
    monkeypatch.setattr(corpus_count, "STEAL_CHARS", 1 << 15)  # so that a child takes another's tokenizer
    # by what is left only: once timed, the choice weighs counting against loading times, which
    # a loaded machine skews (then no child took another's tokenizer, one run in two)
    monkeypatch.setattr(corpus_count._Run, "worth_loading", lambda self, k: self.left[k] >= corpus_count.STEAL_CHARS)
    toks = [load_tokenizer(n) for n in ("r50k_base", "o200k_base", "cl100k_base")]
    texts = _texts()
    sent: list[tuple[int, int]] = []  # (child, tokenizer key) loads
    real = process_pool.Child.put

    def put(self, key, data):
        sent.append((id(self), key))
        real(self, key, data)

    monkeypatch.setattr(process_pool.Child, "put", put)
    want = {k: [count_text(t, s) for s in texts] for k, t in enumerate(toks)}
    # Whether a child finishes its own tokenizer while another's still has STEAL_CHARS left
    # depends on how the two children and this process share the cores: on a busy machine this
    # process's own batches can leave nothing worth taking. Every try must count right; one of
    # three must see a tokenizer go to both children.
    for _ in range(3):
        sent.clear()
        with CountingPool(2) as pool:
            got = dict(pool.count(toks, texts))
            assert got == want
            assert len({c for c, _ in sent}) == 2
            if len(sent) <= len(toks):
                continue
            # a tokenizer went to both children
            again = dict(pool.count(toks, texts))  # the children kept the tokenizers
            assert again == got and len(sent) == len(set(sent))
            pool.keep_only(toks[:1])  # the others were closed: the children forget them
            loads = len(sent)
            assert dict(pool.count(toks[:1], texts[:5])) == {0: got[0][:5]} and len(sent) == loads
            assert dict(pool.count(toks[1:2], texts[:5])) == {0: got[1][:5]} and len(sent) > loads
            return
    pytest.fail(f"no child took another's tokenizer in three tries (loads: {sent})")


def test_merge_list_tokenizer_travels_by_its_tables():
    tok = Tokenizer.from_merges([(104, 101), (256, 108), (257, 108), (258, 111)], pattern="gpt4", name="tiny")
    assert not tok.uses_rank_rule
    copy = shipped(tok)
    texts = ["hello hello world", "hell\u00f6 \U0001f600", "ab" * 50]
    assert [count_text(copy, t) for t in texts] == [len(tok.encode_ordinary(t)) for t in texts]
    with CountingPool(1) as pool:
        assert dict(pool.count([tok], texts)) == {0: [len(tok.encode_ordinary(t)) for t in texts]}


def test_a_tokenizer_json_pattern_keeps_hugging_faces_unicode_in_a_child():
    from bpeinspect.core.split.rules import Split, SplitRule

    rule = SplitRule((Split(r"\p{L}+|\s+|[^\s\p{L}]+"),), unicode="hf")  # as a tokenizer.json gives it
    tok = Tokenizer.from_merges([(98, 214)], pattern=rule, name="hf-rule")  # b + U+058B's first byte
    copy = shipped(tok)
    assert copy.split_rule == rule
    text = "ab\u058b"  # U+058B: a letter to the regex module (one piece), unassigned to Hugging Face
    assert count_text(copy, text) == len(tok.encode_ordinary(text)) == 4


def test_a_tokenizer_no_child_can_rebuild_is_counted_here():
    class Odd(Tokenizer):  # not a plain Tokenizer: not shipped
        pass

    base = load_tokenizer("cl100k_base")
    odd = Odd(base.mergeable_ranks, pattern=base.split_rule, name="odd")
    texts = _texts()[:20]
    with CountingPool(2) as pool:
        got = dict(pool.count([odd, base], texts))
    assert got[0] == got[1] == [len(base.encode_ordinary(t)) for t in texts]


def test_cancel_stops_and_the_pool_counts_again_after(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(corpus_count, "BATCH_CHARS", 1 << 12)
    tok = load_tokenizer("o200k_base")
    texts = _texts()
    seen: list[int] = []
    with CountingPool(2) as pool:
        with pytest.raises(Cancelled):
            for _ in pool.count([tok], texts, progress=lambda done, total: seen.append(done),
                                should_stop=lambda: len(seen) >= 3):  # fmt: skip
                pass
        assert 3 <= len(seen) and seen[-1] < sum(map(len, texts))
        assert dict(pool.count([tok], texts[:30])) == {0: [count_text(tok, t) for t in texts[:30]]}


def test_a_child_that_dies_hands_its_work_back(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(corpus_count, "BATCH_CHARS", 1 << 13)
    tok = load_tokenizer("r50k_base")
    texts = _texts()
    killed: list[int] = []
    with CountingPool(2) as pool:
        pool.start()

        def progress(done: int, total: int) -> None:
            if not killed:
                pool._children[0].proc.kill()
                killed.append(done)

        got = dict(pool.count([tok], texts, progress=progress))
        assert killed and got == {0: [count_text(tok, t) for t in texts]}
        assert sum(c.proc.poll() is None for c in pool._children) == 1
        pool.start()  # a new child replaces it
        assert dict(pool.count([tok], texts[:10])) == {0: [count_text(tok, t) for t in texts[:10]]}
        assert len(pool._children) == 2


def test_added_tokens_travel_with_the_tokenizer():
    base = load_tokenizer("cl100k_base")
    tok = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, added_tokens={"<tool_call>": base.n_vocab + 5},
                    normalizer=None, name="added")  # fmt: skip
    text = "call <tool_call> now " * 3
    assert len(tok.encode_ordinary(text)) != len(base.encode_ordinary(text))
    copy = shipped(tok)
    assert copy.encode_ordinary(text) == tok.encode_ordinary(text)
    # and they are counted as encode_ordinary cuts them out: one token each, here and in the children
    assert count_text(tok, text) == len(tok.encode_ordinary(text))
    with CountingPool(2) as pool:
        assert dict(pool.count([tok], [text] * 4)) == {0: [len(tok.encode_ordinary(text))] * 4}


def test_qwen2_pattern_runs_on_the_fast_engine_and_splits_as_the_regex():
    from bpeinspect.core.split.patterns import QWEN2_PATTERN
    from bpeinspect.core.split.rules import SplitRule, resolve_rule

    fast, slow = resolve_rule(QWEN2_PATTERN), SplitRule.from_pattern(QWEN2_PATTERN)
    assert fast.fast is not None and slow.fast is None and fast == slow
    texts = list(udhr_texts().values())[::9] + ["I'LL say 1234 \U0001d400\U0001d401 ok's \r\n\r\n  x\u017f'S"]
    assert [fast.pieces(t) for t in texts] == [slow.pieces(t) for t in texts]


def test_a_niced_pools_children_run_below_this_process() -> None:
    """The languages view counts in children niced below the window (see the GUI's counting)."""
    import os

    if not hasattr(os, "nice") or not os.path.exists("/proc/self/stat"):
        pytest.skip("no process priorities to read here")
    base = os.nice(0)
    with CountingPool(2, niceness=7) as pool:
        pool.start()
        texts = ["hello world", "more words here"] * 4
        assert dict(pool.count([load_tokenizer("gpt2")], texts))[0] == [2, 3] * 4  # the children are up
        pids = [c.proc.pid for c in pool._children]
        assert len(pids) == 2
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                nice = int(f.read().rsplit(")", 1)[1].split()[16])
            assert nice == min(base + 7, 19)
