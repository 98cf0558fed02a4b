"""OpenAI's ChatML forms: the ids tiktoken gives for the same sequence, built independently.

The expected sequences are built here as the tiktokenizer playground builds them (its
``getChatGPTEncoding``), and encoded by tiktoken with the three control tokens added to the
vocabulary as the playground adds them.
"""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import chat_format, count_chat, encode_chat, render_chat, templates_for
from tests.reference import tiktoken, tiktoken_encoding

IM = {"cl100k_base": 100264, "o200k_base": 200264}
CONVERSATIONS = [
    [{"role": "user", "content": "hello world"}],
    [
        {"role": "system", "content": "You are a helpful assistant"},
        {"role": "user", "content": "Wie viele Tokens hat 'Tokenisierung'? 東京 🎉"},
        {"role": "assistant", "content": "  Drei.\n\n"},
        {"role": "user", "name": "bob", "content": "and <|endoftext|>?"},
    ],
    [{"role": "user", "content": ""}],
    [],
]


def _playground(messages, model: str) -> str:
    """tiktokenizer's getChatGPTEncoding, in Python."""
    gpt3 = model == "gpt-3.5-turbo"
    msg_sep, role_sep = ("\n", "\n") if gpt3 else ("", "<|im_sep|>")
    body = msg_sep.join(f"<|im_start|>{m.get('name') or m['role']}{role_sep}{m['content']}<|im_end|>" for m in messages)
    return msg_sep.join([body, f"<|im_start|>assistant{role_sep}"]) if messages else f"<|im_start|>assistant{role_sep}"


def _tiktoken_chat(name: str):
    base = tiktoken_encoding(name)
    first = IM[name]
    return tiktoken.Encoding(
        name + "_chat",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={**base._special_tokens, "<|im_start|>": first, "<|im_end|>": first + 1, "<|im_sep|>": first + 2},
    )


@pytest.mark.parametrize(("name", "model"), [("cl100k_base", "gpt-4"), ("cl100k_base", "gpt-3.5-turbo"),
                                             ("o200k_base", "gpt-4o")])  # fmt: skip
def test_chatml_matches_tiktoken(name: str, model: str) -> None:
    tok = load_tokenizer(name)
    template = next(t for t in templates_for(tok) if t.name == f"ChatML ({model})")
    fmt = chat_format(tok, template)
    enc = _tiktoken_chat(name)
    for messages in CONVERSATIONS:
        rendered = render_chat(fmt, messages)
        text = _playground(messages, model)
        assert rendered.text == text
        want = enc.encode(text, allowed_special="all")
        count = count_chat(fmt, rendered)
        encoded = encode_chat(fmt, rendered)
        assert list(encoded.encoding.ids) == want
        assert count.total == len(want) == sum(count.per_message) + count.overhead
        for m, n in zip(messages, count.per_message):  # each content encodes on its own to its count here
            assert n == len(enc.encode(m["content"], allowed_special="all")), m
        if model != "gpt-3.5-turbo":  # 4 per message (<|im_start|> role <|im_sep|> … <|im_end|>), 3 to prime the reply
            assert count.overhead == 4 * len(messages) + 3


def test_chat_twin_shares_the_vocabulary_and_is_made_once() -> None:
    tok = load_tokenizer("o200k_base")
    template = templates_for(tok)[0]
    a, b = chat_format(tok, template), chat_format(tok, template)
    assert a.tokenizer is b.tokenizer and a.tokenizer is not tok
    assert a.tokenizer.token_bytes(200265) == b"<|im_end|>"
    assert "<|im_start|>" not in tok.special_tokens  # the base tokenizer is untouched
    assert a.tokenizer.encode("hello world") == tok.encode("hello world")


def test_other_builtins_have_no_chat_form() -> None:
    assert templates_for(load_tokenizer("r50k_base")) == []
