"""Mistral's Tekken vocabularies (``tekken_*.json``: Mistral NeMo, Small 3, Pixtral, Codestral,
Ministral), read as ``mistral_common``'s ``Tekkenizer`` reads them.

The file holds a tiktoken-style rank vocabulary (``vocab``: base64 bytes by rank), its split
pattern (``config.pattern``) and the special tokens, which take the first ids: every rank is
shifted by ``config.default_num_special_tokens``, and only the first
``default_vocab_size - default_num_special_tokens`` ranks are used. Older files without a
``special_tokens`` list get mistral_common's deprecated list; unnamed special ids are
``<SPECIAL_n>``. mistral_common never recognises special-token text in ordinary text, so
``encode_ordinary`` (or ``disallowed_special=()``) matches it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats._common import ByteVocabulary, expect, parse_json, read_bytes_limited
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.tokenizer import Tokenizer

# mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS (files of version <= v7 without a list)
DEPRECATED_SPECIALS = (
    "<unk> <s> </s> [INST] [/INST] [AVAILABLE_TOOLS] [/AVAILABLE_TOOLS] [TOOL_RESULTS] [/TOOL_RESULTS] "
    "[TOOL_CALLS] [IMG] <pad> [IMG_BREAK] [IMG_END] [PREFIX] [MIDDLE] [SUFFIX] [SYSTEM_PROMPT] [/SYSTEM_PROMPT] "
    "[TOOL_CONTENT]"
).split()


def looks_like(obj: Any) -> bool:
    config = obj.get("config") if isinstance(obj, dict) else None
    return isinstance(config, dict) and "pattern" in config and isinstance(obj.get("vocab"), list)


def load(
    path: Path, data: bytes | None = None, *, should_stop: Callable[[], bool] | None = None, **_: Any
) -> Tokenizer:
    obj = parse_json(read_bytes_limited(path) if data is None else data, path)
    return from_dict(obj, path, should_stop)


def from_dict(obj: Any, path: Path | str, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    expect(looks_like(obj), path, "not a Tekken file (no config.pattern and vocab list)")
    config = obj["config"]
    pattern = config.get("pattern")
    expect(isinstance(pattern, str) and bool(pattern), path, "config.pattern must be a regex")
    n_special = config.get("default_num_special_tokens")
    vocab_size = config.get("default_vocab_size")
    vocab = obj["vocab"]
    expect(type(n_special) is int and n_special >= 0, path, "config.default_num_special_tokens must be a count")
    if vocab_size is None:
        vocab_size = len(vocab) + n_special
    expect(
        type(vocab_size) is int and n_special <= vocab_size <= len(vocab) + n_special,
        path,
        f"config.default_vocab_size {vocab_size!r} does not fit {len(vocab)} tokens and {n_special} specials",
    )
    ranks: dict[bytes, int] = {}
    for rank, entry in enumerate(vocab[: vocab_size - n_special]):
        expect(isinstance(entry, dict) and entry.get("rank") == rank, path, f"vocab entry {rank} is not rank {rank}")
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except (binascii.Error, ValueError, TypeError, KeyError):
            raise VocabularyError(f"{path}: vocab entry {rank} has no valid base64 token_bytes") from None
        expect(token not in ranks, path, f"vocab entry {rank} repeats a token")
        ranks[token] = rank + n_special
    named = obj.get("special_tokens")
    if named is None:
        names = DEPRECATED_SPECIALS[:n_special]
    else:
        expect(isinstance(named, list), path, "special_tokens must be a list")
        names = []
        for n, t in enumerate(named):
            expect(
                isinstance(t, dict) and t.get("rank") == n and isinstance(t.get("token_str"), str),
                path,
                f"special token {n} is not {{rank: {n}, token_str: ...}}",
            )
            names.append(t["token_str"])
    expect(len(names) <= n_special, path, f"{len(names)} special tokens, more than the {n_special} ids reserved")
    specials = {s: i for i, s in enumerate(names)}
    specials.update({f"<SPECIAL_{i}>": i for i in range(len(names), n_special)})
    expect(len(specials) == n_special, path, "two special tokens share a name")
    return ByteVocabulary(ranks, specials, {}).tokenizer(
        path,
        pattern,
        should_stop=should_stop,
        name=name_for(path, file_stem(path)),
        source=f"{path} (Mistral Tekken, {config.get('version', 'unknown version')})",
    )
