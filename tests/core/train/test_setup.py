"""Training set-up helpers: corpus summaries, pattern previews, sizes, prefix vocabularies."""

from __future__ import annotations

import pytest

from bpeinspect.core import PRESETS, PatternError, TrainingRun, train_tokenizer
from bpeinspect.core.train.corpus import CorpusError
from bpeinspect.core.train.setup import (
    detect_scripts,
    format_merge,
    parse_sizes,
    parse_special_tokens,
    prefix_tokenizer,
    preview_split,
    summarize_path,
)
from tests.core.corpus import PROSE
from tests.core.corpus import taylorswift as read_taylorswift

SAMPLE = "Hello world!! It's 2026 —  naïve\n\n  café 12345 Привет 日本語 😀\t\r\nend  "


@pytest.mark.parametrize("name", list(PRESETS))
def test_preview_is_the_rule_split(name):
    assert preview_split(name, SAMPLE) == PRESETS[name].pieces(SAMPLE)


@pytest.mark.parametrize("pattern", [r"\s+", r"\p{L}+|\d", r"(?=x)", r"\w+|\W"])
def test_preview_of_a_custom_regex_keeps_every_character(pattern):
    from bpeinspect.core import resolve_rule

    pieces = preview_split(pattern, SAMPLE)
    assert "".join(pieces) == SAMPLE
    assert pieces == resolve_rule(pattern).pieces(SAMPLE)


def test_preview_without_splitting():
    assert preview_split(None, SAMPLE) == [SAMPLE]


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", ""])
def test_bad_patterns_raise_pattern_error(pattern):
    with pytest.raises(PatternError):
        preview_split(pattern, SAMPLE)


def test_a_runaway_pattern_times_out_with_a_message():
    with pytest.raises(PatternError, match="takes over"):
        preview_split(r"(?:(a|aa)+)+b", "a" * 40, timeout=0.05)


def test_detect_scripts():
    got = dict(detect_scripts("Привет мир, hello world, Ελληνικά 日本語"))
    assert set(got) == {"Cyrillic", "Latin", "Greek", "Han"}
    assert got["Cyrillic"] > got["Greek"] > got["Han"]
    assert detect_scripts("123 !! 😀") == []
    assert detect_scripts("abc" * 100 + "ж") == [("Latin", 1.0)]  # under 2% is left out


def test_detect_scripts_names_every_script_the_package_knows_and_letters_of_none_as_other():
    # the one classifier of the package: Oriya is named, as in the Languages view, and the
    # micro sign is a letter of the Common script
    assert detect_scripts("ଓଡ଼ିଆ abc µµ") == [("Latin", 0.38), ("Oriya", 0.38), ("Other", 0.25)]


