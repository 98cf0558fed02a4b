"""Every format round-trips: load -> save -> load gives identical encodings (and metadata)."""

from __future__ import annotations

import json

import pytest

from bpeinspect.core import Tokenizer, TrainingInfo, load_tokenizer
from bpeinspect.core.io.formats import detect_format, format_for_path, load_path, save
from bpeinspect.core.io.formats import minbpe as minbpe_format
from tests.paths import SHARED


def minbpe_reference(key: str = "taylorswift_regex_gpt4_1024") -> Tokenizer:
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text(encoding="utf-8"))[key]
    merges = [(a, b) for a, b, _ in ref["merges"]]
    return Tokenizer.from_merges(
        merges,
        pattern="gpt4",
        special_tokens={"<|endoftext|>": 1024, "<|fim|>": 1025},
        name="minbpe-ref",
        training=TrainingInfo({"vocab_size": 1024, "pattern": "gpt4"}, list(range(768, 0, -1))),
    )


def assert_same_encodings(a: Tokenizer, b: Tokenizer, corpus: list[str]) -> None:
    assert a.n_vocab == b.n_vocab
    assert a.special_tokens == b.special_tokens
    for text in corpus:
        assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all"), text[:80]


SOURCES = {
    "r50k": lambda vocabs: load_tokenizer("r50k_base"),
    "gpt2-hf": lambda vocabs: load_path(vocabs / "gpt2" / "tokenizer.json"),
    "minbpe": lambda vocabs: minbpe_reference(),
}
TARGETS = {
    "tiktoken": "out.tiktoken",
    "huggingface": "tokenizer.json",
    "gpt2": "encoder.json",
    "minbpe": "out.model",
    "native": "out.bpeinspect.json",
}
# (source, target) pairs a format cannot hold exactly: GPT-2's files imply GPT-2's pattern,
# minbpe needs ids 0-255 = bytes, tiktoken cannot hold explicit merges or the pattern.
SKIP = {
    ("minbpe", "gpt2"),
    ("r50k", "minbpe"),
    ("gpt2-hf", "minbpe"),
    ("gpt2-hf", "tiktoken"),
    ("minbpe", "tiktoken"),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_round_trip(vocabs, corpus, tmp_path, source, target):
    if (source, target) in SKIP:
        pytest.skip("format cannot hold this tokenizer exactly")
    tok = SOURCES[source](vocabs)
    out = tmp_path / TARGETS[target]
    assert format_for_path(out) == target
    written = save(tok, out)
    assert detect_format(written) == target
    back = load_path(written, pattern=tok.split_rule, special_tokens=tok.special_tokens)
    assert_same_encodings(tok, back, corpus)
    if target == "native":
        assert back.uses_rank_rule == tok.uses_rank_rule
        assert back.split_rule.splits == tok.split_rule.splits
        assert back.name == tok.name


def test_unsaveable_combinations_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="ids 0-255"):
        save(load_tokenizer("r50k_base"), tmp_path / "x.model")
    with pytest.raises(ValueError, match="GGUF"):
        save(load_tokenizer("r50k_base"), tmp_path / "x.gguf")
    with pytest.raises(ValueError, match="cannot tell the format"):
        save(load_tokenizer("r50k_base"), tmp_path / "x.bin")
    with pytest.raises(ValueError, match="does not exist"):
        save(load_tokenizer("r50k_base"), tmp_path / "missing" / "x.tiktoken")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_native_keeps_training_history_and_rule(tmp_path):
    tok = minbpe_reference()
    back = load_path(save(tok, tmp_path / "t.json"))
    assert back.training == tok.training
    assert back.merges == tok.merges
    assert back.split_rule is tok.split_rule  # the gpt4 preset, recognised by name


def test_native_keeps_multi_step_rules_and_ignore_merges(vocabs, tmp_path, corpus):
    from bpeinspect.core import Split, SplitRule

    base = load_path(vocabs / "gpt2" / "tokenizer.json")
    rule = SplitRule((Split(r"\p{N}", "isolated"), Split(r"\s+", "merged_with_next"), Split(r"[a-z]+", "removed", True)))
    tok = Tokenizer(base.mergeable_ranks, pattern=rule, merges=base.merges, ignore_merges=True, name="odd")
    back = load_path(save(tok, tmp_path / "odd.json"))
    assert back.split_rule.splits == rule.splits
    assert back.ignore_merges
    assert_same_encodings(tok, back, corpus[1:80])


def test_minbpe_files_match_minbpe_layout(tmp_path):
    tok = minbpe_reference()
    model = save(tok, tmp_path / "ref.model")
    lines = model.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "minbpe v1"
    assert lines[1] == tok.split_rule.pattern
    assert lines[2:5] == ["2", "<|endoftext|> 1024", "<|fim|> 1025"]
    assert lines[5] == "101 114"  # the first reference merge
    vocab = (tmp_path / "ref.vocab").read_text(encoding="utf-8").splitlines()
    assert vocab[10] == "[\\u000a] 10"
    assert vocab[256] == "[e][r] -> [er] 256"
    assert len(vocab) == 1026


def test_minbpe_vocab_file_opens_its_model(tmp_path):
    save(minbpe_reference(), tmp_path / "ref.model")
    assert load_path(tmp_path / "ref.vocab").encode("hello") == minbpe_reference().encode("hello")


def test_minbpe_foreign_pattern_uses_findall_semantics(tmp_path):
    p = tmp_path / "words.model"
    p.write_text("minbpe v1\n[a-z]+\n0\n104 105\n", encoding="utf-8")
    tok = load_path(p)
    # regex.findall keeps only the matches: the digits and spaces between words are dropped
    assert tok.encode("hi 12 hi") == [256, 256]
    assert minbpe_format.load(p).merges == [(104, 105)]


def test_lossy_saves_return_notes_on_what_the_file_does_not_keep(tmp_path):
    import warnings

    from bpeinspect.core.io.formats import save_noted

    tok = minbpe_reference()  # pair rule, GPT-4 pattern
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said in the result, never as a warning
        (rank_note,) = save_noted(tok, tmp_path / "t.tiktoken").notes
        (rule_note,) = save_noted(tok, tmp_path / "encoder.json").notes
        assert save_noted(load_tokenizer("r50k_base"), tmp_path / "ok.tiktoken").notes == ()
        assert save_noted(load_tokenizer("r50k_base"), tmp_path / "vocab.bpe").notes == ()
        assert save_noted(tok, tmp_path / "t.hf.json").notes == ()
        assert save(tok, tmp_path / "again.tiktoken") == tmp_path / "again.tiktoken"
    assert rank_note.startswith(f"{tmp_path / 't.tiktoken'}: ") and "rank rule" in rank_note
    assert rule_note.startswith(f"{tmp_path}: ") and "split rule" in rule_note
