"""Finding special and added tokens, and characters with a byte no token holds, in text.

Special and added tokens are cut out of the text before it is split into pre-tokens; the
longest token wins where several start at one position. Hugging Face's added tokens may also
take the whitespace on their left or right (``lstrip``, ``rstrip``) or match only as a whole
word (``single_word``): :func:`cut_with_options` does what ``tokenizers``' ``AddedVocabulary``
does with them.

>>> cut_at("a<|x|>b<|x|>y", frozenset({"<|x|>", "<|x|>y"}), {"<|x|>": 7, "<|x|>y": 8})
[('a', None), ('<|x|>', 7), ('b', None), ('<|x|>y', 8)]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

import regex

from bpeinspect.core import limits
from bpeinspect.core.errors import Cancelled, DisallowedSpecialError

if TYPE_CHECKING:
    from bpeinspect.core.normalize import Normalizer


def cut_at(text: str, words: Collection[str], ids: Mapping[str, int]) -> list[tuple[str, int | None]]:
    """``text`` cut into ``(segment, id)`` at every occurrence of ``words`` (with its id from
    ``ids``), ``None`` for the text between them; the longest match wins."""
    if not words:
        return [(text, None)] if text else []
    out: list[tuple[str, int | None]] = []
    pos = 0
    for m in literal_regex(frozenset(words)).finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], None))
        out.append((m.group(), ids[m.group()]))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], None))
    return out


def check_tables(ids: Collection[int], special: Mapping[str, int], added: Mapping[str, int]) -> None:
    """Raise ``ValueError`` for an id that is negative, not an integer or at least
    :data:`limits.MAX_IDS` (a file with one rank of 10**12 would make every id table that
    long), and for an empty special or added token (it would match between every two characters).

    >>> check_tables([0, 1], {"": 2}, {})
    Traceback (most recent call last):
    ...
    ValueError: special token '' is empty
    """
    top = limits.MAX_IDS
    for kind, table in (("special", special), ("added", added)):
        for s, i in table.items():
            if not isinstance(s, str) or not s:
                raise ValueError(f"{kind} token {s!r} is empty" if s == "" else f"{kind} token {s!r} is not text")
            if type(i) is not int or not 0 <= i < top:
                raise ValueError(f"{kind} token {s!r} has the id {_number(i)}; ids run from 0 to {top - 1:,}")
    if ids:
        low, high = min(ids), max(ids)
        if low < 0:
            raise ValueError(f"a token has the negative id {low}")
        if high >= top:
            raise ValueError(f"a token has the id {_number(high)}; bpeinspect opens vocabularies of up to {top:,} ids")


def _number(i: object) -> str:
    return f"{i:,}" if type(i) is int else repr(i)


# (lstrip, rstrip, single_word, normalized): Hugging Face's AddedToken flags
AddedOptions = tuple[bool, bool, bool, bool]
PLAIN: AddedOptions = (False, False, False, False)
# Rust regex's Unicode \w and \s, which tokenizers' added-token checks use
_WORD_CHAR = regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")
_SPACE_CHAR = regex.compile(r"\p{White_Space}")
_SPACE_RUN = regex.compile(r"\p{White_Space}*")


def cut_with_options(
    text: str, words: Collection[str], ids: Mapping[str, int], options: Mapping[str, AddedOptions]
) -> list[tuple[str, int | None]]:
    """:func:`cut_at` with Hugging Face's added-token flags (``tokenizers``' ``find_matches``):
    a ``single_word`` token found beside a word character is passed over (its text stays
    ordinary text, and matching goes on after it); an ``lstrip`` token takes the whitespace
    before it (not what an earlier token took), an ``rstrip`` token the whitespace after it.

    >>> opts = {"<m>": (True, True, False, False), "ab": (False, False, True, False)}
    >>> cut_with_options("x <m>  y cab ab", {"<m>", "ab"}, {"<m>": 9, "ab": 8}, opts)
    [('x', None), (' <m>  ', 9), ('y cab ', None), ('ab', 8)]
    """
    if not words:
        return [(text, None)] if text else []
    out: list[tuple[str, int | None]] = []
    pos = 0
    n = len(text)
    for m in literal_regex(frozenset(words)).finditer(text):
        start, stop = m.span()
        word = m.group()
        lstrip, rstrip, single, _ = options.get(word, PLAIN)
        if single and (
            (start > 0 and _WORD_CHAR.match(text, start - 1)) or (stop < n and _WORD_CHAR.match(text, stop))
        ):
            continue
        if lstrip:
            k = start
            while k > pos and _SPACE_CHAR.match(text, k - 1):
                k -= 1
            start = k
        if rstrip:
            stop = _SPACE_RUN.match(text, stop).end()
        # A token that starts inside the whitespace an rstrip token took: tokenizers gives it
        # again over that whitespace (and, if it ends there, encodes the rest of that whitespace
        # twice). Here it takes what is left of its text; one wholly inside is passed over.
        start = max(start, pos)
        if start >= stop:
            continue
        if start > pos:
            out.append((text[pos:start], None))
        out.append((text[start:stop], ids[word]))
        pos = stop
    if pos < n:
        out.append((text[pos:], None))
    return out


def cut_with_flags(
    text: str,
    words: frozenset[str],
    ids: Mapping[str, int],
    options: Mapping[str, AddedOptions],
    *,
    normalizer: Normalizer | None,
    order: Sequence[str],
) -> list[tuple[str, int | None]]:
    """:func:`cut_at` for tokens with Hugging Face's flags, as ``tokenizers`` does it: tokens with
    ``normalized=false`` are found in the text itself, those with ``normalized=true`` in each
    stretch between them once it is normalized by ``normalizer`` (``order``: every token, the
    first listed wins where two normalize alike)."""
    later = frozenset(w for w in words if options.get(w, PLAIN)[3])
    segments = cut_with_options(text, words - later if later else words, ids, options)
    if not later:
        return segments
    cut: Callable[[str], list[tuple[str, int | None]]]
    if normalizer is None:
        cut = functools.partial(cut_with_options, words=later, ids=ids, options=options)
    else:
        found: dict[str, str] = {}  # normalized text -> token (the first listed wins, as in tokenizers)
        for w in order:
            if w in later:
                nw = normalizer.normalize(w)
                if nw:
                    found.setdefault(nw, w)
        cut = functools.partial(
            _cut_normalized,
            norm=normalizer,
            ids={nw: ids[w] for nw, w in found.items()},
            options={nw: options.get(w, PLAIN) for nw, w in found.items()},
        )
    out: list[tuple[str, int | None]] = []
    for seg, tid in segments:
        out.extend(cut(seg) if tid is None else [(seg, tid)])
    return out


def _cut_normalized(
    seg: str, *, norm: Normalizer, ids: Mapping[str, int], options: Mapping[str, AddedOptions]
) -> list[tuple[str, int | None]]:
    """``seg`` cut at the tokens found in its normalized form (``ids`` and ``options`` are keyed
    by their normalized text), mapped back to ``seg``."""
    nseg, starts, ends = norm.normalize_aligned(seg)
    cut = cut_with_options(nseg, ids.keys(), ids, options)
    out: list[tuple[str, int | None]] = []
    npos = rpos = 0
    for piece, tid in cut:
        a, b = npos, npos + len(piece)
        npos = b
        if tid is None:
            continue
        ra = max(starts[a] if starts is not None else a, rpos)
        rb = max(ends[b - 1] if ends is not None else b, ra)
        if ra > rpos:
            out.append((seg[rpos:ra], None))
        out.append((seg[ra:rb], tid))
        rpos = rb
    if rpos < len(seg):
        out.append((seg[rpos:], None))
    return out


_TABLE_SLICE = 1 << 14  # ids a slice of rank_tables handles (well under a frame)


def rank_tables(
    ranks: Mapping[bytes, int], should_stop: Callable[[], bool] | None = None
) -> tuple[dict[bytes, int], dict[int, bytes], int, int]:
    """A copy of ``ranks``, its inverse (id -> bytes) and its lowest and highest id (``-1``, ``-1``
    if empty), the inverse made a slice at a time with ``should_stop`` asked between
    (``Cancelled`` when it says so): one ``dict(zip())`` of 200k items held the interpreter
    for more than a frame, which a GUI thread waits out whole while a worker loads a vocabulary. (The copy is one
    call: a dict copied whole is cloned, not rehashed.)

    >>> rank_tables({b"a": 3, b"b": 1})
    ({b'a': 3, b'b': 1}, {3: b'a', 1: b'b'}, 1, 3)
    """
    if should_stop is not None and should_stop():
        raise Cancelled()
    copy = dict(ranks)
    tokens, ids = list(copy), list(copy.values())
    decoder: dict[int, bytes] = {}
    low = high = -1
    for k in range(0, len(ids), _TABLE_SLICE):
        if should_stop is not None and should_stop():
            raise Cancelled()
        i = ids[k : k + _TABLE_SLICE]
        decoder.update(zip(i, tokens[k : k + _TABLE_SLICE]))
        lo, hi = min(i), max(i)
        low, high = (lo, hi) if k == 0 else (min(low, lo), max(high, hi))
    return copy, decoder, low, high


# More single bytes than this without a token: not a byte-level vocabulary (real ones miss <= 28).
_MAX_MISSING_BYTES = 64


def missing_single_bytes(ranks: Mapping[bytes, int]) -> tuple[int, ...]:
    """The single bytes that have no token (dropped from text, as Hugging Face and llama.cpp
    drop them); ``ValueError`` if so many miss that it is not a byte-level vocabulary."""
    missing = tuple(b for b in range(256) if bytes([b]) not in ranks)
    if len(missing) > _MAX_MISSING_BYTES:
        raise ValueError(
            f"not a byte-level vocabulary: {len(missing)} of the 256 single bytes have no token "
            f"(e.g. byte 0x{missing[0]:02x})"
        )
    return missing


def decode_special_tokens(decoder: dict[int, bytes], special: Mapping[str, int], added: Mapping[str, int]) -> None:
    """Put the special and added tokens' bytes into ``decoder`` (id -> bytes). One id may be a
    special token and the normal token of the same bytes, as Hugging Face's trainer makes it when
    a merge (or a byte) spells a special token's text; any other shared id is a ``ValueError``."""
    for kind, table in (("special", special), ("added", added)):
        for s, i in table.items():
            if i in decoder and decoder[i] != s.encode("utf-8"):
                raise ValueError(f"{kind} token {s!r} has id {i}, which another token already has")
            decoder[i] = s.encode("utf-8")


