r"""tiktoken's JSON encoders, as the JavaScript ports ship them: npm ``tiktoken``'s
``encoders/*.json`` and js-tiktoken's ``ranks/*.js``.

One object holds everything a rank file leaves out::

    {"pat_str": "...", "special_tokens": {"<|endoftext|>": 100257, ...},
     "bpe_ranks": "! 0 IQ== Ig== ...\n! 50257 ...", "explicit_n_vocab": 50257}

``bpe_ranks`` is a compressed rank table: lines of ``<ignored> <first rank> <base64 token>...``,
the tokens of a line taking consecutive ranks from the first. js-tiktoken writes the same
object as a JavaScript module (``export default {...};`` or ``module.exports = {...};``),
which is read here too. The tokenizer is tiktoken's: the rank rule, the file's pattern and
special tokens.

>>> import base64, json
>>> from bpeinspect.core import load_tokenizer
>>> gpt2 = load_tokenizer("r50k_base")
>>> tokens = [base64.b64encode(t).decode() for t, _ in sorted(gpt2.ranks.items(), key=lambda x: x[1])]
>>> obj = {"pat_str": gpt2.split_rule.pattern, "special_tokens": {"<|endoftext|>": 50256},
...        "bpe_ranks": "! 0 " + " ".join(tokens[:1000]) + "\n! 1000 " + " ".join(tokens[1000:])}
>>> tok = load(Path("gpt2.json"), data=json.dumps(obj).encode())
>>> tok.encode("hello world<|endoftext|>", allowed_special="all")
[31373, 995, 50256]
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core import limits
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats._common import build_tokenizer, check_count, expect, parse_json, read_bytes_limited
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.split.rules import PatternError, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer

# js-tiktoken's module wrappers around the one JSON object
_MODULE_HEAD = re.compile(rb"\s*(?:export\s+default|module\.exports\s*=)\s*(?=\{)")


def looks_like(obj: Any) -> bool:
    """True for the parsed object of a JSON encoder."""
    return isinstance(obj, dict) and isinstance(obj.get("bpe_ranks"), str) and "pat_str" in obj


def looks_like_module(head: bytes) -> bool:
    """True for a js-tiktoken ranks module (judged by the first bytes of the file)."""
    m = _MODULE_HEAD.match(head)
    return m is not None and (b'"pat_str"' in head or b'"bpe_ranks"' in head)


def _object_of_module(data: bytes, path: Path | str) -> bytes:
    m = _MODULE_HEAD.match(data)
    if m is None:
        raise VocabularyError(
            f"{path}: not a js-tiktoken ranks module (no 'export default {{' or 'module.exports = {{')"
        )
    body = data[m.end() :].rstrip().rstrip(b";").rstrip()
    expect(body.endswith(b"}"), path, "the ranks module does not end with its object")
    return body


def load(
    path: Path, data: bytes | None = None, *, should_stop: Callable[[], bool] | None = None, **_: Any
) -> Tokenizer:
    """A tokenizer from a JSON encoder or a js-tiktoken ranks module (``data``: its bytes)."""
    if data is None:
        data = read_bytes_limited(path)
    if _MODULE_HEAD.match(data):
        data = _object_of_module(data, path)
    return from_dict(parse_json(data, path), path, should_stop)


def parse_bpe_ranks(text: str, path: Path | str = "<bpe_ranks>") -> dict[bytes, int]:
    """The rank table of a ``bpe_ranks`` string.

    >>> parse_bpe_ranks("! 0 YQ== Yg==\\n! 5 YWI=")
    {b'a': 0, b'b': 1, b'ab': 5}
    """
    ranks: dict[bytes, int] = {}
    longest = limits.MAX_TOKEN_BYTES
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        parts = line.split(" ")
        expect(len(parts) >= 2 and parts[1].isdigit(), path, f"bpe_ranks line {lineno} does not start '<x> <rank>'")
        first = int(parts[1])
        tokens = parts[2:]
        check_count(first + len(tokens), path, "ranks")
        for k, b64 in enumerate(tokens):
            try:
                token = binascii.a2b_base64(b64, strict_mode=True) if b64.strip("=") else b""
            except (binascii.Error, ValueError):
                raise VocabularyError(f"{path}: bpe_ranks line {lineno} holds {b64[:40]!r}, not base64") from None
            expect(len(token) <= longest, path, f"bpe_ranks line {lineno} holds a token of more than {longest:,} bytes")
            expect(token not in ranks, path, f"bpe_ranks line {lineno} repeats the token {token[:40]!r}")
            ranks[token] = first + k
    expect(bool(ranks), path, "bpe_ranks holds no token")
    return ranks


def from_dict(obj: Any, path: Path | str, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    """A tokenizer from a parsed JSON encoder."""
    expect(looks_like(obj), path, "not a tiktoken JSON encoder (no pat_str and bpe_ranks)")
    pattern = obj["pat_str"]
    expect(isinstance(pattern, str) and bool(pattern), path, "pat_str must be a regex")
    specials = obj.get("special_tokens") or {}
    expect(isinstance(specials, dict), path, "special_tokens must be an object of text -> id")
    for s, i in specials.items():
        expect(bool(s) and type(i) is int and i >= 0, path, f"special token {s!r} has a bad id {i!r}")
    ranks = parse_bpe_ranks(obj["bpe_ranks"], path)
    n_vocab = obj.get("explicit_n_vocab")
    if n_vocab is not None:
        count = len(ranks) + len(specials)
        expect(
            type(n_vocab) is int and n_vocab == count,
            path,
            f"explicit_n_vocab is {n_vocab!r}, but the file holds {count} tokens",
        )
    try:
        rule = resolve_rule(pattern).with_hf_unicode()  # tiktoken's engine sees Unicode as Hugging Face's does
    except PatternError as exc:
        raise VocabularyError(f"{path}: pat_str: {exc}") from None
    name = name_for(Path(path), file_stem(Path(path)))
    source = f"{path} (tiktoken JSON encoder)"
    return build_tokenizer(
        path, Tokenizer, ranks, pattern=rule, special_tokens=specials, name=name, source=source, should_stop=should_stop
    )
