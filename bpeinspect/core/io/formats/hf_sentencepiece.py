"""Hugging Face ``tokenizer.json`` files of SentencePiece-style BPE (``byte_fallback``, ``▁``).

Llama 1/2, Mistral, Gemma 1-3, Phi-3 and others are stored as a BPE model over pieces with
``▁`` for spaces and ``<0xXX>`` byte tokens, a normalizer that replaces spaces and prepends
``▁`` (or a ``Metaspace`` pre-tokenizer that does both), and a decoder that undoes it. They
load as a :class:`~bpeinspect.core.sentencepiece.SentencePieceBPE` of the ``huggingface``
flavour: the file's merges in their order, byte fallback per character, encodings identical
to ``tokenizers``.

Special and added tokens are cut out of the raw text first (as ``tokenizers`` does for tokens
with ``normalized: false``, which all of these files use; added tokens that are not special,
like Gemma's runs of newlines, always, special ones when allowed); the normalizer then runs
on each segment between them, so a ``Prepend`` puts a ``▁`` after every special token, as in
Hugging Face's legacy Llama files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.formats._common import MappedMerges, PieceVocabulary, expect, first_repeat, map_merges
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.normalize import Prepend, Replace, UnsupportedNormalizer, from_hf, sequence
from bpeinspect.core.sentencepiece import BYTE, CONTROL, NORMAL, SPACE
from bpeinspect.core.tokenizer import Tokenizer


class PrependUnlessPresent(Prepend):
    """Metaspace's prepend: only if the text does not already start with the replacement."""

    def normalize(self, text: str) -> str:
        return text if not text or text.startswith(self.prefix) else self.prefix + text

    def _aligned(self, text: str):
        if not text or text.startswith(self.prefix):
            return text, None, None
        return super()._aligned(text)

    def describe(self) -> str:
        return f"Prepend({self.prefix!r} unless present)"


def is_sentencepiece_style(obj: dict) -> bool:
    """True for a BPE ``tokenizer.json`` over ``▁`` pieces (byte fallback or a Metaspace step)."""
    model = obj.get("model") or {}
    steps = _types(obj.get("pre_tokenizer"), "pretokenizers")
    if "ByteLevel" in steps:
        return False  # byte-level BPE; byte_fallback has nothing to fall back to
    return bool(model.get("byte_fallback")) or "Metaspace" in steps


def _types(node: Any, key: str) -> list[str]:
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        return [t for sub in node.get(key) or [] for t in _types(sub, key)]
    return [str(node.get("type"))]


def _flat(node: Any, key: str) -> list[dict]:
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        return [x for sub in node.get(key) or [] for x in _flat(sub, key)]
    return [node]


def check_bpe_options(model: dict, path: Path | str, *, word_marks: bool = False) -> None:
    """Refuse BPE options that no file here needs and bpeinspect does not apply (``word_marks``:
    the model applies ``end_of_word_suffix`` and ``continuing_subword_prefix``)."""
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) and not word_marks:
            raise UnsupportedTokenizerError(
                f"{path}: BPE with a {key} ({model[key]!r}) over characters, not bytes, is not supported"
            )
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise UnsupportedTokenizerError(f"{path}: BPE dropout ({dropout}) makes encodings random; not supported")


