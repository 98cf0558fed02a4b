"""karpathy/minbpe's ``.model`` files (and the human-readable ``.vocab`` written beside them).

A ``.model`` file is::

    minbpe v1
    <split pattern, empty for no splitting>
    <number of special tokens>
    <special> <id>          (one line each)
    <left id> <right id>    (one line per merge; merge i makes id 256 + i)

Ids 0-255 are the single bytes, so only tokenizers numbered that way can be written.

>>> import tempfile
>>> from bpeinspect.core import Tokenizer
>>> p = Path(tempfile.mkdtemp()) / "toy.model"
>>> save(Tokenizer.from_merges([(104, 105)], pattern=None), p)
[]
>>> p.read_text().splitlines()
['minbpe v1', '', '0', '104 105']
>>> load(p).encode("hihi")
[256, 256]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.atomic import atomic_write_many, finish_interrupted
from bpeinspect.core.io.formats._common import build_tokenizer, decode_text, expect, read_bytes_limited
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.split.rules import PRESETS, Split, SplitRule
from bpeinspect.core.tokenizer import Tokenizer

MAGIC = "minbpe v1"


def looks_like(head: bytes) -> bool:
    return head.startswith(MAGIC.encode())


def _number(word: str) -> bool:
    # str.isdigit() is true for "²" and "٣", which int() refuses or reads as another number
    return word.isascii() and word.isdigit() and len(word) < 20


def _rule_for(pattern: str) -> SplitRule | None:
    if not pattern:
        return None
    for rule in PRESETS.values():
        if rule.pattern == pattern:
            return rule
    # minbpe cuts text with regex.findall: the matches are the pieces and gaps are dropped.
    return SplitRule((Split(pattern, "removed", invert=True),))


def load(path: Path, *, should_stop: Callable[[], bool] | None = None, **_: Any) -> Tokenizer:
    """A tokenizer from a minbpe ``.model`` file."""
    if path.suffix == ".vocab":
        model = path.with_suffix(".model")
        if not model.is_file():
            raise VocabularyError(f"{path}: a minbpe .vocab file is for reading only; load its .model file")
        path = model
    finish_interrupted(
        path.parent, (path.name, path.with_suffix(".vocab").name)
    )  # a save killed between the renames of .model and .vocab
    lines = decode_text(read_bytes_limited(path), path).split("\n")
    expect(lines[0].strip() == MAGIC, path, f"not a minbpe model (the first line is not {MAGIC!r})")
    expect(len(lines) >= 3, path, "the file is truncated (no pattern or special-token count)")
    pattern = lines[1].strip()
    try:
        n_special = int(lines[2])
    except ValueError:
        raise VocabularyError(f"{path}: line 3 should be the number of special tokens") from None
    expect(0 <= n_special <= len(lines) - 3, path, f"it announces {n_special} special tokens but has fewer lines")
    specials: dict[str, int] = {}
    for n in range(3, 3 + n_special):
        parts = lines[n].split()
        expect(len(parts) == 2 and _number(parts[1]), path, f"line {n + 1} is not 'special-token id'")
        specials[parts[0]] = int(parts[1])
    merges: list[tuple[int, int]] = []
    for n in range(3 + n_special, len(lines)):
        line = lines[n].strip()
        if not line:
            continue
        parts = line.split()
        expect(len(parts) == 2 and all(map(_number, parts)), path, f"line {n + 1} is not 'left-id right-id'")
        merges.append((int(parts[0]), int(parts[1])))
    rule = _rule_for(pattern)
    if rule is not None:
        build_tokenizer(path, rule.validate)
    return build_tokenizer(
        path,
        Tokenizer.from_merges,
        merges,
        should_stop=should_stop,
        pattern=rule,
        special_tokens=specials,
        name=name_for(path, file_stem(path)),
        source=f"{path} (minbpe model)",
    )


def _pattern_of(tok: Tokenizer, path: Path) -> str:
    splits = tok.split_rule.splits
    if not splits:
        return ""
    one = splits[0]
    if len(splits) == 1 and ((one.behavior, one.invert) in (("isolated", False), ("removed", True))):
        pattern = splits[0].pattern
        if "\n" in pattern or pattern != pattern.strip():
            raise VocabularyError(f"{path}: minbpe's format cannot hold a pattern with line breaks or edge spaces")
        return pattern
    raise VocabularyError(f"{path}: minbpe's format holds one regex; this split rule has {len(splits)} steps")


def _check_numbering(tok: Tokenizer, path: Path) -> list[tuple[int, int]]:
    for b in range(256):
        if tok.token_id(bytes([b])) != b:
            raise VocabularyError(
                f"{path}: minbpe's format needs ids 0-255 to be the single bytes; this vocabulary differs"
            )
    merges = tok.merges
    for n, (a, b) in enumerate(merges):
        if tok.merge_result(a, b) != 256 + n:
            raise VocabularyError(f"{path}: minbpe's format needs merge i to make id 256+i; merge {n} does not")
    for s in tok.special_tokens:
        if not s or any(c.isspace() for c in s):
            raise VocabularyError(f"{path}: minbpe's format cannot hold the special token {s!r} (empty or with spaces)")
    return merges


def save(tok: Tokenizer, path: Path) -> list[str]:
    """Write ``path`` (a ``.model``) and its ``.vocab`` beside it, atomically each (no notes:
    what the format cannot keep is refused)."""
    model_path = path.with_suffix(".model")
    merges = _check_numbering(tok, model_path)
    pattern = _pattern_of(tok, model_path)
    lines = [MAGIC, pattern, str(len(tok.special_tokens))]
    lines += [f"{s} {i}" for s, i in tok.special_tokens.items()]
    lines += [f"{a} {b}" for a, b in merges]
    # both or neither: a new .model beside an old .vocab would disagree
    atomic_write_many({model_path: "\n".join(lines) + "\n", model_path.with_suffix(".vocab"): vocab_text(tok)})
    return []


def render_token(b: bytes) -> str:
    """A token printed as minbpe prints it: control characters escaped as ``\\uXXXX``.

    >>> render_token(b"a\\n")
    'a\\\\u000a'
    """
    s = b.decode("utf-8", errors="replace")
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c)[0] == "C" else c for c in s)


def vocab_text(tok: Tokenizer) -> str:
    """minbpe's ``.vocab`` listing: ``[left][right] -> [token] id`` for merged tokens."""
    parents = {tok.merge_result(a, b): (a, b) for a, b in tok.merges}
    out = []
    for i in tok.ids():
        s = render_token(tok.token_bytes(i))
        if i in parents:
            a, b = parents[i]
            out.append(f"[{render_token(tok.token_bytes(a))}][{render_token(tok.token_bytes(b))}] -> [{s}] {i}")
        else:
            out.append(f"[{s}] {i}")
    return "\n".join(out) + "\n"
