"""Dataset counting: shapes recognised, totals against direct counts, cancel, the pool."""

from __future__ import annotations

import json

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import chat_format, count_chat, render_chat, templates_for
from bpeinspect.core.dataset import (
    TEMPLATE_PART,
    DatasetError,
    ShapeUnclear,
    Target,
    count_dataset,
    fields_shape,
    read_records,
)

CHATS = [
    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"Question {i}: " + "why " * i},
                  {"role": "assistant", "content": "Because " * (i % 7 + 1) + "東京 🎉"}]}
    for i in range(40)
]  # fmt: skip


def write_jsonl(path, records, extra: str = "") -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) + extra, "utf-8")


def targets(*specs: str) -> list[Target]:
    return [Target(s, load_tokenizer(s), spec=s) for s in specs]


def test_chat_totals_are_the_sum_of_each_conversation_counted_alone(tmp_path):
    path = tmp_path / "chat.jsonl"
    write_jsonl(path, CHATS, "this line is not JSON\n")
    stats = count_dataset(path, targets("o200k_base", "gpt2"), longest=5)
    assert (stats.records, stats.skipped, stats.shape.kind) == (40, 1, "chat")
    assert "line 41" in stats.problems[0]
    tok = load_tokenizer("o200k_base")
    fmt = chat_format(tok, templates_for(tok)[0])
    counts = [count_chat(fmt, render_chat(fmt, r["messages"], add_generation_prompt=False)) for r in CHATS]
    o200k = stats.tokenizers[0]
    assert o200k.template == "ChatML (gpt-4o)"
    assert o200k.tokens == sum(c.total for c in counts)
    assert o200k.overhead == sum(c.overhead for c in counts)  # the template's tokens, once per record
    assert o200k.parts == {role: sum(c.by_role().get(role, 0) for c in counts) for role in ("system", "user", "assistant")}
    assert o200k.tokens == sum(o200k.parts.values()) + o200k.overhead
    assert list(o200k.per_record) == [c.total for c in counts]
    assert stats.part_names == ["system", "user", "assistant", TEMPLATE_PART]
    # the longest records, by the first tokenizer, most first, with the record itself to open
    want = sorted(range(40), key=lambda i: (-counts[i].total, i))[:5]
    assert [r.index for r in stats.longest] == want
    assert stats.longest[0].record == CHATS[want[0]]
    assert stats.longest[0].tokens[0] == counts[want[0]].total


@pytest.mark.parametrize(
    ("records", "label"),
    [
        ([{"prompt": "2+2?", "completion": " 4"}] * 5, "prompt / completion"),
        ([{"prompt": "2+2?", "response": "4"}] * 5, "prompt / response"),
        ([{"text": "hello world", "id": 3}] * 5, "text"),
        ([{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}] * 5, "chat messages"),
    ],
)
def test_shapes_are_recognised_in_jsonl_and_in_a_json_list(tmp_path, records, label):
    for path in (tmp_path / "d.jsonl", tmp_path / "d.json"):
        if path.suffix == ".json":
            path.write_text(json.dumps(records), "utf-8")
        else:
            write_jsonl(path, records)
        stats = count_dataset(path, targets("gpt2"))
        assert (stats.shape.label, stats.records) == (label, 5)
        assert sum(stats.tokenizers[0].per_record) == stats.tokenizers[0].tokens


def test_fields_are_counted_as_their_text_encodes(tmp_path):
    path = tmp_path / "d.jsonl"
    recs = [{"title": f"Title {i}", "body": "Body text " * i, "n": i} for i in range(12)]
    write_jsonl(path, recs)
    with pytest.raises(ShapeUnclear) as info:
        count_dataset(path, targets("gpt2"))
    assert set(info.value.fields) == {"title", "body"}
    stats = count_dataset(path, targets("gpt2"), shape=fields_shape("title", "body"))
    tok = load_tokenizer("gpt2")
    t = stats.tokenizers[0]
    assert t.parts == {"title": sum(len(tok.encode(r["title"])) for r in recs),
                       "body": sum(len(tok.encode(r["body"])) for r in recs)}  # fmt: skip
    assert t.tokens == sum(t.parts.values()) and t.overhead == 0


def test_cancel_keeps_what_was_counted(tmp_path):
    path = tmp_path / "d.jsonl"
    write_jsonl(path, [{"text": "word " * 10}] * 2000)
    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 2

    stats = count_dataset(path, targets("gpt2"), should_stop=stop)
    assert stats.stopped and 0 < stats.records < 2000
    assert len(stats.tokenizers[0].per_record) == stats.records


