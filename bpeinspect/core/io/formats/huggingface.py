"""Hugging Face ``tokenizer.json`` files with a byte-level BPE model.

Read: the vocabulary (in GPT-2's byte alphabet), merges (``"a b"`` strings or ``[a, b]``
pairs), added tokens, ``ignore_merges`` and the pre-tokenizer (``ByteLevel``, ``Split``,
``Digits`` and ``Sequence`` of them), which becomes a :class:`SplitRule` of
:class:`Split` steps with Hugging Face's behaviours. The tokenizer uses the pair rule with
the file's merge order, so its encodings are Hugging Face's.

Normalizers (NFC, NFKC, Replace, ...) are applied as Hugging Face does
(:mod:`bpeinspect.core.normalize`); SentencePiece-style BPE (``byte_fallback``, ``▁``) loads
through :mod:`.hf_sentencepiece`. Anything that cannot be represented exactly (WordPiece,
Unigram, a prefix space...) is refused with a message naming it.

Added tokens with ``"special": true`` become the tokenizer's special tokens (Hugging Face
always cuts them out of the text, which is ``encode(text, allowed_special="all")`` here); those
with ``"special": false`` become its added tokens, matched before BPE in every encoding.

>>> demo = Tokenizer.from_merges([(104, 101), (108, 108), (256, 257), (258, 111)], pattern="r50k")
>>> tok = load(Path("tokenizer.json"), data=dumps(demo))
>>> tok.encode("hello hello")
[259, 32, 259]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import compress
from operator import not_
from pathlib import Path
from typing import Any

import regex

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.atomic import atomic_write
from bpeinspect.core.io.formats import hf_sentencepiece
from bpeinspect.core.io.formats._common import (
    ByteVocabulary,
    MappedMerges,
    all_found,
    bytes_to_token,
    expect,
    first_repeat,
    map_merges,
    parse_json,
    read_bytes_limited,
    token_to_bytes,
    tokens_to_bytes,
)
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.normalize import Normalizer, UnsupportedNormalizer, from_hf, to_hf
from bpeinspect.core.specials import PLAIN, AddedOptions
from bpeinspect.core.split.patterns import GPT2_PATTERN, R50K_PATTERN
from bpeinspect.core.split.rules import PRESETS, Behavior, Split, SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.word_marks import WordMarks

BEHAVIORS: dict[str, Behavior] = {
    "Isolated": "isolated",
    "Removed": "removed",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}
HF_BEHAVIOR = {v: k for k, v in BEHAVIORS.items()}
# Hugging Face's ByteLevel regex (GPT-2's); the r50k preset is the same split, run faster.
BYTELEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_BYTELEVEL_RULE_PATTERNS = {BYTELEVEL_PATTERN, R50K_PATTERN, GPT2_PATTERN}


def load(
    path: Path, data: bytes | None = None, *, should_stop: Callable[[], bool] | None = None, **_: Any
) -> Tokenizer:
    """A tokenizer from a ``tokenizer.json`` (``data`` = its bytes, if already read)."""
    if data is None:
        data = read_bytes_limited(path)
    obj = parse_json(data, path)
    try:
        return from_dict(obj, path, should_stop)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        # a value of the wrong JSON type somewhere the checks above do not look (found by fuzzing)
        raise VocabularyError(f"{path}: a malformed tokenizer.json ({type(exc).__name__}: {exc})") from None


_NON_BPE = {
    "WordPiece": "WordPiece (BERT-style word pieces)",
    "Unigram": "Unigram (SentencePiece unigram, as T5 and XLM-R)",
    "WordLevel": "WordLevel (a whole-word lookup table)",
}


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("model"), dict)


def from_dict(obj: Any, path: Path | str, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    """A tokenizer from a parsed ``tokenizer.json``."""
    expect(looks_like(obj), path, "not a Hugging Face tokenizer.json (no 'model' object)")
    model = obj["model"]
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        what = _NON_BPE.get(kind, kind or "of unknown type")
        raise UnsupportedTokenizerError(f"{path}: the model is {what}, not BPE; bpeinspect opens BPE tokenizers only")
    if hf_sentencepiece.is_sentencepiece_style(obj):
        specials, added = _added_tokens(obj.get("added_tokens"), path)
        return hf_sentencepiece.from_dict(obj, path, specials, added, added_options(obj.get("added_tokens")))
    marks = word_marks_of(model, path)
    _check_model_options(model, path, marks)
    normalizer = _normalizer(obj.get("normalizer"), path)
    rule = split_rule_from_pre_tokenizer(obj.get("pre_tokenizer"), path)

    vocab = model.get("vocab")
    expect(isinstance(vocab, dict) and vocab, path, "model.vocab must be a non-empty object of token -> id")
    specials, added = _added_tokens(obj.get("added_tokens"), path)
    added_ids = set(added.values()) | set(specials.values())
    ranks, unmapped = _ranks(vocab, added_ids, path) if marks is None else _marked_ranks(vocab, added_ids, marks, path)
    if unmapped:
        notes: tuple[str, ...] = (
            f"{path}: {len(unmapped)} vocabulary entries are not in the byte-level alphabet and can never be "
            f"produced; they are left out (e.g. {unmapped[0]!r})",
        )
    else:
        notes = ()
    for content, i in {**specials, **added}.items():
        other = vocab.get(content)
        if other is not None and other != i:
            raise VocabularyError(f"{path}: added token {content!r} has id {i} but the vocabulary gives it {other}")
    if marks is None:
        merges, made = _merges(model.get("merges"), vocab, path)
    else:
        merges, made = _marked_merges(model.get("merges"), vocab, marks, path)
    _keep_spelled_specials(ranks, {**specials, **added}, vocab, made)
    model["merges"] = None  # the parsed strings are the largest part of a big file: free them now
    ignore_merges = bool(model.get("ignore_merges", False))
    tok = ByteVocabulary(ranks, specials, added, merges, made).tokenizer(
        path,
        rule,
        should_stop=should_stop,
        added_options=added_options(obj.get("added_tokens")),
        duplicate_merges="last",  # Hugging Face keeps the last rank of a pair listed twice
        ignore_merges=ignore_merges,
        name=_name_for(path),
        source=f"{path} (Hugging Face tokenizer.json)",
        normalizer=normalizer,
        word_marks=marks,
        unk_id=None if marks is None else _unk_id(model, vocab, path),
    )
    if notes:
        tok.load_notes = notes
    return tok


def word_marks_of(model: dict, path: Path | str) -> WordMarks | None:
    """The model's ``end_of_word_suffix`` and ``continuing_subword_prefix``, or ``None``."""
    suffix, prefix = model.get("end_of_word_suffix") or "", model.get("continuing_subword_prefix") or ""
    expect(
        isinstance(suffix, str) and isinstance(prefix, str),
        path,
        "end_of_word_suffix and continuing_subword_prefix must be strings",
    )
    marks = WordMarks(suffix, prefix)
    return marks or None


