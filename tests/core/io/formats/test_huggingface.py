"""tokenizer.json reading and writing, checked against Hugging Face ``tokenizers`` itself."""

from __future__ import annotations

import json
import warnings

import pytest

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers  # noqa: E402

from bpeinspect.core import VocabularyError, load_tokenizer  # noqa: E402
from bpeinspect.core.errors import UnsupportedTokenizerError  # noqa: E402
from bpeinspect.core.io.formats import huggingface, load_path, save  # noqa: E402

TRAIN_SIZE = 700


def hf_ids(hf, text):
    return hf.encode(text, add_special_tokens=False).ids


def _no_surrogates(text):
    return not any("\ud800" <= c <= "\udfff" for c in text)


def assert_same(tok, hf, corpus):
    for text in corpus:
        if not _no_surrogates(text):
            continue  # HF cannot take lone surrogates (Rust strings)
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text), text[:80]


def test_shared_gpt2_tokenizer_json_matches_hf(vocabs, corpus):
    path = vocabs / "gpt2" / "tokenizer.json"
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert_same(load_path(path), hf, corpus)


def _train(corpus, tmp_path, pre, *, ignore_merges=False, added=(), specials=("<|end|>",), whole_text=True):
    hf = tokenizers.Tokenizer(models.BPE(ignore_merges=ignore_merges))
    hf.pre_tokenizer = pre
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TRAIN_SIZE,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = (corpus[:1] if whole_text else corpus[1:-300]) + corpus[-300:]
    hf.train_from_iterator([t for t in texts if _no_surrogates(t)], trainer=trainer)
    if added:
        hf.add_tokens(list(added))
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    return hf, path


LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
NO_BL_REGEX = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)

PRE_TOKENIZERS = {
    "bytelevel": lambda: pre_tokenizers.ByteLevel(add_prefix_space=False),
    "llama3-split": lambda: pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3), "isolated"), NO_BL_REGEX]),
    "digits+split": lambda: pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.Split(Regex(r"\s+|[^\s\w]+"), "merged_with_next"),
            NO_BL_REGEX,
        ]
    ),
    "contiguous-digits": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    ),
    "string-split-prev": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(" ", "merged_with_previous"), NO_BL_REGEX]
    ),
    "inverted-removed": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}+|[^\p{L}\p{N}]"), "removed", invert=True), NO_BL_REGEX]
    ),
    "contiguous-punct": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(r"[^\w\s]"), "contiguous"), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    ),
    "no-split": lambda: NO_BL_REGEX,
}


@pytest.mark.parametrize("ignore_merges", [False, True])
@pytest.mark.parametrize("kind", sorted(PRE_TOKENIZERS))
def test_trained_hf_tokenizer_loads_with_identical_encodings(corpus, tmp_path, kind, ignore_merges):
    # Without any split the whole article would be one 185 kB piece: quadratic for both sides.
    whole = kind != "no-split"
    hf, path = _train(corpus, tmp_path, PRE_TOKENIZERS[kind](), ignore_merges=ignore_merges, whole_text=whole)
    tok = load_path(path)
    assert tok.ignore_merges is ignore_merges
    assert not tok.uses_rank_rule
    assert_same(tok, hf, [t for t in corpus[1:] if whole or len(t) < 1500])
    if whole:
        assert_same(tok, hf, corpus[:1])


def test_added_tokens_special_and_not(corpus, tmp_path):
    hf, path = _train(corpus, tmp_path, PRE_TOKENIZERS["llama3-split"](), added=["foo bar", "<tag>"])
    tok = load_path(path)
    assert "<|end|>" in tok.special_tokens and not {"foo bar", "<tag>"} & set(tok.special_tokens)
    assert {"foo bar", "<tag>"} == set(tok.added_tokens)
    texts = ["say foo bar<tag> now <|end|>", "foo barfoo bar", *corpus[1:60]]
    assert_same(tok, hf, texts)
    # added tokens that are not special are matched in ordinary encoding too; specials are not
    ordinary = tok.encode_ordinary("say foo bar<tag> now <|end|>")
    assert tok.added_tokens["foo bar"] in ordinary and tok.added_tokens["<tag>"] in ordinary
    assert tok.special_tokens["<|end|>"] not in ordinary
    assert [tok.token_kind(tok.token_id(s)) for s in ("<|end|>", "<tag>")] == ["special", "added"]
    # written back, the two kinds stay apart
    back = load_path(save(tok, tmp_path / "back.hf.json"))
    assert (back.special_tokens, back.added_tokens) == (tok.special_tokens, tok.added_tokens)