def test_a_pool_counts_as_one_process_does(tmp_path):
    path = tmp_path / "chat.jsonl"
    write_jsonl(path, CHATS * 20)
    one = count_dataset(path, targets("cl100k_base", "gpt2"), processes=1)
    two = count_dataset(path, targets("cl100k_base", "gpt2"), processes=2)
    assert one.as_dict()["tokenizers"] == two.as_dict()["tokenizers"]
    assert [r.index for r in one.longest] == [r.index for r in two.longest]


@pytest.mark.parametrize("shape", ["text", "prompt/completion"])
def test_a_pool_counts_records_of_fields_as_one_process_does(tmp_path, shape):
    # the children once got no tokenizer for datasets that are not chats (an IndexError)
    path = tmp_path / "d.jsonl"
    if shape == "text":
        records = [{"text": f"record {i}: " + "words " * (i % 13) + "東京"} for i in range(1500)]
    else:
        records = [{"prompt": f"q{i} " * (i % 5 + 1), "completion": "answer " * (i % 9)} for i in range(1500)]
    write_jsonl(path, records)
    one = count_dataset(path, targets("cl100k_base", "gpt2"), processes=1)
    two = count_dataset(path, targets("cl100k_base", "gpt2"), processes=2)
    assert one.records == two.records == 1500
    assert one.as_dict()["tokenizers"] == two.as_dict()["tokenizers"]
    assert [r.index for r in one.longest] == [r.index for r in two.longest]


def test_empty_and_broken_files(tmp_path):
    empty = tmp_path / "e.jsonl"
    empty.write_text("", "utf-8")
    with pytest.raises(DatasetError):
        count_dataset(empty, targets("gpt2"))
    broken = tmp_path / "b.json"
    broken.write_text('[{"text": "a"}, {"text": "b"}, {"te', "utf-8")
    reader = read_records(broken)
    assert [r for _, r in reader] == [{"text": "a"}, {"text": "b"}]
    assert reader.truncated


def test_a_pdf_with_one_number_on_a_line_is_not_json(tmp_path):
    """A real PDF's "startxref" number parsed as the one record of a JSON Lines file: the
    window offered a field picker over nothing instead of saying the file is not JSON."""
    from bpeinspect.core.dataset import peek_shape

    pdf = tmp_path / "paper.pdf"
    body = b"1 0 obj\n<< /Length 587 >>\nstream\n\x78\xda\x6d\x54\x4d\x8f\nendstream\nendobj\n"
    pdf.write_bytes(b"%PDF-1.5\n%\xd0\xd4\xc5\xd8\n" + body * 30 + b"startxref\n261644\n%%EOF\n")
    for ask in (peek_shape, lambda path: count_dataset(path, targets("gpt2"))):
        with pytest.raises(DatasetError, match="not JSON") as error:
            ask(pdf)
        assert str(error.value).count("paper.pdf") == 1  # the file is named once
    numbers = tmp_path / "numbers.jsonl"
    numbers.write_text("1\n2\n3\n", "utf-8")  # JSON, but no record holds text
    with pytest.raises(DatasetError, match="holds no records"):
        peek_shape(numbers)


def test_a_chats_preview_starts_after_the_shared_system_prompt():
    from bpeinspect.core.dataset.counting import LongRecord

    system = {"role": "system", "content": "You retell fables."}
    rec = LongRecord(0, (9,), {"messages": [system, {"role": "user", "content": "The North Wind"},
                                             {"role": "assistant", "content": "and the Sun"}]})  # fmt: skip
    assert rec.preview() == "The North Wind and the Sun"
    assert LongRecord(1, (3,), {"messages": [system]}).preview() == "You retell fables."  # nothing else


def test_children_open_the_files_again_through_the_load_cache_when_this_process_uses_it(monkeypatch):
    import pickle

    from bpeinspect.core.dataset import counting
    from bpeinspect.core.io import load_cache

    monkeypatch.delenv(load_cache.ENV, raising=False)
    ctx = counting._Context.make(fields_shape("text"), targets("gpt2"), False)
    for on in (True, False):
        monkeypatch.setitem(load_cache._service, "on", on)
        data = pickle.dumps(ctx)
        monkeypatch.setitem(load_cache._service, "on", False)  # a child starts with the cache off
        pickle.loads(data)
        assert load_cache.enabled() is on
