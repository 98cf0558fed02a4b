"""BPE with word marks (``end_of_word_suffix``, ``continuing_subword_prefix``): byte-level
tokenizer.json files encode exactly as Hugging Face ``tokenizers`` does, and a token's marks
are shown beside its text, never as text."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats import load_path, save
from bpeinspect.core.word_marks import WordMarks
from tests.core.corpus import ADVERSARIAL, LONG_RUNS, PROSE, code_samples, taylorswift

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

MARKS = {
    "suffix": {"end_of_word_suffix": "</w>"},
    "prefix": {"continuing_subword_prefix": "##"},
    "both": {"end_of_word_suffix": "</w>", "continuing_subword_prefix": "##"},
    "another-suffix": {"end_of_word_suffix": "@@"},
}


def texts() -> list[str]:
    return PROSE + ADVERSARIAL + LONG_RUNS + code_samples(30_000) + ["<|endoftext|> x <|endoftext|>"]


@functools.cache
def trained(kind: str, unk: bool = False) -> Path:
    """A byte-level BPE with ``kind``'s marks, trained by Hugging Face on prose, saved."""
    options = MARKS[kind]
    model = models.BPE(unk_token="<unk>" if unk else None, **options)
    hf = tokenizers.Tokenizer(model)
    hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.BPEDecoder(suffix=options.get("end_of_word_suffix", "</w>"))
    trainer = trainers.BpeTrainer(
        vocab_size=900,
        special_tokens=["<|endoftext|>", *(["<unk>"] if unk else [])],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()[:200],  # some bytes left without a symbol
        show_progress=False,
        **options,
    )
    hf.train_from_iterator([taylorswift()[:60_000], *PROSE], trainer)
    folder = Path(__import__("tempfile").mkdtemp())
    hf.save(str(folder / "tokenizer.json"))
    return folder / "tokenizer.json"


@pytest.mark.parametrize("unk", [False, True], ids=["dropped", "unk"])
@pytest.mark.parametrize("kind", list(MARKS))
def test_encodings_are_hugging_faces(kind, unk):
    path = trained(kind, unk)
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = load_path(path)
    assert tok.word_marks == WordMarks(MARKS[kind].get("end_of_word_suffix", ""),
                                       MARKS[kind].get("continuing_subword_prefix", ""))
    for text in texts():
        want = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, allowed_special="all") == want, text[:60]


@pytest.mark.parametrize("kind", ["suffix", "both"])
def test_ignore_merges_looks_the_bare_word_up_as_hugging_face_does(kind, tmp_path):
    obj = json.loads(trained(kind).read_text(encoding="utf-8"))
    obj["model"]["ignore_merges"] = True
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    hf, tok = tokenizers.Tokenizer.from_file(str(path)), load_path(path)
    for text in PROSE + ADVERSARIAL:
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, text[:60]


def test_clip_style_tokens_are_their_text_and_a_word_end():
    tok = load_path(trained("suffix"))
    ids = tok.encode("the weather")
    assert b"".join(tok.token_bytes(i) for i in ids) == b"the weather"
    last = ids[-1]
    assert tok.token_marks(last) == (False, True)
    assert not tok.token_bytes(last).endswith(b"</w>")
    assert tok.shown_with_marks(last, "x") == "x⌋"
    assert all(tok.token_marks(i) == (False, False) for i in tok.encode("xy")[:-1])


def test_offsets_cover_the_text_not_the_marks():
    tok = load_path(trained("both"))
    text = "Hello, wonderful world!  Twice: wonderful."
    enc = tok.encode_with_offsets(text)
    assert enc.ids == tok.encode(text)
    pieces = [text[a:b] for a, b in zip(enc.char_starts, enc.char_ends)]
    assert "".join(pieces) == text
    assert [tok.token_bytes(i) for i in enc.ids] == [p.encode() for p in pieces]


