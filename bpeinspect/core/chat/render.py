"""A conversation rendered into the exact token sequence a model reads, and counted per message.

:func:`render_chat` runs the template and records where each message's text landed in the
result; :func:`count_chat` (fast, for datasets) and :func:`encode_chat` (with offsets, for the
overlay) encode that text and give every token to the message whose text holds most of its
bytes, or to the template. So the counts always add up: ``total == sum(per_message) + overhead``,
where ``overhead`` is what the template adds (role headers, control tokens, separators).

>>> from bpeinspect.core import load_tokenizer
>>> from bpeinspect.core.chat.openai import BUILTIN_FORMS
>>> fmt = chat_format(load_tokenizer("cl100k_base"), BUILTIN_FORMS["cl100k_base"][0])
>>> chat = render_chat(fmt, [{"role": "user", "content": "hello world"}])
>>> chat.text
'<|im_start|>user<|im_sep|>hello world<|im_end|><|im_start|>assistant<|im_sep|>'
>>> c = count_chat(fmt, chat)
>>> (c.total, c.per_message, c.overhead)
(9, (2,), 7)

Where each message lands is found by rendering once more with each text wrapped in markers
(two Unicode noncharacters and a private-use character naming the message): if the marked
rendering, markers removed, is the real one, the markers say exactly where each text went. A
template that cuts or rewrites a text (``trim``, splitting off reasoning) fails that check;
then each text is searched for in the rendering (also trimmed), and a text that is not there
as given is reported in ``missing`` (its tokens count as the template's).
"""

from __future__ import annotations

import bisect
import re
import weakref
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bpeinspect.core.chat.messages import TEXT_FIELDS, message_texts, role_of
from bpeinspect.core.chat.template import ChatTemplate, plain_data
from bpeinspect.core.encoding import Encoding
from bpeinspect.core.tokenizer import Tokenizer

_OPEN, _CLOSE = "\ufdd0", "\ufdd1"  # noncharacters: never in real text, kept by every string method
_INDEX_BASE = 0xF0000  # a Supplementary Private Use Area-A character after _OPEN names the message
_MARKS = re.compile(f"{_OPEN}([\U000f0000-\U000ffffd])|{_CLOSE}")
_MAX_MARKED = 0xFFFD
NO_TEMPLATE_SEPARATOR = "\n"

