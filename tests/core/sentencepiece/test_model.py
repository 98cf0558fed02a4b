"""SentencePiece-style BPE: models trained here with ``sentencepiece`` and ``tokenizers`` as oracles.

Real vocabularies (Llama 2 / Mistral / Gemma / Phi-3 files from public packages) are checked
by the conformance suite; these tests need no network.
"""

from __future__ import annotations

import io
import json
import unicodedata

import pytest

from bpeinspect.core import trace
from bpeinspect.core.errors import UnsupportedTokenizerError
from bpeinspect.core.io.formats import detect_format, load_path
from bpeinspect.core.io.formats.sentencepiece import parse_model
from bpeinspect.core.models import ScoreBPE
from bpeinspect.core.normalize import badge
from bpeinspect.core.sentencepiece import SentencePieceBPE
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

TRAIN = PROSE + code_samples(40_000)
TEXTS = PROSE + ADVERSARIAL + code_samples(20_000)[:3] + [unicodedata.normalize("NFD", t) for t in PROSE[:6]]


def _train_spm(tmp_path, model_type: str = "bpe", **kw) -> tuple[object, object]:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(line for t in TRAIN for line in t.splitlines() if line.strip()),
        model_writer=buf,
        vocab_size=kw.pop("vocab_size", 800),
        model_type=model_type,
        character_coverage=kw.pop("character_coverage", 0.98),
        byte_fallback=kw.pop("byte_fallback", True),
        normalization_rule_name=kw.pop("normalization_rule_name", "identity"),
        minloglevel=2,
        **kw,
    )
    path = tmp_path / f"{model_type}.model"
    path.write_bytes(buf.getvalue())
    return path, spm.SentencePieceProcessor(model_file=str(path))


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    return _train_spm(tmp_path_factory.mktemp("spm"), user_defined_symbols=["<ud>", "@@"], remove_extra_whitespaces=False)


def test_model_file_encodes_like_sentencepiece(spm_model):
    path, sp = spm_model
    assert detect_format(path) == "sentencepiece"
    tok = load_path(path)
    assert isinstance(tok.model, ScoreBPE)
    for text in [*TEXTS, "x<ud>y@@z <ud>", "a<ud><ud>b"]:
        ids = tok.encode(text, disallowed_special=())
        assert ids == sp.encode(text), text
        assert tok.decode(ids) == sp.decode(ids), text


@pytest.mark.parametrize(
    "options",
    [
        {"add_dummy_prefix": False},
        {"remove_extra_whitespaces": True},
        {"byte_fallback": False},
        {"split_digits": True, "allow_whitespace_only_pieces": True},
    ],
    ids=str,
)
def test_model_options_match_sentencepiece(tmp_path, options):
    path, sp = _train_spm(tmp_path, remove_extra_whitespaces=options.pop("remove_extra_whitespaces", False), **options)
    tok = load_path(path)
    for text in TEXTS:
        assert tok.encode(text, disallowed_special=()) == sp.encode(text), text


def test_unigram_model_is_refused_by_name(tmp_path):
    path, _ = _train_spm(tmp_path, "unigram")
    with pytest.raises(UnsupportedTokenizerError, match="Unigram") as info:
        load_path(path)
    assert str(path) in str(info.value)


def test_model_with_normalization_rules_is_refused(tmp_path):
    path, _ = _train_spm(tmp_path, normalization_rule_name="nmt_nfkc")
    with pytest.raises(UnsupportedTokenizerError, match="nmt_nfkc"):
        load_path(path)


def test_truncated_model_is_a_vocabulary_error(spm_model, tmp_path):
    from bpeinspect.core import VocabularyError

    data = spm_model[0].read_bytes()
    bad = tmp_path / "cut.model"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(VocabularyError):
        load_path(bad)
    assert parse_model(data).model_type == 2


def test_offsets_point_into_the_users_text(spm_model):
    tok = load_path(spm_model[0])
    text = "Hello  wörld\t€5 🎉 ﬁ\ncafe\u0301"
    enc = tok.encode_with_offsets(text)
    assert enc.ids == tok.encode(text, allowed_special="all")
    assert enc.text == text
    assert enc.char_ends[-1] == len(text)
    assert enc.byte_ends[-1] == len(text.encode("utf-8"))
    assert enc.utf16_ends[-1] == len(text.encode("utf-16-le")) // 2
    assert list(enc.char_starts) == sorted(enc.char_starts)
    for i in range(len(enc)):
        info = enc.token(i)
        if info.splits_char:
            continue
        span = text[info.char_span[0] : info.char_span[1]]
        shown = info.text_bytes.decode("utf-8")
        # a token shows what it covers; the first may carry the dummy prefix's space
        assert shown == span or (i == 0 and shown == " " + span), (shown, span)
    # the emoji has no piece: its four byte tokens share its one character
    group = [i for i in range(len(enc)) if text[enc.char_starts[i] : enc.char_ends[i]] == "🎉"]
    assert len(group) == 4 and all(enc.splits_char(i) for i in group)
    assert [tok.token_bytes(enc.ids[i]) for i in group] == [bytes([b]) for b in "🎉".encode()]