def check_disallowed(text: str, disallowed: Collection[str]) -> None:
    """Raise tiktoken's :class:`DisallowedSpecialError` if ``text`` holds one of ``disallowed``."""
    if not disallowed:
        return
    if "" in disallowed:
        m = _special_regex(tuple(sorted(disallowed))).search(text)
    elif not any(c in text for c in _first_chars(frozenset(disallowed))):
        return  # none can start anywhere in the text (the usual case: no regex to build)
    else:  # the longest at the leftmost place, as the alternation longest-first finds it
        m = literal_regex(frozenset(disallowed)).search(text)
    if m is not None:
        raise DisallowedSpecialError(
            f"Encountered text corresponding to disallowed special token {m.group()!r}.\n"
            "If you want this text to be encoded as a special token, pass it to `allowed_special`, "
            f"e.g. `allowed_special={{{m.group()!r}, ...}}`.\n"
            "If you want this text to be encoded as normal text, disable the check for this token "
            "by passing `disallowed_special=(enc.special_tokens_set - {" + repr(m.group()) + "})`.\n"
            "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
        )


@functools.lru_cache(maxsize=32)
def _first_chars(tokens: frozenset[str]) -> frozenset[str]:
    return frozenset(t[0] for t in tokens)


@functools.lru_cache(maxsize=256)
def _special_regex(tokens: tuple[str, ...]) -> regex.Pattern[str]:
    # Longest first, so that "<|a|>x" wins over its prefix "<|a|>" at the same position.
    ordered = sorted(tokens, key=lambda s: (-len(s), s))
    return regex.compile("|".join(regex.escape(s) for s in ordered) if ordered else r"(?!)")