def _unk_id(model: dict, vocab: dict, path: Path | str) -> int | None:
    unk = model.get("unk_token")
    if unk is None:
        return None
    expect(
        isinstance(unk, str) and isinstance(vocab.get(unk), int),
        path,
        f"the unk_token {unk!r} is not in the vocabulary",
    )
    return vocab[unk]


def _keep_spelled_specials(ranks: dict[bytes, int], added: dict[str, int], vocab: dict, made: list[int]) -> None:
    """Hugging Face's trainer gives a special token's id to a byte, or to a merge, that spells
    the special's text (bpeinspect's ``tie_break="hf"`` does too): such an entry is a normal
    token as well, so it goes back into ``ranks``."""
    spelled = {}
    for content, i in added.items():
        if vocab.get(content) == i:
            b = token_to_bytes(content)
            if b is not None and b == content.encode("utf-8") and b not in ranks:
                spelled[content] = (b, i)
    if not spelled:
        return
    made_ids = set(made)
    for b, i in spelled.values():
        if len(b) == 1 or i in made_ids:
            ranks[b] = i


def _name_for(path: Path | str) -> str:
    p = Path(path)
    return name_for(p, file_stem(p))


def _check_model_options(model: dict, path: Path | str, marks: WordMarks | None) -> None:
    if model.get("byte_fallback"):
        raise UnsupportedTokenizerError(
            f"{path}: BPE with byte_fallback over a ByteLevel pre-tokenizer is not supported (SentencePiece-style "
            "files, with ▁ pieces and no ByteLevel step, are)"
        )
    if marks is not None and model.get("fuse_unk"):
        raise UnsupportedTokenizerError(f"{path}: BPE with word marks and fuse_unk is not supported")
    hf_sentencepiece.check_bpe_options(model, path, word_marks=marks is not None)


def _normalizer(norm: Any, path: Path | str) -> Normalizer | None:
    try:
        return from_hf(norm)
    except UnsupportedNormalizer as exc:
        raise UnsupportedTokenizerError(f"{path}: {exc}") from None