_twins: weakref.WeakKeyDictionary[Tokenizer, dict[tuple, Tokenizer]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ChatFormat:
    """A chat template (``None``: none, messages joined by newlines) and the tokenizer that
    reads what it renders (``tokenizer``: with the template's extra control tokens, if any)."""

    template: ChatTemplate | None
    tokenizer: Tokenizer
    base: Tokenizer

    @property
    def label(self) -> str:
        return self.template.name if self.template is not None else "no chat template"


def chat_format(tok: Tokenizer, template: ChatTemplate | None) -> ChatFormat:
    """``template`` for ``tok``; a template that adds control tokens (OpenAI's ChatML) gets a twin
    of ``tok`` that knows them, made once per tokenizer and kept while it lives."""
    if template is None or not template.adds:
        return ChatFormat(template, tok, tok)
    key = tuple(sorted(template.adds.items()))
    table = _twins.setdefault(tok, {})
    if key not in table:
        table[key] = tok.with_special_tokens(template.adds)
    return ChatFormat(template, table[key], tok)


@dataclass(frozen=True)
class RenderedChat:
    """The text a model reads for a conversation, and where each message's text is in it."""

    text: str
    roles: tuple[str, ...]  # per message
    spans: tuple[tuple[int, int, int], ...]  # (message, start, end) in code points, by start
    missing: tuple[int, ...] = ()  # messages with text the template did not write as given
    exact: bool = True  # the spans come from the markers (else from searching)


def _marked(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    out = []
    for i, m in enumerate(messages):
        tag = _OPEN + chr(_INDEX_BASE + i)
        copy = dict(m)
        for key in TEXT_FIELDS:
            value = m.get(key)
            if isinstance(value, str) and value:
                if _OPEN in value or _CLOSE in value:
                    return None
                copy[key] = tag + value + _CLOSE
            elif isinstance(value, list):
                parts = []
                for p in value:
                    if isinstance(p, Mapping) and isinstance(p.get("text"), str) and p["text"]:
                        if _OPEN in p["text"] or _CLOSE in p["text"]:
                            return None
                        p = {**p, "text": tag + p["text"] + _CLOSE}
                    parts.append(p)
                copy[key] = parts
        out.append(copy)
    return out


def _unmark(marked: str) -> tuple[str, list[tuple[int, int, int]]] | None:
    """The text without markers and the spans they enclosed; ``None`` if they do not pair up."""
    pieces: list[str] = []
    spans: list[tuple[int, int, int]] = []
    pos = length = 0
    open_at: tuple[int, int] | None = None
    for m in _MARKS.finditer(marked):
        chunk = marked[pos : m.start()]
        pieces.append(chunk)
        length += len(chunk)
        pos = m.end()
        if m.group(1) is not None:
            if open_at is not None:
                return None
            open_at = (ord(m.group(1)) - _INDEX_BASE, length)
        else:
            if open_at is None:
                return None
            if length > open_at[1]:
                spans.append((open_at[0], open_at[1], length))
            open_at = None
    if open_at is not None:
        return None
    pieces.append(marked[pos:])
    return "".join(pieces), spans


def _search(text: str, messages: Sequence[Mapping[str, Any]]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Each message's texts found in ``text`` in order (else anywhere not yet taken), as given or trimmed."""
    spans: list[tuple[int, int, int]] = []
    taken: list[tuple[int, int]] = []  # sorted, disjoint
    missing: list[int] = []
    cursor = 0

    def free(a: int, b: int) -> bool:
        k = bisect.bisect_right(taken, (a, len(text) + 1))
        return (k == 0 or taken[k - 1][1] <= a) and (k == len(taken) or taken[k][0] >= b)

    def find(part: str) -> int:
        for start in (cursor, 0):
            pos = text.find(part, start)
            while pos >= 0 and not free(pos, pos + len(part)):
                pos = text.find(part, pos + 1)
            if pos >= 0:
                return pos
        return -1

    for i, m in enumerate(messages):
        for part in message_texts(m):
            pos = find(part)
            if pos < 0 and part.strip() and part.strip() != part:
                part = part.strip()
                pos = find(part)
            if pos < 0:
                if i not in missing:
                    missing.append(i)
                continue
            spans.append((i, pos, pos + len(part)))
            bisect.insort(taken, (pos, pos + len(part)))
            cursor = pos + len(part)
    return sorted(spans, key=lambda s: s[1]), missing


def render_chat(
    fmt: ChatFormat,
    messages: Sequence[Mapping[str, Any]],
    *,
    add_generation_prompt: bool = True,
    plain: bool = False,
    **kwargs: Any,
) -> RenderedChat:
    """Render ``messages`` with ``fmt``'s template (raises :class:`ChatTemplateError` if it refuses);
    ``plain``: the messages are plain JSON data (see :meth:`ChatTemplate.render`)."""
    roles = tuple(role_of(m) for m in messages)
    if fmt.template is None:
        text, spans, pos = [], [], 0
        for i, m in enumerate(messages):
            if i:
                text.append(NO_TEMPLATE_SEPARATOR)
                pos += len(NO_TEMPLATE_SEPARATOR)
            for part in message_texts(m):
                spans.append((i, pos, pos + len(part)))
                text.append(part)
                pos += len(part)
        return RenderedChat("".join(text), roles, tuple(spans))
    if not plain:
        messages = plain_data(list(messages))
    real = fmt.template.render(messages, add_generation_prompt=add_generation_prompt, plain=True, **kwargs)
    marked_messages = _marked(messages) if len(messages) <= _MAX_MARKED else None
    if marked_messages is not None:
        try:
            marked = fmt.template.render(
                marked_messages, add_generation_prompt=add_generation_prompt, plain=True, **kwargs
            )
        except ValueError:
            marked = None
        unmarked = _unmark(marked) if marked is not None else None
        if unmarked is not None and unmarked[0] == real:
            spans = unmarked[1]
            found = {s[0] for s in spans}
            missing = tuple(i for i, m in enumerate(messages) if message_texts(m) and i not in found)
            return RenderedChat(real, roles, tuple(sorted(spans, key=lambda s: s[1])), missing)
    searched, absent = _search(real, messages)
    return RenderedChat(real, roles, tuple(searched), tuple(absent), exact=False)


@dataclass(frozen=True)
class ChatCount:
    """Tokens of a rendered conversation: in all, per message, and the template's own."""

    total: int
    per_message: tuple[int, ...]
    overhead: int
    roles: tuple[str, ...] = ()
    missing: tuple[int, ...] = ()

    def by_role(self) -> dict[str, int]:
        """Tokens per role, in the order roles first appear.

        >>> ChatCount(10, (2, 3, 4), 1, ("user", "assistant", "user")).by_role()
        {'user': 6, 'assistant': 3}
        """
        out: dict[str, int] = {}
        for role, n in zip(self.roles, self.per_message):
            out[role] = out.get(role, 0) + n
        return out


def _owners(starts: np.ndarray, ends: np.ndarray, spans: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """For each token ``[start, end)``, the message whose spans cover most of it, else -1."""
    if not spans or not len(starts):
        return np.full(len(starts), -1, dtype=np.int64)
    a = np.fromiter((s[1] for s in spans), np.int64, len(spans))
    b = np.fromiter((s[2] for s in spans), np.int64, len(spans))
    who = np.fromiter((s[0] for s in spans), np.int64, len(spans))
    cum = np.concatenate(([0], np.cumsum(b - a)))

    def covered(x: np.ndarray) -> np.ndarray:  # how much of [0, x) the spans cover
        k = np.searchsorted(a, x, "right") - 1
        kk = np.maximum(k, 0)
        inside = np.clip(x - a[kk], 0, b[kk] - a[kk])
        return np.where(k >= 0, cum[kk] + inside, 0)

    length = ends - starts
    cov = covered(ends) - covered(starts)
    mine = (cov > 0) & (2 * cov >= length)
    k = np.maximum(np.searchsorted(a, ends, "left") - 1, 0)  # the last span that starts inside the token
    return np.where(mine, who[k], -1)


def _count(owners: np.ndarray, n_messages: int, rendered: RenderedChat) -> ChatCount:
    per = np.bincount(owners[owners >= 0], minlength=n_messages) if n_messages else np.zeros(0, np.int64)
    total = len(owners)
    per_message = tuple(int(x) for x in per[:n_messages])
    return ChatCount(total, per_message, total - sum(per_message), rendered.roles, rendered.missing)


def _byte_spans(text: str, spans: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    if text.isascii():
        return list(spans)
    marks = sorted({p for s in spans for p in s[1:]})
    at, prev, b = {}, 0, 0
    for p in marks:
        b += len(text[prev:p].encode("utf-8", "surrogatepass"))
        at[p], prev = b, p
    return [(i, at[s], at[e]) for i, s, e in spans]


def count_chat(fmt: ChatFormat, rendered: RenderedChat) -> ChatCount:
    """The tokens of ``rendered`` under ``fmt``'s tokenizer, per message and the template's."""
    tok = fmt.tokenizer
    n = len(rendered.roles)
    text = rendered.text
    if tok.byte_level and tok.normalizer is None:
        ids = tok.encode(text, allowed_special="all", disallowed_special=())
        lengths = (
            tok.token_byte_lengths[np.frombuffer(array("q", ids), dtype=np.int64)] if ids else np.zeros(0, np.int64)
        )
        ends = np.cumsum(lengths, dtype=np.int64)
        if not len(ends) or int(ends[-1]) == len(text.encode("utf-8", "surrogatepass")):  # bytes tile the text
            return _count(_owners(ends - lengths, ends, _byte_spans(text, rendered.spans)), n, rendered)
    enc = tok.encode_with_offsets(text, allowed_special="all")
    starts = np.frombuffer(enc.char_starts, dtype=np.int64) if len(enc.ids) else np.zeros(0, np.int64)
    ends = np.frombuffer(enc.char_ends, dtype=np.int64) if len(enc.ids) else np.zeros(0, np.int64)
    return _count(_owners(starts, ends, rendered.spans), n, rendered)


@dataclass(frozen=True)
class EncodedChat:
    """A rendered conversation's :class:`Encoding` (for the overlay), its counts, and for each
    token the message it belongs to (-1: the template's)."""

    rendered: RenderedChat
    encoding: Encoding
    count: ChatCount
    owners: tuple[int, ...]


def encode_chat(fmt: ChatFormat, rendered: RenderedChat) -> EncodedChat:
    """``rendered`` encoded with offsets under ``fmt``'s tokenizer (control tokens recognised)."""
    enc = fmt.tokenizer.encode_with_offsets(rendered.text, allowed_special="all")
    if len(enc.ids):
        starts = np.frombuffer(enc.char_starts, dtype=np.int64)
        ends = np.frombuffer(enc.char_ends, dtype=np.int64)
    else:
        starts = ends = np.zeros(0, np.int64)
    owners = _owners(starts, ends, rendered.spans)
    return EncodedChat(rendered, enc, _count(owners, len(rendered.roles), rendered), tuple(int(o) for o in owners))


__all__ = [
    "NO_TEMPLATE_SEPARATOR",
    "ChatCount",
    "ChatFormat",
    "EncodedChat",
    "RenderedChat",
    "chat_format",
    "count_chat",
    "encode_chat",
    "render_chat",
]