def test_views_work_on_a_scores_model(spm_model):
    tok = load_path(spm_model[0])
    assert tok.merge_source == "recovered from the scores"
    assert "SentencePiece" in badge(tok)[0]
    g = tok.merge_graph
    assert g.unbuildable() == [] or all(tok.kind(i) != "normal" or len(tok.piece(i)) > 1 for i in g.unbuildable())
    for i in tok.ids():
        p = g.parents(i)
        if p is not None and g.is_buildable(i):
            assert tok.merge_result(*p) == i
            assert tok.decode_tokens_bytes(p) and tok.token_bytes(p[0]) + tok.token_bytes(p[1]) == tok.token_bytes(i)
    for word in ("▁the", " quick", "▁brown"):
        tr = trace(tok, word)
        assert not tr.shortcut
        assert list(tr.result) == tok.encode_piece(word)
    hello = tok.encode("Hello")
    assert tok.decode(hello) == "Hello"
    assert tok.pre_tokens("a b") == ["▁a", "▁b"]


def _hf_sp_json(tmp_path, normalizer, pre_tokenizer, decoder, name="tokenizer.json"):
    """A Llama/Gemma-style tokenizer.json: BPE with byte_fallback over ▁ pieces, trained here."""
    from tokenizers import Tokenizer, models, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=900, special_tokens=["<unk>", "<s>", "</s>", *bytes_],
                                  limit_alphabet=120, show_progress=False)
    obj = json.loads(tok.to_str())
    obj["normalizer"], obj["pre_tokenizer"], obj["decoder"] = normalizer, pre_tokenizer, decoder
    tok = Tokenizer.from_str(json.dumps(obj))
    tok.train_from_iterator(TRAIN, trainer)
    obj = json.loads(tok.to_str())
    # byte tokens live in the vocabulary, not among the added tokens (as in Llama's file)
    obj["added_tokens"] = [a for a in obj["added_tokens"] if not a["content"].startswith("<0x")]
    path = tmp_path / name
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path, Tokenizer.from_file(str(path))


LEGACY = (
    {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                         {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
    None,
    {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                      {"type": "ByteFallback"}, {"type": "Fuse"},
                                      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
)


def _metaspace(scheme: str, split: bool) -> tuple:
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}
    return None, meta, meta


METASPACE = _metaspace("first", False)
METASPACE_SPLIT = _metaspace("always", True)
GEMMA = ({"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
         {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
         {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                           {"type": "ByteFallback"}, {"type": "Fuse"}]})


@pytest.mark.parametrize("style", [LEGACY, METASPACE, METASPACE_SPLIT, GEMMA], ids=["legacy", "metaspace",
                                                                                      "metaspace-split", "gemma"])
def test_tokenizer_json_encodes_like_hugging_face(tmp_path, style):
    path, hf = _hf_sp_json(tmp_path, *style)
    tok = load_path(path)
    assert isinstance(tok.model, ScoreBPE) and tok.merge_source == "the file's merge list"
    for text in [*TEXTS, "<s>hello</s> <s> x", "</s>"]:
        ids = tok.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids, text
        if style in (LEGACY, GEMMA):  # decoders as the real files have them
            assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False), text
        enc = tok.encode_with_offsets(text)
        assert enc.ids == ids
        assert enc.char_ends[-1] if ids else True
    g = tok.merge_graph
    merged = [i for i in tok.ids() if g.parents(i) is not None and g.is_buildable(i)]
    assert len(merged) == len(tok.merges)


def test_score_ties_go_to_the_leftmost_pair():
    # "ab" and "bc" score the same: in "abc" the leftmost pair merges
    tok = SentencePieceBPE(["<unk>", "a", "b", "c", "ab", "bc"], [2, 1, 1, 1, 1, 1], scores=[0, -9, -9, -9, -1, -1],
                           unk_id=0)
    assert tok.encode_ordinary("abc") == [4, 3]
    assert tok.encode_ordinary("xbc") == [0, 5]


def test_sentencepiece_tokenizers_are_not_written_as_byte_level_files(spm_model, tmp_path):
    from bpeinspect.core import VocabularyError
    from bpeinspect.core.io.formats import save

    tok = load_path(spm_model[0])
    for name in ("x.tiktoken", "tokenizer.json", "x.json"):
        with pytest.raises(VocabularyError, match="SentencePiece"):
            save(tok, tmp_path / name)


def test_added_tokens_that_are_not_special_are_always_cut_out(tmp_path):
    path, _ = _hf_sp_json(tmp_path, *GEMMA)
    obj = json.loads(path.read_text(encoding="utf-8"))
    new = max(obj["model"]["vocab"].values()) + 1
    obj["model"]["vocab"]["\n\n"] = new
    obj["added_tokens"].append({"id": new, "content": "\n\n", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": False, "special": False})
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = load_path(path)
    assert tok.added_tokens == {"\n\n": new}
    for text in ("a\n\nb", "x\n\n\n\ny </s>", "\n\n"):
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        enc = tok.encode_with_offsets(text, allowed_special=())
        assert new in enc.ids and enc.ids == tok.encode(text, disallowed_special=())
        assert tok.is_added(new) and not tok.is_special(new)