def _flatten(pt: Any, path: Path | str) -> list[dict]:
    if pt is None:
        return []
    expect(isinstance(pt, dict), path, "pre_tokenizer must be an object or null")
    if pt.get("type") == "Sequence":
        subs = pt.get("pretokenizers")
        expect(isinstance(subs, list), path, "Sequence pre_tokenizer without a 'pretokenizers' list")
        return [x for s in subs for x in _flatten(s, path)]
    return [pt]


def split_rule_from_pre_tokenizer(pt: Any, path: Path | str = "<tokenizer.json>") -> SplitRule:
    """The :class:`SplitRule` of a ``pre_tokenizer`` object; it must end in ``ByteLevel``."""
    steps = _flatten(pt, path)
    if not steps or steps[-1].get("type") != "ByteLevel":
        names = ", ".join(str(s.get("type", "?")) for s in steps) or "none"
        raise UnsupportedTokenizerError(
            f"{path}: the pre-tokenizer ({names}) does not end in ByteLevel, so the model is not byte-level BPE"
        )
    splits: list[Split] = []
    for i, step in enumerate(steps):
        kind = step.get("type")
        if kind == "ByteLevel":
            expect(i == len(steps) - 1, path, "ByteLevel must be the last pre-tokenizer")
            if step.get("add_prefix_space", False):
                raise UnsupportedTokenizerError(
                    f"{path}: ByteLevel with add_prefix_space=true inserts a space into the text; not supported"
                )
            if step.get("use_regex", True):
                splits.append(Split(BYTELEVEL_PATTERN))
        elif kind == "Split":
            pat = step.get("pattern")
            if not isinstance(pat, dict) or len(pat) != 1:
                raise VocabularyError(f"{path}: Split pre-tokenizer without a pattern")
            ((pk, pv),) = pat.items()
            expect(pk in ("Regex", "String") and isinstance(pv, str), path, f"Split pattern {pat!r} is not understood")
            pattern = pv if pk == "Regex" else regex.escape(pv)
            raw_behavior = step.get("behavior", "Isolated")
            behavior = BEHAVIORS.get(raw_behavior) if isinstance(raw_behavior, str) else None
            if behavior is None:
                raise VocabularyError(f"{path}: Split behavior {raw_behavior!r} is not understood")
            splits.append(Split(pattern, behavior, bool(step.get("invert", False))))
        elif kind == "Digits":
            splits.append(Split(r"\p{N}", "isolated" if step.get("individual_digits") else "contiguous"))
        else:
            raise UnsupportedTokenizerError(f"{path}: the pre-tokenizer {kind} is not supported")
    try:
        rule = _fast_equivalent(splits)
        rule.validate()
    except ValueError as exc:
        raise VocabularyError(f"{path}: {exc}") from None
    return rule.with_hf_unicode()  # Hugging Face's Unicode tables, not the regex module's newer ones


def _fast_equivalent(splits: list[Split]) -> SplitRule:
    if len(splits) == 1 and splits[0].behavior == "isolated" and not splits[0].invert:
        if splits[0].pattern == BYTELEVEL_PATTERN:
            return PRESETS["r50k"]
        return resolve_rule(splits[0].pattern)
    return SplitRule(tuple(splits))


def _added_tokens(items: Any, path: Path | str) -> tuple[dict[str, int], dict[str, int]]:
    """``(special, added)``: the added tokens with ``"special": true``, and the others."""
    if items is None:
        return {}, {}
    expect(isinstance(items, list), path, "added_tokens must be a list")
    out: dict[str, int] = {}
    plain: set[str] = set()
    for t in items:
        expect(isinstance(t, dict), path, "an added token is not an object")
        content, i = t.get("content"), t.get("id")
        expect(isinstance(content, str) and content, path, f"added token {t!r} has no content")
        expect(type(i) is int and i >= 0, path, f"added token {content!r} has a bad id {i!r}")
        expect(content not in out, path, f"added token {content!r} appears twice")
        out[content] = i
        if t.get("special") is False:
            plain.add(content)
    expect(len(set(out.values())) == len(out), path, "two added tokens share one id")
    return {s: i for s, i in out.items() if s not in plain}, {s: i for s, i in out.items() if s in plain}


def added_options(items: Any) -> dict[str, AddedOptions]:
    """The flags of the added tokens that have any: ``(lstrip, rstrip, single_word,
    normalized)`` by token text (read after :func:`_added_tokens` has checked the list).
    A token without ``normalized`` gets Hugging Face's default: true unless it is special."""
    out: dict[str, AddedOptions] = {}
    for t in items or ():
        special = t.get("special", False) is not False
        flags = (
            bool(t.get("lstrip")),
            bool(t.get("rstrip")),
            bool(t.get("single_word")),
            bool(t.get("normalized", not special)),
        )
        if flags != PLAIN:
            out[t["content"]] = flags
    return out


