"""Real vocabularies encode text full of recently assigned characters exactly as their own library.

The ``regex`` module knows Unicode 17; tiktoken's and Hugging Face's regex engines know 15.1, so
a character new in Unicode 16 or 17 (U+058B, CJK Extension J) is a letter to one and unassigned
to the others; Hugging Face's normalizers know yet other versions than Python's ``unicodedata``. Each vocabulary whose reference is tiktoken or Hugging Face ``tokenizers`` encodes
a few thousand seeded random texts drawn from all of Unicode, weighted to recent characters.
"""

from __future__ import annotations

import pytest

from tests.conformance.conftest import vocab_file
from tests.conformance.oracles import oracle_for
from tests.conformance.sources import VOCABS, Vocab
from tests.conformance.test_conformance import _compare, _load
from tests.core.corpus import recent_unicode_texts

pytestmark = pytest.mark.slow

CHECKED = [v for v in VOCABS if v.status == "exact" and (v.oracle == "hf" or v.oracle.startswith("tiktoken:"))]


@pytest.mark.parametrize("vocab", CHECKED, ids=lambda v: v.id)
def test_random_text_of_recent_characters(vocab: Vocab) -> None:
    tok = _load(vocab)
    ref, specials = oracle_for(vocab, vocab_file(vocab))
    texts = recent_unicode_texts(14, 2000)
    _compare(tok, [(t, ref(t)) for t in texts], "none" if vocab.specials == "none" else specials)
