"""Conversations as the chat templates take them: a list of ``{"role", "content"}`` messages.

Chat data comes in a few shapes. OpenAI's fine-tuning files and Hugging Face's chat datasets
hold ``{"messages": [{"role": ..., "content": ...}]}``; ShareGPT-style files (Vicuna, FastChat
and the datasets made with them) hold ``{"conversations": [{"from": "human", "value": ...}]}``.
:func:`conversation_of` reads both, and a bare list of messages.

>>> conversation_of({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]})
[{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'hello'}]
>>> message_texts({"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image"}]})
['look']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# ShareGPT's speakers, as the roles chat templates know (FastChat's conversion, plus the
# other assistants that ShareGPT exports name)
SHAREGPT_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "observation": "tool",
}
CONVERSATION_KEYS = ("messages", "conversations", "conversation")
# the fields of a message that hold what someone wrote (a template may also write tool calls)
TEXT_FIELDS = ("content", "reasoning_content")


def is_message(obj: Any) -> bool:
    """A ``{"role", "content"}`` message, or a ShareGPT ``{"from", "value"}`` one."""
    return isinstance(obj, Mapping) and (
        ("role" in obj and ("content" in obj or "tool_calls" in obj)) or ("from" in obj and "value" in obj)
    )


def _as_message(m: Mapping[str, Any]) -> dict[str, Any]:
    if "role" in m:
        return dict(m)
    speaker = str(m.get("from", ""))
    return {"role": SHAREGPT_ROLES.get(speaker.lower(), speaker), "content": m.get("value")}


def conversation_of(obj: Any) -> list[dict[str, Any]] | None:
    """The messages of a record (``messages``, ``conversations`` or ``conversation``), or of a
    bare list of messages; ``None`` if ``obj`` holds no conversation."""
    if isinstance(obj, Mapping):
        for key in CONVERSATION_KEYS:
            value = obj.get(key)
            if isinstance(value, list) and value and all(is_message(m) for m in value):
                return [_as_message(m) for m in value]
        return None
    if isinstance(obj, list) and obj and all(is_message(m) for m in obj):
        return [_as_message(m) for m in obj]
    return None


def message_texts(message: Mapping[str, Any]) -> list[str]:
    """What someone wrote in a message: its content (a string, or the ``text`` of its parts)
    and its reasoning, if any."""
    out: list[str] = []
    for key in TEXT_FIELDS:
        value = message.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            out += [p["text"] for p in value if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    return [t for t in out if t]


def role_of(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    return role if isinstance(role, str) and role else "?"


__all__ = ["CONVERSATION_KEYS", "SHAREGPT_ROLES", "conversation_of", "is_message", "message_texts", "role_of"]