@functools.lru_cache(maxsize=32)
def literal_regex(words: frozenset[str]) -> re.Pattern[str]:
    """A regex finding ``words`` leftmost-longest, shaped as a trie: a flat alternation of
    Gemma's 6,000 added tokens tries each one at every position; the trie, one path.

    >>> [m.group() for m in literal_regex(frozenset({"<a>", "<a>x", "  "})).finditer("<a>x <a>   ")]
    ['<a>x', '<a>', '  ']
    """
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}
    if not words:
        return re.compile(r"(?!)")
    try:
        return re.compile(_trie_pattern(trie) or r"(?!)")
    except RecursionError:
        # thousands of words each a prefix of the next nest as deep in the trie, deeper than
        # re's parser recurses; longest first finds the same matches, only more slowly
        return re.compile("|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w))))


def _trie_pattern(root: dict) -> str:
    # bottom-up with a stack of its own: a word of 5,000 characters is a trie 5,000 deep
    done: dict[int, str] = {}
    todo: list[tuple[dict, bool]] = [(root, False)]
    while todo:
        node, children_done = todo.pop()
        if not children_done:
            todo.append((node, True))
            todo.extend((node[ch], False) for ch in node if ch)
            continue
        alts, leaves = [], []
        for ch in sorted(k for k in node if k):
            sub = done.pop(id(node[ch]))
            (alts.append(re.escape(ch) + sub) if sub else leaves.append(re.escape(ch)))
        if leaves:
            alts.append(leaves[0] if len(leaves) == 1 else "[" + "".join(leaves) + "]")
        if not alts:
            done[id(node)] = ""
            continue
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        # greedy: a longer word through this node is tried before the word that ends here
        done[id(node)] = "(?:" + body + ")?" if "" in node else body
    return done[id(root)]


@functools.lru_cache(maxsize=32)
def missing_regex(missing: tuple[int, ...]) -> re.Pattern[str]:
    """Characters whose UTF-8 holds one of the ``missing`` bytes (0xC0, 0xC1 and 0xF5-0xFF
    never occur in UTF-8; any other byte above 0x7F is found by trying every character)."""
    parts = [re.escape(chr(b)) for b in missing if b < 0x80]
    other = {b for b in missing if 0x80 <= b < 0xC0 or 0xC2 <= b < 0xF5}
    if other:
        chars = (chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF)
        parts += [re.escape(c) for c in chars if other.intersection(c.encode("utf-8"))]
    return re.compile(f"[{''.join(parts)}]" if parts else r"(?!)")
