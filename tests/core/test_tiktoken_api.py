"""Every tokenizer answers tiktoken's ``Encoding`` API as tiktoken does, for each of tiktoken's
encodings (the built-ins and their variants), on the broad corpus."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from tests.core.corpus import ADVERSARIAL, PROSE, all_texts
from tests.reference import ALL_NAMES, tiktoken_encoding


@pytest.fixture(scope="module", params=ALL_NAMES)
def pair(request):
    return load_tokenizer(request.param), tiktoken_encoding(request.param)


def test_the_vocabulary_is_described_as_tiktoken_describes_it(pair) -> None:
    ours, ref = pair
    assert ours.name == ref.name
    assert (ours.n_vocab, ours.max_token_value, ours.eot_token) == (ref.n_vocab, ref.max_token_value, ref.eot_token)
    assert ours.special_tokens_set == ref.special_tokens_set
    assert ours.token_byte_values() == ref.token_byte_values()


def test_texts_encode_and_decode_as_tiktoken_does(pair) -> None:
    ours, ref = pair
    for text in PROSE + ADVERSARIAL:
        ids = ref.encode(text, allowed_special="all")
        assert ours.encode(text, allowed_special="all") == ids, text[:80]
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), text[:80]
        assert ours.decode_with_offsets(ids) == ref.decode_with_offsets(ids), text[:80]
        assert list(ours.encode_to_numpy(text, disallowed_special=())) == list(ref.encode_to_numpy(text, disallowed_special=()))


def test_batches_give_what_each_text_gives(pair) -> None:
    ours, ref = pair
    texts = all_texts()[:200]
    batch = ref.encode_batch(texts, disallowed_special=())
    assert ours.encode_batch(texts, disallowed_special=()) == batch
    assert ours.encode_ordinary_batch(texts) == ref.encode_ordinary_batch(texts)
    assert ours.decode_batch(batch) == ref.decode_batch(batch)
    assert ours.decode_bytes_batch(batch) == ref.decode_bytes_batch(batch)


def test_every_id_round_trips_through_its_single_token_bytes(pair) -> None:
    ours, ref = pair
    for token in range(ref.n_vocab):
        try:
            expected = ref.decode_single_token_bytes(token)
        except KeyError:
            with pytest.raises(KeyError):
                ours.decode_single_token_bytes(token)
            continue
        assert ours.decode_single_token_bytes(token) == expected
        assert ours.encode_single_token(expected) == ref.encode_single_token(expected) == token


def test_text_that_is_no_single_token_is_a_key_error_as_in_tiktoken(pair) -> None:
    ours, ref = pair
    for text in ("hello world, again", b"\xff\xfe\xfd\xfc", "<|not a special token|>"):
        with pytest.raises(KeyError):
            ref.encode_single_token(text)
        with pytest.raises(KeyError):
            ours.encode_single_token(text)


def test_special_text_is_refused_with_a_value_error_as_in_tiktoken(pair) -> None:
    ours, ref = pair
    text = "say <|endoftext|> now"
    with pytest.raises(ValueError):
        ref.encode(text)
    with pytest.raises(ValueError):
        ours.encode(text)
    with pytest.raises(ValueError):
        ours.encode_batch(["fine", text])


def test_a_pickled_tokenizer_encodes_and_decodes_as_the_original(pair) -> None:
    import pickle

    ours, _ref = pair
    again = pickle.loads(pickle.dumps(ours))
    assert again is not ours and again.name == ours.name and again.special_tokens == ours.special_tokens
    for text in PROSE[:20] + ADVERSARIAL:
        assert again.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")
    known = set(ours.ids())
    ids = [i for i in range(0, ours.n_vocab, 101) if i in known]
    assert again.decode_bytes(ids) == ours.decode_bytes(ids)
