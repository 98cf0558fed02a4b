"""Dataset mode on a real chat dataset from a public package: the BYU PCC lab's chitchat dataset
(PyPI ``chitchat-dataset==0.9.0``, pinned by sha256, fetched once into the conformance cache).

Its ``dataset.json`` holds 7,168 open-domain conversations between two people (138,737 turns,
each a run of one sender's messages). They are written as the two shapes of fine-tuning sets
people count: one chat record per conversation (the first sender as ``user``, the other as
``assistant``), and one record per exchange (a turn and the reply to it), from every fifth
conversation (14,054 records; every message's count is checked in the conversations already).
The counts are checked against tiktoken: under gpt-4o's ChatML every message's content is a
piece of its own, so each role's total is tiktoken's count of its contents, and the template
adds 4 tokens per message (``<|im_start|>``, the role, ``<|im_sep|>``, ``<|im_end|>``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import chat_format, count_chat, render_chat, templates_for
from bpeinspect.core.dataset import Target, count_dataset
from tests.conformance.fetch import RegistryUnreachable, extract_member
from tests.conformance.sources import Package
from tests.reference import tiktoken_encoding

pytestmark = pytest.mark.slow

CHITCHAT = Package(
    "pip",
    "chitchat-dataset==0.9.0",
    "chitchat_dataset-0.9.0-py3-none-any.whl",
    "7bf89f36645e2d5ec87d53370c8e851b5a688479c7beb7079cb4c87fc5acea3e",
)
MEMBER = "chitchat_dataset/dataset.json"
EXCHANGES_EVERY = 5  # the exchanges of every fifth conversation


def conversations(source: Path) -> list[list[dict[str, str]]]:
    """Each conversation as chat messages: a turn's messages joined by newlines."""
    out = []
    for conv in json.loads(source.read_text("utf-8")).values():
        turns = [t for t in conv["messages"] if t]
        if not turns:
            continue
        first = turns[0][0]["sender"]
        out.append([{"role": "user" if t[0]["sender"] == first else "assistant",
                     "content": "\n".join(m["text"] for m in t)} for t in turns])  # fmt: skip
    return out


@pytest.fixture(scope="module")
def chats(tmp_path_factory) -> tuple[Path, Path, list[list[dict[str, str]]]]:
    try:
        source = extract_member(CHITCHAT, MEMBER)
    except RegistryUnreachable as exc:
        pytest.skip(f"chat dataset: {exc}; no package registry reachable, so the real dataset cannot be fetched")
    convs = conversations(source)
    folder = tmp_path_factory.mktemp("chitchat")
    whole, pairs = folder / "conversations.jsonl", folder / "exchanges.jsonl"
    with open(whole, "w", encoding="utf-8") as f:
        for msgs in convs:
            f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
    with open(pairs, "w", encoding="utf-8") as f:
        for msgs in convs[::EXCHANGES_EVERY]:
            for a, b in zip(msgs, msgs[1:]):
                if a["role"] == "user" and b["role"] == "assistant":
                    f.write(json.dumps({"messages": [a, b]}, ensure_ascii=False) + "\n")
    return whole, pairs, convs


def test_conversations_counted_per_role_as_tiktoken_counts_them(chats):
    whole, _, convs = chats
    tok = load_tokenizer("o200k_base")
    stats = count_dataset(whole, [Target("o200k_base", tok, spec="o200k_base")], longest=5, processes=2)
    assert (stats.shape.kind, stats.records, stats.skipped) == ("chat", len(convs), 0)
    assert stats.records == 7168
    enc = tiktoken_encoding("o200k_base")
    t = stats.tokenizers[0]
    for role in ("user", "assistant"):
        texts = [m["content"] for msgs in convs for m in msgs if m["role"] == role]
        # one text at a time: tiktoken's batch call spreads them over threads, which costs more CPU
        assert t.parts[role] == sum(len(enc.encode_ordinary(x)) for x in texts), role
    assert t.overhead == 4 * sum(len(msgs) for msgs in convs)
    assert t.tokens == sum(t.parts.values()) + t.overhead == sum(t.per_record)
    edges, counts = stats.histogram()
    assert int(counts[0].sum()) == stats.records
    fmt = chat_format(tok, templates_for(tok)[0])
    for r in stats.longest:  # the longest, each counted again alone
        alone = count_chat(fmt, render_chat(fmt, convs[r.index], add_generation_prompt=False))
        assert r.tokens[0] == alone.total
    assert stats.longest[0].tokens[0] == max(t.per_record)


def test_exchanges_over_ten_thousand_records_under_two_tokenizers(chats):
    _, pairs, convs = chats
    targets = [Target(s, load_tokenizer(s), spec=s) for s in ("o200k_base", "gpt2")]
    stats = count_dataset(pairs, targets, processes=2)
    assert stats.records == 14_054 and stats.skipped == 0
    o200k, gpt2 = stats.tokenizers
    assert o200k.overhead == 8 * stats.records  # two messages of 4 template tokens each
    assert gpt2.template == "no chat template" and gpt2.overhead == stats.records  # the newline between them
    for t in stats.tokenizers:
        assert t.tokens == sum(t.parts.values()) + t.overhead == sum(t.per_record)
        assert len(t.per_record) == stats.records