def _ranks(vocab: dict[str, Any], skip: set[int], path: Path | str) -> tuple[dict[bytes, int], list[str]]:
    """Token bytes -> id for the vocabulary (ids in ``skip`` left out), and the entries that are
    not in GPT-2's byte alphabet. Checked in bulk (C-level maps, no per-token Python code)."""
    ids = list(vocab.values())
    if set(map(type, ids)) - {int} or min(ids, default=0) < 0:
        text, i = next((t, i) for t, i in vocab.items() if type(i) is not int or i < 0)
        raise VocabularyError(f"{path}: token {text!r} has a bad id {i!r}")
    tokens = list(vocab)
    if skip:
        keep = list(map(not_, map(skip.__contains__, ids)))
        tokens, ids = list(compress(tokens, keep)), list(compress(ids, keep))
    blobs = tokens_to_bytes(tokens)
    unmapped: list[str] = []
    if all_found(blobs):  # the usual case: every token is in the alphabet
        ranks = dict(zip(blobs, ids))
    else:
        unmapped = [t for t, b in zip(tokens, blobs) if b is None]
        ranks = {b: i for b, i in zip(blobs, ids) if b is not None}
    if len(ranks) != len(blobs) - len(unmapped):
        dup = first_repeat(b for b in blobs if b is not None)
        raise VocabularyError(f"{path}: token {bytes_to_token(dup)!r} appears twice")
    return ranks, unmapped


def _marked_ranks(
    vocab: dict[str, Any], skip: set[int], marks: WordMarks, path: Path | str
) -> tuple[dict[bytes, int], list[str]]:
    """:func:`_ranks` for a model with word marks: each token's text in GPT-2's byte alphabet,
    its marks around it as :meth:`WordMarks.key` spells them."""
    ranks: dict[bytes, int] = {}
    unmapped: list[str] = []
    for token, i in vocab.items():
        expect(type(i) is int and i >= 0, path, f"token {token!r} has a bad id {i!r}")
        if i in skip:
            continue
        text, continues, ends = marks.parse(token)
        data = token_to_bytes(text)
        if data is None:
            unmapped.append(token)
            continue
        key = marks.key(data, continues, ends)
        expect(key not in ranks, path, f"token {token!r} appears twice")
        ranks[key] = i
    return ranks, unmapped


def _marked_merges(
    items: Any, vocab: dict[str, int], marks: WordMarks, path: Path | str
) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges of a model with word marks as id pairs, and what each makes: Hugging Face
    spells the result without the right part's prefix (``a`` + ``##b`` -> ``ab``)."""
    if isinstance(items, MappedMerges):  # mapped while parsing, as left + right
        expect(not marks.prefix, path, "a merge list too large to read with a continuing_subword_prefix")
        return items.pairs, items.made
    expect(isinstance(items, list), path, "model.merges must be a list")
    pairs: list[tuple[int, int]] = []
    made: list[int] = []
    for n, m in enumerate(items):
        parts = m.split(" ") if isinstance(m, str) else m if isinstance(m, list) else []
        expect(
            len(parts) == 2 and all(isinstance(p, str) for p in parts),
            path,
            f"merge {n} ({m!r}) is not 'left right' or [left, right]",
        )
        a, b, new = vocab.get(parts[0]), vocab.get(parts[1]), vocab.get(marks.merged(*parts))
        if a is None or b is None:
            raise VocabularyError(f"{path}: merge {n} ({m!r}) uses a token not in the vocabulary")
        if new is None:
            why = (
                f" (the continuing_subword_prefix {marks.prefix!r} dropped from its right part)" if marks.prefix else ""
            )
            raise VocabularyError(
                f"{path}: merge {n} ({m!r}) makes {marks.merged(*parts)!r}, not in the vocabulary{why}"
            )
        pairs.append((a, b))
        made.append(new)
    return pairs, made


