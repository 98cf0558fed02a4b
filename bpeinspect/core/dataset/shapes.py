"""What a dataset's records hold: a conversation, or text in named fields.

Recognised, in this order: chat messages (``messages``, ShareGPT's ``conversations``, or
TRL's conversational ``prompt``/``completion`` lists), ``prompt``/``completion``,
``prompt``/``response``, Alpaca's ``instruction``/``input``/``output``, Dolly's
``instruction``/``context``/``response``, ``question``/``answer`` and ``text``. When no
shape fits most records, :func:`guess_shape` says so and lists the text fields to pick from.

>>> guess_shape([{"prompt": "2+2?", "completion": "4"}] * 3).shape.label
'prompt / completion'
>>> g = guess_shape([{"title": "a", "body": "b", "n": 1}] * 3)
>>> (g.shape, g.fields)
(None, ('body', 'title'))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bpeinspect.core.chat.messages import conversation_of, is_message

# a shape is taken when it fits at least this share of the records looked at
CLEAR_SHARE = 0.9


@dataclass(frozen=True)
class Shape:
    """``chat``: each record is a conversation; ``fields``: the text of ``fields`` is counted."""

    kind: Literal["chat", "fields"]
    fields: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "chat messages" if self.kind == "chat" else " / ".join(self.fields)


CHAT = Shape("chat")
KNOWN_FIELDS: tuple[tuple[str, ...], ...] = (
    ("prompt", "completion"),
    ("prompt", "response"),
    ("instruction", "input", "output"),
    ("instruction", "context", "response"),
    ("question", "answer"),
    ("text",),
)


def fields_shape(*fields: str) -> Shape:
    """The shape that counts the text of ``fields``.

    >>> fields_shape("body").label
    'body'
    """
    return Shape("fields", tuple(fields))


def _message_lists(record: Mapping[str, Any], *keys: str) -> bool:
    return all(isinstance(record.get(k), list) and record[k] and all(is_message(m) for m in record[k]) for k in keys)


def conversation(record: Any) -> list[dict[str, Any]] | None:
    """The messages of a chat record (TRL's conversational prompt and completion joined)."""
    found = conversation_of(record)
    if found is None and isinstance(record, Mapping) and _message_lists(record, "prompt", "completion"):
        found = conversation_of(record["prompt"] + record["completion"])
    return found


def record_shape(record: Any) -> Shape | None:
    """The first known shape ``record`` fits, or ``None``.

    >>> record_shape({"messages": [{"role": "user", "content": "hi"}]}).label
    'chat messages'
    >>> record_shape({"instruction": "x", "input": "", "output": "y"}).label
    'instruction / input / output'
    """
    if conversation(record) is not None:
        return CHAT
    if isinstance(record, Mapping):
        for fields in KNOWN_FIELDS:
            if all(isinstance(record.get(f), str) for f in fields):
                return Shape("fields", fields)
    return None


def text_fields(record: Any) -> list[str]:
    """The keys of ``record`` whose values are text."""
    return [k for k, v in record.items() if isinstance(v, str)] if isinstance(record, Mapping) else []


@dataclass(frozen=True)
class ShapeGuess:
    """The shape most records fit (``None`` if none fits :data:`CLEAR_SHARE` of them), how
    many of the records looked at fit it, and the text fields seen (to pick from)."""

    shape: Shape | None
    fitting: int
    looked_at: int
    fields: tuple[str, ...]


def guess_shape(records: Iterable[Any]) -> ShapeGuess:
    """Look at ``records`` (a sample from the start of a file) and name their shape."""
    shapes: Counter[Shape] = Counter()
    fields: Counter[str] = Counter()
    n = 0
    for r in records:
        n += 1
        s = record_shape(r)
        if s is not None:
            shapes[s] += 1
        fields.update(text_fields(r))
    best: Shape | None = None
    fitting = 0
    if shapes:
        best, fitting = shapes.most_common(1)[0]
        if fitting < CLEAR_SHARE * n:
            best = None
    return ShapeGuess(best, fitting, n, tuple(sorted(fields)))


def field_texts(shape: Shape, record: Any) -> list[str]:
    """The text of each of ``shape``'s fields in ``record`` (empty where it has none)."""
    if not isinstance(record, Mapping):
        return [""] * len(shape.fields)
    return [v if isinstance(v := record.get(f), str) else "" for f in shape.fields]


__all__ = [
    "CHAT",
    "CLEAR_SHARE",
    "KNOWN_FIELDS",
    "Shape",
    "ShapeGuess",
    "conversation",
    "field_texts",
    "fields_shape",
    "guess_shape",
    "record_shape",
    "text_fields",
]
