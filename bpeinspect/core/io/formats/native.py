"""bpeinspect's own JSON format: everything a tokenizer is, including how it was trained.

::

    {"format": "bpeinspect", "version": 1, "name": ..., "source": ...,
     "pattern": {"name": "gpt4", "splits": [{"pattern": ..., "behavior": "isolated", "invert": false}]},
     "special_tokens": {"<|endoftext|>": 50256},
     "rule": "pairs" | "ranks", "ignore_merges": false,
     "tokens": ["IQ==", ...],             # base64 bytes by id; null for special/absent ids
     "merges": [[left, right], ...],      # pair rule only, in priority order
     "training": {"settings": {...}, "counts": [...]} | null}

>>> import tempfile
>>> from bpeinspect.core import Tokenizer
>>> p = Path(tempfile.mkdtemp()) / "toy.bpeinspect.json"
>>> save(Tokenizer.from_merges([(104, 105)], pattern="gpt4"), p)
[]
>>> load(p).encode("hihi")
[256, 256]
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.atomic import atomic_write
from bpeinspect.core.io.formats._common import ByteVocabulary, expect, parse_json, read_bytes_limited
from bpeinspect.core.split.rules import BEHAVIORS, PRESETS, Split, SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo

FORMAT = "bpeinspect"
VERSION = 1


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def rule_to_dict(rule: SplitRule) -> dict:
    out = {
        "name": rule.name,
        "splits": [{"pattern": s.pattern, "behavior": s.behavior, "invert": s.invert} for s in rule.splits],
    }
    if rule.unicode:
        out["unicode"] = rule.unicode  # the patterns see Unicode as Hugging Face ("hf") or llama.cpp ("llama") does
    return out


def rule_from_dict(obj: Any, path: Path | str) -> SplitRule:
    expect(isinstance(obj, dict) and isinstance(obj.get("splits"), list), path, "'pattern' must hold a 'splits' list")
    splits = []
    for s in obj["splits"]:
        expect(
            isinstance(s, dict)
            and isinstance(s.get("pattern"), str)
            and s.get("behavior", "isolated") in BEHAVIORS
            and isinstance(s.get("invert", False), bool),
            path,
            f"bad split step {s!r}",
        )
        splits.append(Split(s["pattern"], s.get("behavior", "isolated"), s.get("invert", False)))
    name = obj.get("name") if isinstance(obj.get("name"), str) else ""
    expect(
        obj.get("unicode", "") in ("", "hf", "llama"), path, f"unknown 'unicode' {obj.get('unicode')!r} in 'pattern'"
    )
    if obj.get("unicode") == "llama":  # a GGUF file's rule: run as llama.cpp runs it, never on a preset's engine
        return SplitRule(tuple(splits), name=name, unicode="llama")
    preset = PRESETS.get(name)
    if preset is not None and preset.splits == tuple(splits):
        return preset
    rule = SplitRule(tuple(splits), name=name)
    if len(splits) == 1 and splits[0].behavior == "isolated" and not splits[0].invert and splits[0].pattern:
        try:
            fast = resolve_rule(splits[0].pattern)
        except ValueError as exc:
            raise VocabularyError(f"{path}: {exc}") from None
        if fast.fast is not None:
            return fast
    return rule.with_hf_unicode() if obj.get("unicode") == "hf" else rule


def to_dict(tok: Tokenizer) -> dict:
    tokens: list[str | None] = [None] * tok.n_vocab
    for b, i in tok.mergeable_ranks.items():
        tokens[i] = base64.b64encode(b).decode("ascii")
    training = None
    if tok.training is not None:
        training = {"settings": tok.training.settings, "counts": list(tok.training.counts)}
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": tok.name,
        "source": tok.source,
        "pattern": rule_to_dict(tok.split_rule),
        "special_tokens": dict(tok.special_tokens),
        "added_tokens": dict(tok.added_tokens),
        "rule": "ranks" if tok.uses_rank_rule else "pairs",
        "ignore_merges": tok.ignore_merges,
        "byte_barriers": tok.byte_barriers,
        "tokens": tokens,
        "merges": None if tok.uses_rank_rule else [list(m) for m in tok.merges],
        "training": training,
    }


def from_dict(obj: Any, path: Path | str, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    expect(looks_like(obj), path, f'not a {FORMAT} file (no "format": "{FORMAT}")')
    version = obj.get("version")
    expect(type(version) is int, path, "no format version")
    expect(version <= VERSION, path, f"format version {version} is newer than this bpeinspect reads ({VERSION})")
    rule = rule_from_dict(obj.get("pattern"), path)
    try:
        rule.validate()
    except ValueError as exc:
        raise VocabularyError(f"{path}: {exc}") from None
    tokens = obj.get("tokens")
    expect(isinstance(tokens, list), path, "'tokens' must be a list")
    ranks: dict[bytes, int] = {}
    for i, t in enumerate(tokens):
        if t is None:
            continue
        expect(isinstance(t, str), path, f"token {i} is not a base64 string")
        try:
            b = base64.b64decode(t, validate=True)
        except (binascii.Error, ValueError):
            raise VocabularyError(f"{path}: token {i} is not valid base64") from None
        expect(b not in ranks, path, f"token {i} repeats token {ranks.get(b)}")
        ranks[b] = i
    specials = obj.get("special_tokens") or {}
    added = obj.get("added_tokens") or {}
    for key, table in (("special_tokens", specials), ("added_tokens", added)):
        expect(
            isinstance(table, dict) and all(isinstance(k, str) and type(v) is int for k, v in table.items()),
            path,
            f"'{key}' must map text to ids",
        )
    rule_kind = obj.get("rule")
    expect(rule_kind in ("pairs", "ranks"), path, "'rule' must be 'pairs' or 'ranks'")
    merges = None
    if rule_kind == "pairs":
        raw = obj.get("merges")
        expect(isinstance(raw, list), path, "'merges' must be a list for the pair rule")
        for n, m in enumerate(raw):
            expect(
                isinstance(m, list) and len(m) == 2 and all(type(x) is int for x in m),
                path,
                f"merge {n} is not [left, right]",
            )
        merges = [(a, b) for a, b in raw]
    training = None
    tr = obj.get("training")
    if tr is not None:
        expect(isinstance(tr, dict), path, "'training' must be an object")
        settings, counts = tr.get("settings", {}), tr.get("counts", [])
        expect(isinstance(settings, dict), path, "training settings must be an object")
        expect(
            isinstance(counts, list) and all(type(c) is int for c in counts), path, "training counts must be integers"
        )
        training = TrainingInfo(settings, counts)
    name = obj.get("name") if isinstance(obj.get("name"), str) else ""
    return ByteVocabulary(ranks, specials, added, merges).tokenizer(
        path,
        rule,
        should_stop=should_stop,
        ignore_merges=bool(obj.get("ignore_merges", False)),
        byte_barriers=bool(obj.get("byte_barriers", False)),
        name=name or Path(path).name.split(".")[0],
        source=f"{path} (bpeinspect JSON)",
        training=training,
    )


def load(
    path: Path, data: bytes | None = None, *, should_stop: Callable[[], bool] | None = None, **_: Any
) -> Tokenizer:
    if data is None:
        data = read_bytes_limited(path)
    return from_dict(parse_json(data, path), path, should_stop)


def save(tok: Tokenizer, path: Path) -> list[str]:
    """Write ``tok`` as bpeinspect JSON (atomically); it keeps everything (no notes)."""
    atomic_write(path, json.dumps(to_dict(tok), ensure_ascii=False, indent=1))
    return []