def test_decode_puts_a_space_where_a_word_ends_unless_the_text_kept_one():
    tok = load_path(trained("suffix"))
    assert tok.decode(tok.encode("The quick brown fox")) == "The quick brown fox"
    assert tok.decode(tok.encode("dog; cat")) == "dog ; cat"  # two words: the marks cannot tell
    assert tok.decode(tok.encode("one  two\n")) == "one  two\n"  # the spaces the pre-tokens kept


def test_prefix_decode_starts_words_with_a_space():
    tok = load_path(trained("prefix"))
    assert tok.decode(tok.encode("tokens join again")) == "tokens join again"
    assert tok.decode(tok.encode("a,b")) == "a , b"


def test_saved_tokenizer_json_keeps_the_marks(tmp_path):
    for kind, options in MARKS.items():
        tok = load_path(trained(kind))
        out = save(tok, tmp_path / f"{kind}.hf.json")
        model = json.loads(out.read_text(encoding="utf-8"))["model"]
        assert model["end_of_word_suffix"] == (options.get("end_of_word_suffix") or None)
        hf = tokenizers.Tokenizer.from_file(str(out))
        for text in PROSE[:8]:
            assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text), (kind, text)


@pytest.mark.parametrize("name", ["x.tiktoken", "x.json", "x.model"])
def test_formats_without_word_marks_refuse_to_save_them(tmp_path, name):
    tok = load_path(trained("suffix"))
    with pytest.raises(VocabularyError, match="cannot store word marks"):
        save(tok, tmp_path / name)


def test_merge_trees_show_marks_on_their_leaves():
    tok = load_path(trained("suffix"))
    (word,) = tok.encode(" the")
    tree = tok.merge_graph
    left, right = tree.parents(word)
    assert tok.token_marks(right) == (False, True) and tok.token_marks(left) == (False, False)
    assert tok.token_bytes(left) + tok.token_bytes(right) == b" the"


def test_other_models_have_no_marks():
    tok = load_tokenizer("gpt2")
    assert tok.word_marks is None and tok.token_marks(31373) == (False, False)
    assert tok.decode(tok.encode("hello world")) == "hello world"


def test_char_level_marked_models_are_refused_naming_the_option(tmp_path):
    obj = {
        "model": {"type": "BPE", "vocab": {"a": 0, "b</w>": 1}, "merges": [], "end_of_word_suffix": "</w>"},
        "pre_tokenizer": {"type": "Metaspace"},
    }
    p = tmp_path / "tokenizer.json"
    p.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(VocabularyError, match="end_of_word_suffix"):
        load_path(p)


@pytest.mark.parametrize("kind", ["suffix", "both"])
def test_tokens_met_inside_words_are_not_called_unreachable(kind):
    from bpeinspect.core.analysis.vocab import unreachable_tokens

    tok = load_path(trained(kind))
    flagged = {u.id for u in unreachable_tokens(tok)}
    seen = {i for text in PROSE + [taylorswift()[:60_000]] for i in tok.encode(text)}
    inside = [i for i in seen if not tok.token_marks(i)[1]]  # tokens that do not end their word
    assert inside and not flagged & seen


def test_a_model_with_word_marks_travels_to_child_processes_whole():
    import pickle

    from bpeinspect.core.analysis import shipping

    tok = load_path(trained("both", unk=True))
    back = pickle.loads(pickle.dumps(shipping.Shipped(tok)))
    assert back.word_marks == tok.word_marks and back.unk_id == tok.unk_id
    for text in PROSE:
        assert back.encode(text) == tok.encode(text)


def test_a_prefix_whose_merges_make_missing_tokens_is_refused_naming_it(tmp_path):
    save(load_tokenizer("gpt2"), tmp_path / "tokenizer.json")
    obj = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    obj["model"]["continuing_subword_prefix"] = "##"  # GPT-2's merges know no prefix
    p = tmp_path / "prefixed.hf.json"
    p.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(VocabularyError, match="continuing_subword_prefix '##' dropped from its right part"):
        load_path(p)
