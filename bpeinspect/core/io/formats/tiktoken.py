"""tiktoken's ``.tiktoken`` rank files: one ``base64(token) rank`` pair per line.

The file holds neither the split pattern nor the special tokens. Known files (OpenAI's, Llama
3 and 4, Qwen, Whisper: :mod:`.known_ranks`) are recognised by their sha256 and get their real
settings; any other file takes them from the caller, defaulting to the cl100k pattern and no
special tokens, which the tokenizer reports in ``assumed``.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "r50k.tiktoken"
>>> from bpeinspect.core import load_tokenizer
>>> save(load_tokenizer("gpt2"), p)
[]
>>> tok = load(p)  # recognised by its sha256: r50k_base's settings, the file's own name
>>> tok.name, tok.split_rule.name, tok.source.endswith("r50k_base)")
('r50k', 'r50k', True)
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path

from bpeinspect.core.io.atomic import atomic_open
from bpeinspect.core.io.builtins import BUILTINS, parse_tiktoken_ranks
from bpeinspect.core.io.formats._common import build_tokenizer, read_bytes_limited
from bpeinspect.core.io.formats.known_ranks import KNOWN
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.normalize import Unicode
from bpeinspect.core.split.rules import PRESETS, SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer

DEFAULT_PATTERN = "cl100k"


def looks_like(head: bytes) -> bool:
    """True if the first line of ``head`` is ``base64 integer``."""
    first = head.split(b"\n", 1)[0].split()
    if len(first) != 2 or not first[1].isdigit():
        return False
    try:
        base64.b64decode(first[0], validate=True)
    except ValueError:
        return False
    return True


def load(
    path: Path,
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    """A tokenizer from a ``.tiktoken`` file (plain or gzipped).

    ``pattern``/``special_tokens`` override what a known file implies; for unknown files
    they default to the cl100k pattern and no special tokens.
    """
    data = read_bytes_limited(path)
    digest = hashlib.sha256(data).hexdigest()
    known = KNOWN.get(digest)
    ranks = parse_tiktoken_ranks(data, str(path), should_stop)
    inferred: dict[str, str] = {}
    assumed: dict[str, str] = {}
    if known is not None:
        how = f"{known.description}, recognised by the file's sha256"
        # a custom pattern sees Unicode as tiktoken's engine does (Hugging Face's tables are the same)
        rule: str | SplitRule | None = (
            resolve_rule(PRESETS.get(known.pattern, known.pattern)).with_hf_unicode() if pattern is None else pattern
        )
        specials = known.special_tokens(len(ranks)) if special_tokens is None else dict(special_tokens)
        for key, given in (("pattern", pattern), ("special_tokens", special_tokens)):
            if given is None:
                inferred[key] = how
            else:
                assumed[key] = "chosen by the user"
        if known.normalizer:
            inferred["normalizer"] = f"{known.normalizer} ({how})"
        source = f"{path} (tiktoken rank file, {known.name})"
        # a built-in's name is the built-in's: a copy of its file goes by the copy's own name
        own = (file_stem(path), known.name) if known.name in BUILTINS else (known.name,)
        default_name = name_for(path, *own)
    else:
        rule = PRESETS[DEFAULT_PATTERN] if pattern is None else pattern
        specials = dict(special_tokens or {})
        if pattern is None:
            assumed["pattern"] = (
                "cl100k_base's split rule, a default: the file does not store one and is not a known file "
                "(choose another with --pattern)"
            )
        if special_tokens is None:
            assumed["special_tokens"] = "none: the file does not store them (add some with --special-token)"
        source = f"{path} (tiktoken rank file)"
        default_name = name_for(path, file_stem(path))
    tok = build_tokenizer(
        path,
        Tokenizer,
        ranks,
        should_stop=should_stop,
        pattern=rule,
        special_tokens=specials,
        name=name or default_name,
        source=source,
        assumed=assumed,
        inferred=inferred,
        normalizer=Unicode(known.normalizer) if known is not None and known.normalizer else None,
    )
    return tok


def dumps(tok: Tokenizer) -> bytes:
    """The rank file of ``tok``'s non-special tokens, in id order."""
    ranks = tok.mergeable_ranks
    return b"".join(
        base64.b64encode(t) + b" " + str(i).encode() + b"\n" for t, i in sorted(ranks.items(), key=lambda x: x[1])
    )


def save(tok: Tokenizer, path: Path) -> list[str]:
    """Write ``tok``'s ranks as a ``.tiktoken`` file (atomically); returns notes on what the
    file does not keep.

    The file cannot hold the pattern, special tokens or explicit merges; a pair-rule
    tokenizer is written anyway (its ranks are its ids), and loading it back applies
    the rank rule (a note says so).
    """
    notes = []
    if not tok.uses_rank_rule:
        notes.append(
            f"{path}: a .tiktoken file holds ranks only; {tok.name or 'this tokenizer'} merges by an explicit "
            "pair list, and loading the file back applies tiktoken's rank rule instead"
        )
    with atomic_open(path, "wb") as f:
        f.write(dumps(tok))
    return notes