def test_merges_as_strings_and_pairs_give_the_same_tokenizer(corpus, tmp_path):
    _, path = _train(corpus, tmp_path, PRE_TOKENIZERS["bytelevel"]())
    obj = json.loads(path.read_text(encoding="utf-8"))
    merges = obj["model"]["merges"]
    as_strings = [" ".join(m) if isinstance(m, list) else m for m in merges]
    as_pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    a = huggingface.from_dict({**obj, "model": {**obj["model"], "merges": as_strings}}, "a")
    b = huggingface.from_dict({**obj, "model": {**obj["model"], "merges": as_pairs}}, "b")
    assert a.merges == b.merges
    assert all(a.encode_ordinary(t) == b.encode_ordinary(t) for t in corpus[1:60])


@pytest.mark.parametrize("builtin", ["r50k_base", "cl100k_base"])
def test_written_tokenizer_json_loads_in_hf_with_identical_encodings(corpus, tmp_path, builtin):
    tok = load_tokenizer(builtin)
    out = save(tok, tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(out))
    texts = corpus[1:]  # every paragraph, edge case and random text
    assert_same(tok, hf, texts)
    back = load_path(out)
    for t in texts:
        assert back.encode(t, allowed_special="all") == tok.encode(t, allowed_special="all")


@pytest.mark.slow
def test_written_o200k_tokenizer_json_matches_hf(corpus, tmp_path):
    tok = load_tokenizer("o200k_base")
    hf = tokenizers.Tokenizer.from_file(str(save(tok, tmp_path / "tokenizer.json")))
    assert_same(tok, hf, corpus[1:])


def test_written_split_sequence_matches_hf(corpus, tmp_path):
    hf, path = _train(corpus, tmp_path, PRE_TOKENIZERS["digits+split"](), ignore_merges=True)
    tok = load_path(path)
    out = save(tok, tmp_path / "again.hf.json")
    hf2 = tokenizers.Tokenizer.from_file(str(out))
    assert_same(tok, hf2, corpus[1:])


def _gpt2_obj(vocabs):
    return json.loads((vocabs / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda o: o["model"].update(type="WordPiece"), "WordPiece"),
        (lambda o: o["model"].update(type="Unigram"), "Unigram"),
        (lambda o: o["model"].update(byte_fallback=True), "byte_fallback"),
        (lambda o: o.update(normalizer={"type": "BertNormalizer"}), "BertNormalizer"),
        (lambda o: o.update(normalizer={"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Nmt"}]}), "Nmt"),
        (lambda o: o["pre_tokenizer"].update(add_prefix_space=True), "add_prefix_space"),
        (lambda o: o.update(pre_tokenizer={"type": "Whitespace"}), "Whitespace"),
        (lambda o: o.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}, {"type": "Punctuation"}]}),
         "Punctuation"),
        (lambda o: o["model"].update(dropout=0.1), "dropout"),
    ],
)
def test_unsupported_models_are_refused_by_name(vocabs, tmp_path, change, named):
    obj = _gpt2_obj(vocabs)
    change(obj)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(UnsupportedTokenizerError, match=named) as info:
        load_path(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o["model"]["merges"].append("Ġzzzq Ġqq"), "not in the vocabulary"),
        (lambda o: o["model"]["merges"].append(["a"]), "not 'left right'"),
        (lambda o: o["model"]["vocab"].update({"Ġx": "seven"}), "bad id"),
        (lambda o: o["model"].update(vocab=[]), "model.vocab"),
        (lambda o: o["added_tokens"].append({"id": 5, "content": "<|endoftext|>"}), "twice"),
        (lambda o: o["model"]["vocab"].pop("!"), "not in the vocabulary"),
    ],
)
def test_damaged_tokenizer_json_names_the_problem(vocabs, tmp_path, change, message):
    obj = _gpt2_obj(vocabs)
    change(obj)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(VocabularyError, match=message):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load_path(path)