def test_summarize_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("hello world " * 10, encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("привет мир " * 10, encoding="utf-8")
    (tmp_path / ".hidden").write_text("ignored", encoding="utf-8")
    e = summarize_path(tmp_path)
    assert e.files == 2
    assert e.size == len(("hello world " * 10).encode()) + len(("привет мир " * 10).encode())
    assert {s for s, _ in e.scripts} == {"Latin", "Cyrillic"}
    assert e.problem is None


def test_summarize_reports_a_named_non_utf8_file_and_counts_a_folders_skipped_one(tmp_path):
    (tmp_path / "good.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 latin-1")
    assert summarize_path(tmp_path / "bad.txt").problem == "bad.txt: not UTF-8 text (byte 0xe9 at offset 3)"
    e = summarize_path(tmp_path)  # in a folder, the file is skipped: no reason to refuse the folder
    assert (e.problem, e.files, e.skipped) == (None, 1, 1)


def test_summarize_does_not_blame_a_character_cut_by_the_sample(tmp_path):
    p = tmp_path / "long.txt"
    p.write_text("é" * 1000, encoding="utf-8")
    e = summarize_path(p, sample_bytes=1001)  # ends in the middle of an "é"
    assert e.problem is None and e.scripts == [("Latin", 1.0)]


def test_summarize_missing_path(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        summarize_path(tmp_path / "nope")


def test_empty_folder_is_a_problem(tmp_path):
    assert summarize_path(tmp_path).problem == "the folder holds no text files"


def test_parse_sizes_and_specials():
    assert parse_sizes(" 4k; 300 1k,1024 ") == [300, 1000, 1024, 4000]
    assert parse_sizes("100k") == [100_000]  # k is a thousand: "fewer than the 102,400 asked for" read 100k
    assert parse_sizes("100000, 102400") == [100_000, 102_400]
    # thousands separators, as the app writes sizes, read as one number, not as 100 and 0
    assert parse_sizes("100,000") == [100_000]
    assert parse_sizes("1,000,000, 4k") == [4000, 1_000_000]
    assert parse_sizes("256,512") == [256_512]  # grouped thousands, by the documented rule
    assert parse_sizes("300,1024 2,00") == [0, 2, 300, 1024]  # not groups of three: separate sizes
    for bad in ("", "abc", "1.5k", "-3"):
        with pytest.raises(ValueError):
            parse_sizes(bad)
    assert parse_special_tokens(" <|a|>\n<|b|>, <|a|> ") == ["<|a|>", "<|b|>"]


def test_format_merge():
    assert format_merge(b"\n", b"\n") == "[↵][↵] → [↵↵]"
    assert format_merge(b" \xe6", b"\x97") == "[␣<e6>][<97>] → [␣<e6 97>]"


@pytest.mark.parametrize("tie_break", ["first-seen", "hf"])
@pytest.mark.parametrize("specials", [[], ["<|endoftext|>", "<|pad|>"]])
def test_prefixes_equal_trainings_to_the_smaller_sizes(tie_break, specials, taylorswift):
    run = TrainingRun(taylorswift, 1500, pattern="gpt4", special_tokens=specials, tie_break=tie_break)
    for _ in run.reports():
        pass
    for size in (260, 700, 1024, 1500):
        direct = train_tokenizer(taylorswift, size, pattern="gpt4", special_tokens=specials, tie_break=tie_break)
        pre = prefix_tokenizer(run.merges, size, pattern="gpt4", special_tokens=specials, tie_break=tie_break)
        assert pre.merges == direct.merges
        assert pre.mergeable_ranks == direct.mergeable_ranks
        assert pre.special_tokens == direct.special_tokens
        assert pre.n_vocab == size
        assert pre.training.counts == direct.training.counts


@pytest.mark.parametrize("tie_break", ["first-seen", "hf"])
def test_prefixes_with_a_re_made_token(tie_break, monkeypatch):
    # minbpe and Hugging Face may make the same bytes twice ("a"+"bc" after "ab"+"c"); the
    # trainer's core tests fake such an engine, and so do we: the cut must follow the
    # trainer (a number of merges for minbpe, a number of tokens for Hugging Face, whose
    # engine gives the re-made token its existing id).
    from bpeinspect.core.train import run as train_module
    from bpeinspect.core.train.engine import HF_BYTE_ORDER

    order = list(HF_BYTE_ORDER) if tie_break == "hf" else list(range(256))  # engine id -> byte
    a, b, c = (order.index(ord(ch)) for ch in "abc")
    again = 258 if tie_break == "hf" else 259

    class Remaking:
        def __init__(self, *args) -> None:
            self.token_bytes = [bytes([i]) for i in order] + [b"ab", b"bc", b"abc", b"abc", b"abcabc"]
            self.plan = [(a, b, 256, 9), (b, c, 257, 8), (256, c, 258, 7), (a, 257, again, 6), (again, 258, 260, 5)]
            if tie_break == "hf":
                self.token_bytes = [*self.token_bytes[:259], b"abcabc"]
                self.plan[-1] = (258, 258, 259, 5)
            self.corpus_bytes, self.tokens, self.next_id = 30, 10, 256

        def step(self):
            if not self.plan:
                return None
            made = self.plan.pop(0)
            self.next_id = max(self.next_id, made[2] + 1)
            return made

    monkeypatch.setattr(train_module, "MergeEngine", Remaking)

    def trained(size):
        run = TrainingRun.from_counts({b"abc": 10}, size, pattern=None, tie_break=tie_break)
        list(run.reports())
        return run

    full = trained(300)
    assert [m.id for m in full.merges] == [256, 257, 258, 258, 259]
    for size in range(257, 261):
        direct = trained(size).tokenizer()
        pre = prefix_tokenizer(full.merges, size, pattern=None, tie_break=tie_break)
        assert pre.merges == direct.merges, size
        assert pre.mergeable_ranks == direct.mergeable_ranks, size
        assert pre.training.counts == direct.training.counts, size


@pytest.fixture(scope="module")
def taylorswift():
    return PROSE + [read_taylorswift()]
