"""Real vocabularies encode text full of recently assigned characters exactly as their own library.

The ``regex`` module knows Unicode 17; tiktoken's and Hugging Face's regex engines know 15.1, so
a character new in Unicode 16 or 17 (U+058B, CJK Extension J) is a letter to one and unassigned
to the others. Each vocabulary whose reference is tiktoken or Hugging Face ``tokenizers`` encodes
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
# Hugging Face's NFKC normalizer has older tables than Python's unicodedata: it leaves 72
# characters of Unicode 12.1-14.0 (U+32FF, U+10781-U+107BA, U+1FBF0-U+1FBF9...) as they are.
PENDING = {"claude": "pending: Hugging Face's NFKC is older than Python's unicodedata (issue 20 audit)"}


def _params():
    for v in CHECKED:
        marks = [pytest.mark.xfail(strict=True, reason=PENDING[v.id])] if v.id in PENDING else []
        yield pytest.param(v, id=v.id, marks=marks)


@pytest.mark.parametrize("vocab", list(_params()))
def test_random_text_of_recent_characters(vocab: Vocab) -> None:
    tok = _load(vocab)
    ref, specials = oracle_for(vocab, vocab_file(vocab))
    texts = recent_unicode_texts(14, 2000)
    _compare(tok, [(t, ref(t)) for t in texts], "none" if vocab.specials == "none" else specials)
