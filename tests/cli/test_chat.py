"""``bpeinspect-cli chat`` and ``stats --jsonl``: their output against the core's counts."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import chat_format, count_chat, render_chat, templates_for

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is BPE? 東京 🎉"},
    {"role": "assistant", "content": "Byte pair encoding."},
]


def core_count(spec: str, messages, generation: bool = True):
    tok = load_tokenizer(spec)
    fmt = chat_format(tok, templates_for(tok)[0])
    return count_chat(fmt, render_chat(fmt, messages, add_generation_prompt=generation))


@pytest.fixture
def messages_file(tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps({"messages": MESSAGES}, ensure_ascii=False), "utf-8")
    return path


def test_chat_table_counts_each_message_and_the_template(messages_file, capsys):
    assert main(["chat", "-t", "o200k_base", str(messages_file)]) == 0
    out = capsys.readouterr().out
    c = core_count("o200k_base", MESSAGES)
    assert "ChatML (gpt-4o)" in out
    lines = out.splitlines()
    for i, n in enumerate(c.per_message):
        row = next(line for line in lines if line.startswith(f"{i + 1}. {MESSAGES[i]['role']}"))
        assert row.split()[-1] == f"{n:,}"
    assert next(line for line in lines if line.startswith("template")).split()[-1] == f"{c.overhead:,}"
    assert next(line for line in lines if line.startswith("total")).split()[-1] == f"{c.total:,}"


def test_chat_json_for_two_tokenizers(messages_file, capsys):
    argv = ["chat", "-t", "cl100k_base", "-t", "o200k_base", "--no-generation-prompt", "--json", str(messages_file)]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["tokenizer"] for o in out] == ["cl100k_base", "o200k_base"]
    for o in out:
        c = core_count(o["tokenizer"], MESSAGES, generation=False)
        assert o["total"] == len(o["ids"]) == c.total
        assert [m["tokens"] for m in o["messages"]] == list(c.per_message)
        assert o["template_tokens"] == c.overhead
        assert not o["text"].endswith("<|im_start|>assistant<|im_sep|>")
        assert sum(1 for w in o["owners"] if w < 0) == c.overhead


def test_chat_without_template_joins_messages(messages_file, capsys):
    assert main(["chat", "-t", "gpt2", "--template", "none", "--show", "text", str(messages_file)]) == 0
    out = capsys.readouterr().out
    assert "\n".join(m["content"] for m in MESSAGES) in out
    assert main(["chat", "-t", "gpt2", str(messages_file)]) == 0
    said = capsys.readouterr()
    assert said.out.startswith("gpt2: no chat template") and "note: gpt2 has no chat template" in said.err  # one name


def test_chat_rejects_what_is_no_conversation(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}', "utf-8")
    assert main(["chat", str(bad)]) != 0
    assert "no conversation" in capsys.readouterr().err


def _dataset(tmp_path):
    path = tmp_path / "train.jsonl"
    recs = [{"messages": MESSAGES[:2] + [{"role": "assistant", "content": "Answer " * i}]} for i in range(1, 30)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), "utf-8")
    return path, recs


def test_stats_jsonl_json_and_csv_agree_with_the_core(tmp_path, capsys):
    path, recs = _dataset(tmp_path)
    assert main(["stats", "--jsonl", str(path), "-t", "o200k_base", "-t", "gpt2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["records"] == len(recs) and out["shape"] == "chat messages"
    o200k = out["tokenizers"][0]
    counts = [core_count("o200k_base", r["messages"], generation=False) for r in recs]
    assert o200k["tokens"] == sum(c.total for c in counts)
    assert o200k["template_tokens"] == sum(c.overhead for c in counts)
    assert sum(o200k["histogram"]["counts"]) == len(recs)
    assert out["longest"][0]["record"] == len(recs) - 1
    assert main(["stats", "--jsonl", str(path), "-t", "o200k_base", "-t", "gpt2", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["tokenizer"] for r in rows] == ["o200k_base", "gpt2"]
    assert int(rows[0]["tokens"]) == o200k["tokens"]
    assert int(rows[0]["template_tokens"]) == o200k["template_tokens"]
    assert int(rows[0]["user"]) == o200k["parts"]["user"]


def test_stats_jsonl_table_and_field_choice(tmp_path, capsys):
    path, recs = _dataset(tmp_path)
    assert main(["stats", "--jsonl", str(path), "-t", "gpt2"]) == 0
    out = capsys.readouterr().out
    assert f"{len(recs)} records of chat messages" in out and "longest records" in out
    head = out.splitlines()[1]
    assert head.split()[:3] == ["tokenizer", "chat", "template"] and head.count("template") == 2  # name, tokens
    odd = tmp_path / "odd.jsonl"
    odd.write_text("".join(json.dumps({"title": "t", "body": "b" * i}) + "\n" for i in range(10)), "utf-8")
    assert main(["stats", "--jsonl", str(odd), "-t", "gpt2"]) != 0
    assert "--field" in capsys.readouterr().err
    assert main(["stats", "--jsonl", str(odd), "-t", "gpt2", "--field", "body", "--csv"]) == 0
    row = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert int(row["body"]) == sum(len(load_tokenizer("gpt2").encode("b" * i)) for i in range(10))
    assert main(["stats", "--field", "body", "-t", "gpt2", str(odd)]) != 0  # --field goes with --jsonl


def test_chat_table_columns_line_up_with_wide_characters(tmp_path, capsys):
    from bpeinspect.cli.common import display_width

    path = tmp_path / "wide.json"
    path.write_text(json.dumps([{"role": "user", "content": "Hello, 世界 🎉"}, {"role": "assistant", "content": "Hi."}]))
    assert main(["chat", "-t", "o200k_base", str(path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()[1:] if line.rstrip()[-1:].isdigit()]
    assert len(rows) >= 4  # two messages, the template, the total
    assert len({display_width(line) for line in rows}) == 1, rows  # the tokens column ends in one place


def test_chat_variables_reach_the_template_and_bad_names_are_refused(messages_file, tmp_path, capsys):
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}\n{% endfor %}{% if greeting %}[{{ greeting }}]{% endif %}")
    base = ["chat", "-t", "gpt2", "--template", str(template), "--show", "text", str(messages_file)]
    assert main([*base, "--var", "greeting=26 Jul 2024"]) == 0
    assert "[26 Jul 2024]" in capsys.readouterr().out
    assert main([*base, "--var", "greeting=[1, 2]"]) == 0
    assert "[[1, 2]]" in capsys.readouterr().out
    assert main([*base, "--var", "messages=[]"]) != 0
    assert "set by the renderer" in capsys.readouterr().err


def test_a_messages_file_nested_too_deeply_is_one_line_naming_it(tmp_path, capsys):
    from bpeinspect.cli import commands

    deep = tmp_path / "deep.json"
    depth = 200_000
    deep.write_text('[{"role": "user", "content": ' + "[" * depth + "]" * depth + "}]", encoding="utf-8")
    code = commands.main(["chat", "-t", "gpt2", str(deep)])
    err = capsys.readouterr().err
    assert code == 2
    expected = f"bpeinspect-cli: error: {deep}: nested too deeply (more levels than a JSON reader follows)"
    assert err.strip().splitlines() == [expected]
