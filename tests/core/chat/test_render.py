"""Rendering conversations, finding each message in the result, and counting per message."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import (
    ChatTemplate,
    ChatTemplateError,
    chat_format,
    conversation_of,
    count_chat,
    encode_chat,
    render_chat,
)

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MSGS = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "user"},  # the same text as a role name: found by the markers, not by searching
    {"role": "assistant", "content": "  padded  "},
]


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer("cl100k_base")


def test_markers_find_each_message_exactly(tok) -> None:
    fmt = chat_format(tok, ChatTemplate(CHATML))
    r = render_chat(fmt, MSGS)
    assert r.exact and not r.missing
    assert [r.text[a:b] for _, a, b in r.spans] == ["Be brief.", "user", "  padded  "]
    assert [i for i, _, _ in r.spans] == [0, 1, 2]
    c = count_chat(fmt, r)
    assert c.total == len(tok.encode(r.text)) and c.total == sum(c.per_message) + c.overhead
    assert c.per_message == (len(tok.encode("Be brief.")), 1, c.per_message[2])
    assert c.by_role() == {"system": c.per_message[0], "user": 1, "assistant": c.per_message[2]}


def test_a_template_that_trims_falls_back_to_searching(tok) -> None:
    template = ChatTemplate("{% for m in messages %}[{{ m.role }}]{{ m.content | trim }}{% endfor %}")
    r = render_chat(chat_format(tok, template), MSGS, add_generation_prompt=False)
    assert not r.exact and not r.missing
    assert r.text == "[system]Be brief.[user]user[assistant]padded"
    assert [r.text[a:b] for _, a, b in r.spans] == ["Be brief.", "user", "padded"]


def test_a_message_the_template_drops_is_reported_missing(tok) -> None:
    template = ChatTemplate("{% for m in messages if m.role != 'system' %}<{{ m.content }}>{% endfor %}")
    fmt = chat_format(tok, template)
    r = render_chat(fmt, MSGS)
    assert r.missing == (0,)
    c = count_chat(fmt, r)
    assert c.per_message[0] == 0 and c.missing == (0,)


def test_tokens_straddling_a_boundary_go_where_most_of_their_bytes_are(tok) -> None:
    # " hello" is one token; the space is the template's, "hello" the message's
    fmt = chat_format(tok, ChatTemplate("{% for m in messages %}say {{ m.content }}{% endfor %}"))
    e = encode_chat(fmt, render_chat(fmt, [{"role": "user", "content": "hello"}]))
    assert [tok.decode([i]) for i in e.encoding.ids] == ["say", " hello"]
    assert e.owners == (-1, 0) and e.count.per_message == (1,) and e.count.overhead == 1


def test_no_template_joins_messages_with_newlines(tok) -> None:
    fmt = chat_format(tok, None)
    r = render_chat(fmt, MSGS)
    assert r.text == "Be brief.\nuser\n  padded  "
    c = count_chat(fmt, r)
    assert c.total == len(tok.encode(r.text)) == sum(c.per_message) + c.overhead


def test_parts_and_reasoning_count_for_their_message(tok) -> None:
    template = ChatTemplate(
        "{% for m in messages %}{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
        "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{{ p.text }}|{% endfor %}"
        "{% endif %}{% endfor %}"
    )
    msgs = [{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "text", "text": "here"}]},
            {"role": "assistant", "content": "ok", "reasoning": "thinking hard"}]  # fmt: skip
    fmt = chat_format(tok, template)
    r = render_chat(fmt, msgs, add_generation_prompt=False)
    assert r.text == "look|here|<think>thinking hard</think>ok"  # "reasoning" reaches the template as reasoning_content
    assert sorted(r.text[a:b] for _, a, b in r.spans) == ["here", "look", "ok"]  # the alias is not the message's field


def test_template_errors_are_chat_template_errors(tok) -> None:
    with pytest.raises(ChatTemplateError, match="refused.*alternate"):
        ChatTemplate("{{ raise_exception('roles must alternate') }}").render([])
    with pytest.raises(ChatTemplateError, match="does not compile"):
        ChatTemplate("{% for %}").render([])
    with pytest.raises(ChatTemplateError):  # the sandbox: no way to Python's internals
        ChatTemplate("{{ messages.__class__.__mro__ }}").render([])
    with pytest.raises(ChatTemplateError):
        ChatTemplate("{% set ns = namespace(_x=1) %}").render([])


def test_transformers_globals_and_filters() -> None:
    t = ChatTemplate("{{ {'a': 'é'} | tojson }} {{ strftime_now('%Y') | length }} {{ dict(x=1).x }}"
                     "{% for i in range(5) %}{% if i == 2 %}{% break %}{% endif %}{{ i }}{% endfor %}"
                     "{% generation %}G{% endgeneration %}")  # fmt: skip
    assert t.render([]) == '{"a": "é"} 4 101G'
    # trim_blocks and lstrip_blocks, as transformers sets them
    assert ChatTemplate("{% if true %}\n  x\n  {% endif %}\ny").render([]) == "  x\ny"


def test_conversation_shapes() -> None:
    assert conversation_of([{"role": "user", "content": "a"}]) == [{"role": "user", "content": "a"}]
    assert conversation_of({"messages": [{"role": "user", "content": "a"}], "id": 3}) == [{"role": "user", "content": "a"}]
    assert conversation_of({"conversations": [{"from": "system", "value": "s"}, {"from": "bing", "value": "b"}]}) == [
        {"role": "system", "content": "s"}, {"role": "assistant", "content": "b"}]  # fmt: skip
    assert conversation_of({"text": "plain"}) is None and conversation_of([]) is None