def from_dict(
    obj: dict, path: Path | str, specials: dict[str, int], added: dict[str, int], options: dict | None = None
) -> Tokenizer:
    model = obj["model"]
    check_bpe_options(model, path)
    vocab = model.get("vocab")
    expect(isinstance(vocab, dict) and vocab, path, "model.vocab must be a non-empty object of token -> id")
    try:
        norm = from_hf(obj.get("normalizer"))
    except UnsupportedNormalizer as exc:
        raise UnsupportedTokenizerError(f"{path}: {exc}") from None
    first_steps: list = [norm]
    rest_steps: list = [norm]
    split_words = False
    for step in _flat(obj.get("pre_tokenizer"), "pretokenizers"):
        kind = step.get("type")
        if kind == "Metaspace":
            rep = step.get("replacement", SPACE)
            expect(isinstance(rep, str) and len(rep) == 1, path, "Metaspace replacement must be one character")
            split_words = split_words or bool(step.get("split", True))
            scheme = step.get("prepend_scheme")
            if scheme is None:  # files from before prepend_scheme
                scheme = "always" if step.get("add_prefix_space", True) else "never"
            first_steps.append(Replace(" ", rep))
            rest_steps.append(Replace(" ", rep))
            if scheme in ("first", "always"):
                first_steps.append(PrependUnlessPresent(rep))
            if scheme == "always":
                rest_steps.append(PrependUnlessPresent(rep))
        elif (
            kind == "Split"
            and step.get("pattern") == {"String": " "}
            and norm is not None
            and " " not in norm.normalize("a b")
        ):
            continue  # Gemma 3: splits on spaces the normalizer has already replaced (a no-op)
        else:
            raise UnsupportedTokenizerError(
                f"{path}: the pre-tokenizer {kind} is not supported with a SentencePiece-style BPE model"
            )
    pieces, kinds = _pieces(vocab, path)
    n = len(pieces)
    filled: list[tuple[str, int]] = []
    for content, i in (*specials.items(), *added.items()):
        if i >= n:
            pieces.extend([None] * (i + 1 - n))
            kinds.extend([CONTROL] * (i + 1 - n))
            n = i + 1
        if pieces[i] is None:
            pieces[i] = content
            filled.append((content, i))
        if content in specials:
            kinds[i] = CONTROL
    # piece text -> id, the first listing winning: the vocabulary itself (each text has one id
    # there), and the added tokens put where it has no piece
    piece_ids = dict(vocab) if filled else vocab
    for content, i in filled:
        if piece_ids.get(content, i) >= i:
            piece_ids[content] = i
    merges, made = _merges(model.get("merges"), vocab, path)
    model["merges"] = None  # the parsed strings are the largest part of a big file: free them now
    unk = model.get("unk_token")
    unk_id = vocab.get(unk) if isinstance(unk, str) else None
    decoders = _types(obj.get("decoder"), "decoders")
    strip = any(
        d.get("type") == "Strip" and d.get("content") == " " and d.get("start", 0) >= 1
        for d in _flat(obj.get("decoder"), "decoders")
    ) or any(
        d.get("type") == "Metaspace"
        and d.get("prepend_scheme", "always") != "never"
        and d.get("add_prefix_space", True)
        for d in _flat(obj.get("decoder"), "decoders")
    )
    del decoders
    p = Path(path)
    return PieceVocabulary(pieces, kinds, merges=merges, made=made).tokenizer(
        path,
        normalizer=sequence(rest_steps),
        first_normalizer=sequence(first_steps),
        special_tokens=specials,
        added_tokens=added,
        added_options=options,
        added_normalizer=norm,
        byte_fallback=bool(model.get("byte_fallback")),
        unk_id=unk_id,
        fuse_unk=bool(model.get("fuse_unk")),
        flavour="huggingface",
        strip_leading_space=strip,
        ignore_merges=bool(model.get("ignore_merges")),
        split_before_space=split_words,
        piece_ids=piece_ids,
        name=name_for(p, file_stem(p)),
        source=f"{path} (Hugging Face tokenizer.json, SentencePiece-style BPE)",
    )


# every spelling of a byte piece that byte_of_piece reads (hex digits in either case)
_HEX = "0123456789abcdefABCDEF"
_BYTE_SPELLINGS = [f"<0x{a}{b}>" for a in _HEX for b in _HEX]


def _pieces(vocab: dict[str, Any], path: Path | str) -> tuple[list[str | None], list[int]]:
    """Piece text by id (``None`` where no id is given) and the kinds (byte pieces found by
    looking up their few spellings, not by testing every piece): checked in bulk."""
    ids = list(vocab.values())
    if not all([type(i) is int for i in ids]) or min(ids) < 0:
        text, i = next((t, i) for t, i in vocab.items() if type(i) is not int or i < 0)
        raise VocabularyError(f"{path}: token {text!r} has a bad id {i!r}")
    n = max(ids) + 1
    expect(n <= 4_000_000, path, "ids run implausibly high")
    if ids == list(range(n)):  # the usual layout: listed in id order
        pieces: list[str | None] = list(vocab)
    else:
        by_id = dict(zip(ids, vocab))
        if len(by_id) != len(ids):
            dup = first_repeat(ids)
            raise VocabularyError(f"{path}: two tokens share id {dup}")
        pieces = list(map(by_id.get, range(n)))
    kinds = [NORMAL] * n
    for spelling in _BYTE_SPELLINGS:
        i = vocab.get(spelling)
        if i is not None:
            kinds[i] = BYTE
    return pieces, kinds


def _merges(items: Any, vocab: dict[str, int], path: Path | str) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges as id pairs and the id each one makes (Hugging Face refuses a merge whose
    result is not in the vocabulary, and so does this)."""
    if isinstance(items, MappedMerges):  # mapped while parsing
        return items.pairs, items.made
    expect(isinstance(items, list), path, "model.merges must be a list")
    found = map_merges(items, vocab)
    if found is not None:
        return found
    get = vocab.get
    for n, m in enumerate(items):  # find the first bad one and say what is wrong with it
        pr = m.split(" ") if isinstance(m, str) else m
        expect(
            isinstance(pr, list) and len(pr) == 2 and all(isinstance(x, str) for x in pr),
            path,
            f"merge {n} ({m!r}) is not 'left right' or [left, right]",
        )
        expect(
            get(pr[0]) is not None and get(pr[1]) is not None,
            path,
            f"merge {n} ({m!r}) uses a token not in the vocabulary",
        )
        expect(get(pr[0] + pr[1]) is not None, path, f"merge {n} ({m!r}) makes a token that is not in the vocabulary")
    raise VocabularyError(f"{path}: the merges are malformed")
