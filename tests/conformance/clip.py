"""CLIP's reference: Hugging Face ``tokenizers`` built from ``bpe_simple_vocab_16e6.txt.gz`` as
transformers' ``CLIPConverter`` builds ``CLIPTokenizerFast`` (vocabulary as CLIP's
``SimpleTokenizer`` makes it, with transformers' special-token names)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest


def _bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def clip_hf(path: Path, hub_layout: bool = False):
    """The ``tokenizers.Tokenizer`` of CLIP's merge file at ``path``; ``hub_layout``: with the
    pre-tokenizer of the ``tokenizer.json`` files on the Hub (the special tokens in the split
    pattern, ByteLevel without its regex)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers
    from tokenizers.models import BPE

    lines = gzip.open(path).read().decode("utf-8").split("\n")
    merges = [tuple(m.split()) for m in lines[1 : 49152 - 256 - 2 + 1]]
    vocab = list(_bytes_to_unicode().values())
    vocab = vocab + [v + "</w>" for v in vocab] + ["".join(m) for m in merges] + ["<|startoftext|>", "<|endoftext|>"]
    hf = tokenizers.Tokenizer(
        BPE(
            vocab=dict(zip(vocab, range(len(vocab)))),
            merges=merges,
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="</w>",
            fuse_unk=False,
            unk_token="<|endoftext|>",
        )
    )
    hf.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
    split = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    if hub_layout:
        split = r"<\|startoftext\|>|<\|endoftext\|>|" + split
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(split), behavior="removed", invert=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=not hub_layout),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(["<|startoftext|>", "<|endoftext|>"])
    return hf


def transformers_decode(hf, ids: list[int]) -> str:
    """What ``CLIPTokenizerFast.decode`` gives: the ByteLevel decode, ``</w>`` as a space, stripped."""
    return hf.decode(ids).replace("</w>", " ").strip()