def _merges(items: Any, vocab: dict[str, int], path: Path | str) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges as id pairs, and the id each one makes (a pair listed twice is left to the
    tokenizer, which keeps its last listing as Hugging Face does)."""
    if isinstance(items, MappedMerges):  # mapped while parsing
        found: tuple[list[tuple[int, int]], list[int]] | None = (items.pairs, items.made)
    else:
        expect(isinstance(items, list), path, "model.merges must be a list")
        found = map_merges(items, vocab)
    if found is None:  # something is wrong: find the first bad merge and say what
        found = _checked_merges(items, vocab, path)
    return found


def _checked_merges(items: list, vocab: dict[str, int], path: Path | str) -> tuple[list[tuple[int, int]], list[int]]:
    pairs: list[tuple[int, int]] = []
    made: list[int] = []
    for n, m in enumerate(items):
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list):
            parts = m
        else:
            parts = []
        expect(
            len(parts) == 2 and all(isinstance(p, str) for p in parts),
            path,
            f"merge {n} ({m!r}) is not 'left right' or [left, right]",
        )
        a, b = vocab.get(parts[0]), vocab.get(parts[1])
        if a is None or b is None:
            raise VocabularyError(f"{path}: merge {n} ({m!r}) uses a token not in the vocabulary")
        expect(parts[0] + parts[1] in vocab, path, f"merge {n} ({m!r}) makes a token not in the vocabulary")
        pairs.append((a, b))
        made.append(vocab[parts[0] + parts[1]])
    return pairs, made


# -- writing ----------------------------------------------------------------------------------------


def _onig_pattern(pattern: str) -> str:
    # Oniguruma (Hugging Face's regex engine) reads ``{n,m}+`` as "repeat the repeat", not as a
    # possessive; at the end of an alternative the possessive is redundant, so drop it.
    return regex.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def pre_tokenizer_for(rule: SplitRule) -> dict:
    """The ``pre_tokenizer`` object for ``rule`` (ending in ``ByteLevel``)."""
    if rule.pattern in _BYTELEVEL_RULE_PATTERNS:
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    steps: list[dict] = [
        {
            "type": "Split",
            "pattern": {"Regex": _onig_pattern(s.pattern)},
            "behavior": HF_BEHAVIOR[s.behavior],
            "invert": s.invert,
        }
        for s in rule.splits
    ]
    steps.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False})
    return steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": steps}


def to_dict(tok: Tokenizer) -> dict:
    """``tok`` as a ``tokenizer.json`` object that Hugging Face ``tokenizers`` loads.

    A rank-rule (tiktoken) vocabulary is written with its recovered merges and
    ``ignore_merges`` (a whole pre-token that is a token is used as is, as tiktoken does).
    """
    ranks = tok.mergeable_ranks
    marks = tok.word_marks
    if marks is not None:  # each token spelled with its marks, as the file's vocabulary does
        spelled = {i: marks.spell(bytes_to_token(tok.token_bytes(i)), *tok.token_marks(i)) for i in ranks.values()}
    else:
        spelled = {i: bytes_to_token(b) for b, i in ranks.items()}
    vocab = {spelled[i]: i for i in sorted(spelled)}
    # Added tokens go in the model's vocab too: otherwise Hugging Face renumbers them after it.
    cut = {**tok.added_tokens, **tok.special_tokens}
    for s, i in sorted(cut.items(), key=lambda x: x[1]):
        vocab.setdefault(s, i)
    merge_strings = [[spelled[a], spelled[b]] for a, b in tok.merges]
    flags = tok.added_options
    added = [
        {
            "id": i,
            "content": s,
            "single_word": flags.get(s, PLAIN)[2],
            "lstrip": flags.get(s, PLAIN)[0],
            "rstrip": flags.get(s, PLAIN)[1],
            "normalized": flags.get(s, PLAIN)[3],
            "special": s in tok.special_tokens,
        }
        for s, i in sorted(cut.items(), key=lambda x: x[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": to_hf(tok.normalizer),
        "pre_tokenizer": pre_tokenizer_for(tok.split_rule),
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None if tok.unk_id is None else _unk_text(tok, tok.unk_id),
            "continuing_subword_prefix": marks.prefix or None if marks is not None else None,
            "end_of_word_suffix": marks.suffix or None if marks is not None else None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": bool(tok.ignore_merges or tok.uses_rank_rule),
            "vocab": vocab,
            "merges": merge_strings,
        },
    }


def _unk_text(tok: Tokenizer, i: int) -> str:
    for text, j in (*tok.special_tokens.items(), *tok.added_tokens.items()):
        if j == i:
            return text
    return bytes_to_token(tok.token_bytes(i))


def dumps(tok_or_dict: Tokenizer | dict) -> bytes:
    obj = to_dict(tok_or_dict) if isinstance(tok_or_dict, Tokenizer) else tok_or_dict
    return json.dumps(obj, ensure_ascii=False, indent=1).encode("utf-8")


def save(tok: Tokenizer, path: Path) -> list[str]:
    """Write ``tok`` as a ``tokenizer.json`` (atomically); it keeps everything (no notes)."""
    atomic_write(path, dumps(tok))
    return []
